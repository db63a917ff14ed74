/**
 * A DeepSpeed config a launch script generates from a template with sed (Megatron-DeepSpeed examples_deepspeed:
 * `sed "s/CONFIG_BATCH_SIZE/${GLOBAL_BATCH_SIZE}/" ds_config_gpt_TEMPLATE.json | sed "s/ZERO_STAGE/0/" … >
 * ${config_json}`, then `--deepspeed_config ${config_json}`): the template is read with the substitutions applied,
 * as sed would write it, and the generated file is not looked for. Values keep the template as their file.
 */
import type { EvalCommand } from '../common/shell/evaluate';
import { FactSink } from '../common/sink';
import { jsonTree } from '../common/jsonTree';
import { baseName, LineIndex } from '../common/text';
import { readDeepSpeed } from '../deepspeed/reader';
import type { SourceReader } from '../megatron/script';

/** `s/A/B/` or `s/A/B/g` (any delimiter), as written in a sed script word. */
const SUBST = /^s(.)((?:(?!\1).)*)\1((?:(?!\1).)*)\1(g?)$/s;

interface Template { readonly file: string; readonly subs: [string, string, boolean][]; readonly output: string; readonly cwd: string }

/** The sed pipelines among `cmds` that fill a JSON template and write the result to a file. */
function templates(cmds: readonly EvalCommand[]): Template[] {
  const groups = new Map<number, EvalCommand[]>();
  for (const c of cmds) if (c.pipe?.output && c.words[0]?.t === 'sed') groups.set(c.pipe.id, [...(groups.get(c.pipe.id) ?? []), c]);
  const out: Template[] = [];
  for (const g of groups.values()) {
    const file = g[0]!.words.slice(1).map((w) => w.t).filter((t) => /\.json$/i.test(t)).pop();
    if (!file) continue;
    const subs: [string, string, boolean][] = [];
    for (const c of g) for (const w of c.words.slice(1)) { const m = SUBST.exec(w.t); if (m) subs.push([m[2]!, m[3]!, m[4] === 'g']); }
    out.push({ file, subs, output: g[0]!.pipe!.output!, cwd: g[0]!.cwd });
  }
  return out;
}

/** Each line with the first occurrence of `a` replaced (every one with `g`), as sed substitutes (patterns as text). */
function substitute(text: string, [a, b, all]: [string, string, boolean]): string {
  if (!a) return text;
  return text.split('\n').map((line) => (all ? line.split(a).join(b) : line.replace(a, () => b))).join('\n');
}

/** Reads the DeepSpeed configs the script fills from templates; drops references to the files it writes. */
export function readSedTemplates(s: FactSink, cmds: readonly EvalCommand[], readSource: SourceReader | undefined): void {
  if (!readSource) return;
  for (const t of templates(cmds)) {
    const src = readSource(t.file, t.cwd);
    if (!src || !/zero_optimization|train_batch_size|train_micro_batch_size_per_gpu/.test(src.text)) continue;
    const text = t.subs.reduce(substitute, src.text);
    const ds = new FactSink('deepspeed', src.uri);
    readDeepSpeed(ds, jsonTree(text, new LineIndex(text)).root);
    const why = `${baseName(src.uri)} filled by sed into ${baseName(t.output)}`;
    for (const [k, f] of Object.entries(ds.facts)) {
      const mine = s.facts[k];
      if (mine && mine.source.kind === 'explicit' && !k.startsWith('parallel.sharding.')) continue;
      s.facts[k] = { ...f, keyRange: undefined, source: { ...f.source, uri: src.uri, range: undefined, detail: f.source.kind === 'explicit' ? `${why}: ${f.key ?? k}` : f.source.detail } };
    }
    const written = t.output.replace(/^\.\//, '');
    for (let i = s.references.length - 1; i >= 0; i--) if (s.references[i]!.kind === 'deepspeed' && s.references[i]!.target.replace(/^\.\//, '') === written) s.references.splice(i, 1);
  }
}
