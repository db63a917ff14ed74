/**
 * What a project's dependency files say about one Python package's release, read as text (never run or installed):
 * - lock files (uv.lock, poetry.lock, pdm.lock): the resolved `version` of the `[[package]]` with that name;
 * - requirements files: one requirement per line (pip's PEP 508 form: name, extras, specifiers, `;` marker);
 * - pyproject.toml, setup.py, setup.cfg: requirement strings ("bitsandbytes==0.42.0", PEP 621 and setuptools), and
 *   Poetry's `name = "0.42.0"`, `"^0.42"`, `"~0.42.0"` or `{ version = … }` tables;
 * - conda environment files: `- name=0.42.0` (conda's match) or `- name==0.42.0` (conda or its pip list).
 * A requirement whose environment marker names platforms other than Linux (`sys_platform == 'darwin'`) is skipped:
 * training GPUs run Linux. Names compare as pip normalizes them (PEP 503: case, `-`, `_` and `.` alike).
 */

/** One requirement of the package: its specifier set in PEP 440 form, and where it is written (0-based line, columns). */
export interface PackagePin {
  readonly spec: string;
  readonly text: string;
  readonly line: number;
  readonly start: number;
  readonly end: number;
  /** From a lock file: the release that was resolved and installed. */
  readonly locked: boolean;
}

/** The dependency files looked for in a folder, lock files first (they say what is installed). */
export const PIN_FILES: readonly string[] = [
  'uv.lock', 'poetry.lock', 'pdm.lock', 'requirements.txt', 'pyproject.toml', 'setup.cfg', 'setup.py', 'environment.yml', 'environment.yaml',
];

/** A name as pip compares it (PEP 503). */
const normal = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** Whether an environment marker can hold on Linux (markers that name no platform always can). */
export function markerAllowsLinux(marker: string): boolean {
  const eq: string[] = [], ne: string[] = [];
  for (const m of marker.matchAll(/\b(sys_platform|platform_system)\s*(==|!=)\s*['"]([^'"]*)['"]/g)) (m[2] === '==' ? eq : ne).push(m[3].toLowerCase());
  return (eq.length === 0 || eq.some((v) => v.startsWith('linux'))) && !ne.some((v) => v.startsWith('linux'));
}

/** Poetry's version constraint as PEP 440 specifiers ("^0.42.1" → ">=0.42.1,<0.43.0"); undefined when not one of its forms. */
function poetrySpec(c: string): string | undefined {
  const s = c.trim();
  const m = /^([\^~]|[<>=!~]=?|==)?\s*(\d+(?:\.\d+)*)(\.\*)?$/.exec(s);
  if (!m) return /^[<>=!~]/.test(s) ? s : undefined;
  const [, op, v, star] = m;
  const nums = v.split('.').map(Number);
  if (op === '^') {
    // Caret: the first non-zero number may not change (^0.42.1 → <0.43.0; ^1.2 → <2.0).
    const i = Math.max(0, nums.findIndex((x) => x !== 0));
    const hi = nums.slice(0, i + 1);
    hi[i] += 1;
    return `>=${v},<${hi.join('.')}`;
  }
  if (op === '~') {
    // Tilde: only the last given number may grow (~0.42.1 → <0.43; ~1 → <2).
    const hi = nums.length > 1 ? nums.slice(0, nums.length - 1) : [...nums];
    hi[hi.length - 1] += 1;
    return `>=${v},<${hi.join('.')}`;
  }
  return `${op && op !== '=' ? op : '=='}${v}${star ?? ''}`;
}

/** A requirement string ("bitsandbytes[extra]>=0.42,<0.43; sys_platform=='linux'") for `name`: its specifier set. */
function requirementSpec(req: string, name: string): string | undefined {
  const m = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(\([^)]*\)|[^;@]*)?\s*(;.*)?$/.exec(req);
  if (!m || normal(m[1]) !== name) return undefined;
  if (m[4] && !markerAllowsLinux(m[4])) return undefined;
  return (m[3] ?? '').replace(/[()\s]/g, '');
}

/**
 * The requirements of package `pkg` in a dependency file, by the file's name; [] when it names none. A lock file gives
 * `==` its resolved version.
 */
export function findPins(fileName: string, text: string, pkg: string): PackagePin[] {
  const name = normal(pkg);
  const file = fileName.replace(/^.*[\\/]/, '').toLowerCase();
  const lines = text.split(/\r?\n/);
  const out: PackagePin[] = [];
  const add = (spec: string, line: number, start: number, end: number, locked = false) =>
    out.push({ spec, text: lines[line].slice(start, end).trim(), line, start, end, locked });
  if (file.endsWith('.lock')) {
    // [[package]] tables: name = "…" then version = "…" before the next table.
    let inPkg = false;
    for (let i = 0; i < lines.length; i++) {
      const l = lines[i];
      if (/^\s*\[/.test(l)) { inPkg = false; continue; }
      const n = /^\s*name\s*=\s*"([^"]+)"/.exec(l);
      if (n) { inPkg = normal(n[1]) === name; continue; }
      const v = inPkg ? /^\s*version\s*=\s*"([^"]+)"/.exec(l) : null;
      if (v) { add(`==${v[1]}`, i, 0, l.length, true); inPkg = false; }
    }
    return out;
  }
  const env = /^environment\.ya?ml$/.test(file);
  const req = /\.txt$|\.in$/.test(file);
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    const hash = l.search(/(^|\s)#/);
    const code = hash >= 0 ? l.slice(0, hash) : l;
    if (req) {
      if (/^\s*-/.test(code)) continue;
      const spec = requirementSpec(code, name);
      if (spec !== undefined) add(spec, i, code.search(/\S/), code.trimEnd().length);
      continue;
    }
    if (env) {
      const m = /^\s*-\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(.*)$/.exec(code);
      if (!m || normal(m[1]) !== name) continue;
      const c = m[2].trim();
      // conda's "name=0.42.0" matches 0.42.0 and its builds; "name" alone pins nothing.
      const spec = /^=[^=]/.test(c) ? `==${c.slice(1).split('=')[0]}` : c.replace(/\s/g, '');
      add(spec, i, code.search(/-/), code.trimEnd().length);
      continue;
    }
    // pyproject.toml, setup.py, setup.cfg: quoted requirement strings, then Poetry's tables.
    let found = false;
    for (const q of code.matchAll(/"([^"\n]*)"|'([^'\n]*)'/g)) {
      const spec = requirementSpec(q[1] ?? q[2], name);
      if (spec === undefined) continue;
      add(spec, i, q.index!, q.index! + q[0].length);
      found = true;
    }
    if (found) continue;
    const poetry = /^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*=\s*(?:"([^"]*)"|\{[^}]*\bversion\s*=\s*"([^"]*)"[^}]*\})/.exec(code);
    if (poetry && normal(poetry[1]) === name) {
      const spec = poetrySpec(poetry[2] ?? poetry[3] ?? '');
      if (spec !== undefined && markerAllowsLinux(code)) add(spec.replace(/\s/g, ''), i, code.search(/\S/), code.trimEnd().length);
      continue;
    }
    // setup.cfg's install_requires lists one requirement per indented line, unquoted.
    if (file === 'setup.cfg') {
      const spec = requirementSpec(code, name);
      if (spec !== undefined) add(spec, i, code.search(/\S/), code.trimEnd().length);
    }
  }
  return out;
}
