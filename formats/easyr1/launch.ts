/**
 * `python3 -m verl.trainer.main config=examples/config.yaml data.max_response_length=4096 …` (EasyR1): the named
 * YAML is read with the `key.path=value` overrides on top, as OmegaConf merges them, so a value built from both
 * (prompt + response length) is right.
 */
import { interpolatingGetter, type Found } from '../common/keyTable';
import type { SourceMap } from '../common/shell/commandLine';
import type { Invocation } from '../common/shell/commandLine';
import { unresolved } from '../common/shell/sval';
import type { FactSink } from '../common/sink';
import { LineIndex } from '../common/text';
import { yamlTree } from '../common/yamlTree';
import { detectYaml } from '../detect';
import { overrides } from '../verl/hydra';
import { applyEasyR1 } from './reader';

/** Reads `text` of another file: its URI and text (the script reader's bounded source reader). */
export type ReadOther = (target: string, cwd: string) => { uri: string; text: string } | undefined;

/** True when the launch line named an EasyR1 config, which was read with the line's overrides on top. */
export function readConfigWithOverrides(s: FactSink, inv: Invocation, map: SourceMap, readOther: ReadOther | undefined): boolean {
  const eq = inv.args.find((w) => /^config=\S+\.ya?ml$/i.test(w.t) && !unresolved(w));
  if (!eq || !readOther) return false;
  const src = readOther(eq.t.slice('config='.length), inv.command.cwd);
  if (!src) return false;
  const root = yamlTree(src.text, new LineIndex(src.text)).root;
  if (detectYaml(root) !== 'easyr1' || !root) return false;
  const over = overrides(inv.args, map);
  const base = interpolatingGetter(root);
  const fromFile = (k: string): Found | undefined => { const f = base(k); return f ? { ...f, uri: src.uri } : undefined; };
  applyEasyR1(s, (k) => over.get(k) ?? fromFile(k));
  s.derived('launch.dialect', 'easyr1', `${inv.program} with config=${eq.t.slice('config='.length)} and its overrides`);
  return true;
}
