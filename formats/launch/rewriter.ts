/**
 * "Apply layout" for launch scripts that do not speak Megatron-LM flags (DeepSpeed-Chat, OpenRLHF, HF Trainer /
 * TRL / ms-swift arguments, verl overrides; torchtitan's options in ./torchtitan.ts): a value the reader found is replaced where it is written (the literal
 * after the flag, or the variable that feeds it); a missing one is added with the dialect's own flag next to the
 * others; what the trainer cannot hold (OpenRLHF has no pipeline parallelism) is said, not written.
 */
import dsChat from '../deepspeed-chat/keys.json';
import hfTrainer from '../hf-trainer/keys.json';
import openrlhf from '../openrlhf/keys.json';
import verl from '../verl/keys.json';
import type { ConfigFacts } from '../../shared/plan/facts';
import type { PlanPath } from '../../shared/plan/paths';
import type { DialectTable } from '../common/keyTable';
import { parseConfig } from '../index';
import { applyOffsetEdits, findFlags, insertNear, type OffsetEdit } from '../common/edit/shellFlags';
import type { LayoutTarget, Rewrite } from '../common/edit/types';
import { rewriteTorchtitanScript } from './torchtitan';
import { replaceFactValue } from '../common/edit/factEdit';

const TABLES: Record<string, { table: DialectTable; label: string }> = {
  'deepspeed-chat': { table: dsChat as DialectTable, label: 'DeepSpeed-Chat' },
  openrlhf: { table: openrlhf as DialectTable, label: 'OpenRLHF' },
  'hf-trainer': { table: hfTrainer as DialectTable, label: 'the HF Trainer' },
  verl: { table: verl as DialectTable, label: 'verl' },
};

/** Plan paths a layout decides, with the target's value and the value that needs no key (framework default). */
function wanted(t: LayoutTarget): [PlanPath, number, number | undefined][] {
  return [
    ['parallel.tp', t.tp, 1], ['parallel.pp', t.pp, 1], ['parallel.cp', t.cp, 1], ['parallel.ep', t.ep, 1],
    ['parallel.sharding.stage', t.zero, undefined], ['training.microBatch', t.microBatch, undefined],
  ];
}

/** The dialect's flag for a plan path, in the script's spelling (dotted `--ds.x` flags when the script uses them). */
function flagFor(table: DialectTable, path: PlanPath, dotted: boolean): string | undefined {
  const keys = Object.entries(table.keys).filter(([k, s]) => s.plan === path && !s.ignore && s.type !== 'sum' && s.type !== 'product' && k.startsWith('--')).map(([k]) => k);
  if (!keys.length) return undefined;
  const spellings = keys.flatMap((k) => [k, ...Object.entries(table.aliases ?? {}).filter(([, v]) => v === k).map(([a]) => a)]);
  return spellings.find((k) => k.includes('.') === dotted) ?? keys[0];
}

/** Rewrites a non-Megatron launch script, or undefined when the script speaks Megatron flags (or nothing known). */
export function rewriteDialectScript(text: string, t: LayoutTarget, given?: ConfigFacts): Rewrite | undefined {
  const facts = given ?? parseConfig('file:///launch.sh', text, 'megatron-script');
  const dialect = facts.facts['launch.dialect']?.value;
  if (dialect === 'torchtitan') return rewriteTorchtitanScript(text, t, facts);
  const spec = typeof dialect === 'string' ? TABLES[dialect] : undefined;
  if (!spec) return undefined;
  const notes: string[] = [];
  const unwritable: PlanPath[] = [];
  const edits: OffsetEdit[] = [];
  const hits = findFlags(text);
  const dotted = hits.filter((h) => /^--\w+\./.test(h.flag)).length > hits.length / 2;
  const known = hits.filter((h) => Object.keys(spec.table.keys).includes(h.flag) || spec.table.aliases?.[h.flag]);
  const anchor = known[known.length - 1];
  for (const [path, value, dflt] of wanted(t)) {
    const e = replaceFactValue(text, facts, path, value);
    if (e === 'same') continue;
    if (e) { edits.push(e); continue; }
    if (facts.facts[path]?.source.kind === 'explicit') { notes.push(`${path} = ${value}: the value in this script is computed or set elsewhere; change it there.`); unwritable.push(path); continue; }
    if (value === dflt || (path === 'parallel.sharding.stage' && facts.references.some((r) => r.kind === 'deepspeed'))) {
      if (value !== dflt) { notes.push(`Set the ZeRO stage ${value} in the DeepSpeed JSON this script passes.`); unwritable.push(path); }
      continue;
    }
    const flag = dialect === 'verl' ? undefined : flagFor(spec.table, path, dotted);
    if (!flag || !anchor) {
      notes.push(`${spec.label} has no argument for ${path} = ${value}; it is not written.`);
      unwritable.push(path);
      continue;
    }
    edits.push(insertNear(text, anchor, `${flag} ${value}`));
  }
  return { text: applyOffsetEdits(text, edits), notes, unwritable };
}
