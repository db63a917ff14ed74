/**
 * Python release numbers and version specifiers as pip reads them (PEP 440 "Version specifiers": `==`, `===`, `!=`,
 * `<`, `<=`, `>`, `>=`, the compatible release `~=`, and `==X.*` prefix matching). Only the release segment (the
 * dot-separated numbers) is compared; a pre-release or local suffix (`rc1`, `.post2`, `+cu121`) is dropped, which
 * errs only on a release next to the asked boundary. Pure: no file access.
 */

/** A bound of the releases a specifier set allows. */
interface Bound {
  readonly v: readonly number[];
  readonly inclusive: boolean;
}

/** The release numbers of a version ("0.43.1" → [0, 43, 1]; "0.41.3.post2" → [0, 41, 3]); undefined when none. */
export function releaseOf(version: string): number[] | undefined {
  const m = /^\s*v?(\d+(?:\.\d+)*)/i.exec(version);
  return m ? m[1].split('.').map((x) => Number.parseInt(x, 10)) : undefined;
}

/** Compares two releases, missing trailing numbers as zeros (PEP 440: 1.0 == 1.0.0). */
export function compareRelease(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** The first release after every one that starts with `prefix` (0.42 → 0.43; 1 → 2). */
function afterPrefix(prefix: readonly number[]): number[] {
  const out = [...prefix];
  out[out.length - 1] += 1;
  return out;
}

/**
 * The lowest and highest releases a comma-separated specifier set allows, each with whether it is itself allowed;
 * undefined when the set cannot be read (an unknown operator or version). `!=` never narrows the range, and an empty
 * set allows every release.
 */
export function specifierRange(spec: string): { lo?: Bound; hi?: Bound } | undefined {
  let lo: Bound | undefined, hi: Bound | undefined;
  const raise = (b: Bound) => {
    const c = lo ? compareRelease(b.v, lo.v) : 1;
    if (c > 0 || (c === 0 && !b.inclusive)) lo = b;
  };
  const lower = (b: Bound) => {
    const c = hi ? compareRelease(b.v, hi.v) : -1;
    if (c < 0 || (c === 0 && !b.inclusive)) hi = b;
  };
  for (const raw of spec.split(',')) {
    const clause = raw.trim();
    if (!clause) continue;
    const m = /^(===|==|!=|~=|<=|>=|<|>)\s*([0-9][0-9A-Za-z.+!-]*?)(\.\*)?$/.exec(clause);
    if (!m) return undefined;
    const [, op, version, wildcard] = m;
    const v = releaseOf(version);
    if (!v) return undefined;
    if (op === '!=') continue;
    if ((op === '==' || op === '===') && wildcard) {
      raise({ v, inclusive: true });
      lower({ v: afterPrefix(v), inclusive: false });
    } else if (wildcard) {
      return undefined;
    } else if (op === '==' || op === '===') {
      raise({ v, inclusive: true });
      lower({ v, inclusive: true });
    } else if (op === '~=') {
      // ~= X.Y.Z means >= X.Y.Z and == X.Y.*: it needs at least two numbers.
      if (v.length < 2) return undefined;
      raise({ v, inclusive: true });
      lower({ v: afterPrefix(v.slice(0, -1)), inclusive: false });
    } else if (op === '>=') raise({ v, inclusive: true });
    else if (op === '>') raise({ v, inclusive: false });
    else if (op === '<=') lower({ v, inclusive: true });
    else lower({ v, inclusive: false });
  }
  return { lo, hi };
}

/**
 * Whether every release a specifier set allows is below `boundary` (true), none is (false), or both kinds are allowed
 * or the set cannot be read (undefined).
 */
export function allowedBelow(spec: string, boundary: string): boolean | undefined {
  const r = specifierRange(spec);
  const b = releaseOf(boundary);
  if (!r || !b) return undefined;
  if (r.hi) {
    const c = compareRelease(r.hi.v, b);
    if (c < 0 || (c === 0 && !r.hi.inclusive)) return true;
  }
  if (r.lo && compareRelease(r.lo.v, b) >= 0) return false;
  return undefined;
}
