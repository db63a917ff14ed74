/**
 * Megatron-LM launch scripts: parallel degrees, virtual stages, uneven first/last stages, micro batch,
 * recomputation, sequence parallelism, distributed optimizer and optimizer CPU offload.
 * Flags: Megatron-LM `megatron/training/arguments.py` (docs/formats/megatron.md); `--zero-stage` is Megatron-DeepSpeed's.
 */
import type { ConfigFacts } from '../../shared/plan/facts';
import { layersPerRank, parsePipelineLayout } from './layout';
import { applyOffsetEdits, findFlags, insertNear, removeFlag, valueEdit, type FlagHit, type OffsetEdit } from '../common/edit/shellFlags';
import { lineStarts, offsetAt } from '../common/edit/text';
import type { LayoutTarget, Rewrite } from '../common/edit/types';
import { own } from '../../shared/lookup';
import { rewriteDialectScript } from '../launch/rewriter';
import { MEGATRON_FLAGS } from './args';

/**
 * The parser's value range for a flag (it follows variables to their definitions), when it covers a plain number
 * in this file; undefined otherwise, and the script scanner decides.
 */
function factEdit(text: string, facts: ConfigFacts | undefined, flag: string, value: string): OffsetEdit | undefined {
  if (!facts) return undefined;
  const fact = Object.values(facts.facts).find((f) => f.key === flag && f.source.kind === 'explicit' && f.source.range);
  const range = fact?.source.range;
  if (!range || (fact.source.uri && fact.source.uri !== facts.uri)) return undefined;
  const starts = lineStarts(text);
  const from = offsetAt(starts, range.start);
  const to = offsetAt(starts, range.end);
  return /^\d+$/.test(text.slice(from, to)) ? { from, to, text: value } : undefined;
}

/** Flags whose absence means this value (Megatron defaults): they are not inserted just to state the default. */
const DEFAULTS: Record<string, string> = {
  '--tensor-model-parallel-size': '1',
  '--pipeline-model-parallel-size': '1',
  '--context-parallel-size': '1',
  '--expert-model-parallel-size': '1',
};

/** The desired flags: a value, true (bare flag present), or undefined (absent). */
function desiredFlags(t: LayoutTarget, hits: readonly FlagHit[]): Map<string, string | true | undefined> {
  const has = (f: string): boolean => hits.some((h) => h.flag === f);
  const want = new Map<string, string | true | undefined>();
  want.set('--tensor-model-parallel-size', String(t.tp));
  want.set('--pipeline-model-parallel-size', String(t.pp));
  want.set('--context-parallel-size', String(t.cp));
  want.set('--expert-model-parallel-size', String(t.ep));
  want.set('--micro-batch-size', String(t.microBatch));
  if (has('--global-batch-size')) want.set('--global-batch-size', String(t.globalBatch));
  // VPP as a count: --num-virtual-stages-per-pipeline-rank (current) or --virtual-pipeline-model-parallel-size (older);
  // else as layers per virtual stage.
  const countFlag = ['--num-virtual-stages-per-pipeline-rank', '--virtual-pipeline-model-parallel-size'].find(has);
  const useVstages = countFlag !== undefined;
  const vpp = isMegatronDeepSpeed(hits) ? 1 : t.vpp;
  want.set('--num-virtual-stages-per-pipeline-rank', vpp > 1 && countFlag === '--num-virtual-stages-per-pipeline-rank' ? String(vpp) : undefined);
  want.set('--virtual-pipeline-model-parallel-size', vpp > 1 && countFlag === '--virtual-pipeline-model-parallel-size' ? String(vpp) : undefined);
  want.set('--num-layers-per-virtual-pipeline-stage', vpp > 1 && !useVstages ? String(t.layers / (t.pp * vpp)) : undefined);
  const uneven = t.stageLayers && t.stageLayers.length > 1 ? t.stageLayers : undefined;
  want.set('--decoder-first-pipeline-num-layers', uneven ? String(uneven[0]) : undefined);
  want.set('--decoder-last-pipeline-num-layers', uneven ? String(uneven[uneven.length - 1]) : undefined);
  keepOrDropLayout(t, hits, want);
  want.set('--sequence-parallel', t.sp && t.tp > 1 ? true : undefined);
  want.set('--use-distributed-optimizer', t.distributedOptimizer ? true : undefined);
  want.set('--optimizer-cpu-offload', t.offload !== 'none' ? true : undefined);
  // DeepSpeed's pipeline engine refuses ZeRO-2/3 (PipelineEngine asserts the stage is below 2): at most 1 with PP > 1.
  if (has('--zero-stage')) want.set('--zero-stage', String(deepspeedPipelineZero(t, hits)));
  return want;
}

/**
 * A script that writes its pipeline out (--pipeline-model-parallel-layout) keeps the layout when the target has the
 * same pipeline ranks, virtual stages and layers per rank, and then states nothing else about the split (Megatron
 * rejects the layout together with the uneven-split and virtual-stage flags). Any other pipeline drops the layout for
 * the flags above, a split Megatron builds itself.
 */
function keepOrDropLayout(t: LayoutTarget, hits: readonly FlagHit[], want: Map<string, string | true | undefined>): void {
  const flag = hits.filter((h) => h.flag === '--pipeline-model-parallel-layout').pop();
  if (!flag?.value) return;
  const parsed = parsePipelineLayout(flag.value);
  const same = !('error' in parsed) && parsed.stages.length === t.pp * Math.max(1, t.vpp)
    && sameSplit(layersPerRank(parsed, t.pp), t.stageLayers, t.layers, t.pp);
  if (same) {
    for (const f of ['--num-virtual-stages-per-pipeline-rank', '--virtual-pipeline-model-parallel-size', '--num-layers-per-virtual-pipeline-stage',
      '--decoder-first-pipeline-num-layers', '--decoder-last-pipeline-num-layers']) want.set(f, undefined);
    return;
  }
  want.set('--pipeline-model-parallel-layout', undefined);
}

/** Whether a layout's layers per rank are the target's split (an even split when the target states none). */
function sameSplit(perRank: readonly number[], split: readonly number[] | undefined, layers: number, pp: number): boolean {
  const want = split && split.length === pp ? split : new Array<number>(pp).fill(layers / pp);
  return perRank.length === want.length && perRank.every((x, i) => x === want[i]);
}

/** The recomputation the script asks for now. */
function currentRecompute(hits: readonly FlagHit[]): string {
  const g = hits.find((h) => h.flag === '--recompute-granularity');
  if (g?.value) return g.value.replace(/["']/g, '');
  return hits.some((h) => h.flag === '--recompute-activations') ? 'selective' : 'none';
}

/** The ZeRO stage to write: the layout's, capped at 1 under DeepSpeed's pipeline engine (PP > 1 with it on). */
function deepspeedPipelineZero(t: LayoutTarget, hits: readonly FlagHit[]): number {
  const pipelineEngine = t.pp > 1 && !hits.some((h) => h.flag === '--no-pipeline-parallel');
  return pipelineEngine ? Math.min(1, t.zero) : t.zero;
}

/** Megatron-DeepSpeed scripts (DeepSpeed engine, `--checkpoint-activations`, no interleaving). */
export function isMegatronDeepSpeed(hits: readonly FlagHit[]): boolean {
  return hits.some((h) => h.flag === '--deepspeed' || h.flag === '--zero-stage' || h.flag === '--deepspeed_config' || h.flag === '--checkpoint-activations');
}

/** Recomputation flags for a level (full: every layer, uniform, as Narayanan et al. 2021 ran). */
function recomputeFlags(t: LayoutTarget, hits: readonly FlagHit[], notes: string[]): Map<string, string | true | undefined> {
  const want = new Map<string, string | true | undefined>();
  if (isMegatronDeepSpeed(hits)) {
    // Megatron-DeepSpeed recomputes whole layers with --checkpoint-activations; it has no selective mode.
    if (t.recompute === 'selective') notes.push('Megatron-DeepSpeed has no selective recomputation; --checkpoint-activations (full) is its only mode.');
    want.set('--checkpoint-activations', t.recompute === 'none' ? undefined : true);
    return want;
  }
  if (currentRecompute(hits) === t.recompute) return want;
  want.set('--recompute-activations', undefined);
  want.set('--recompute-granularity', t.recompute === 'none' ? undefined : t.recompute);
  want.set('--recompute-method', t.recompute === 'full' ? 'uniform' : undefined);
  want.set('--recompute-num-layers', t.recompute === 'full' ? '1' : undefined);
  return want;
}

/**
 * The anchor a new flag is written next to: a related flag, else the last Megatron flag of the script. A script whose
 * flags are all another program's (a wrapper's `bash train.sh --tp 2`, read through train.sh) has none: a Megatron flag
 * written there would go to that program, not to Megatron.
 */
function anchorFor(hits: readonly FlagHit[]): FlagHit | undefined {
  const prefer = ['--pipeline-model-parallel-size', '--tensor-model-parallel-size', '--micro-batch-size', '--global-batch-size', '--num-layers'];
  for (const f of prefer) {
    const h = hits.filter((x) => x.flag === f).pop();
    if (h) return h;
  }
  return hits.filter((h) => own(MEGATRON_FLAGS, h.flag.replace(/_/g, '-'))).pop();
}

/** The file a flag's value was read from when it is another file than this one (its name), else undefined. */
function otherFile(facts: ConfigFacts | undefined, flag: string): string | undefined {
  const fact = facts && Object.values(facts.facts).find((f) => f.key === flag && f.source.kind === 'explicit');
  const uri = fact?.source.uri;
  return uri && uri !== facts?.uri ? uri.replace(/^.*\//, '') : undefined;
}

/** Rewrites a Megatron-LM launch script for a layout. */
export function rewriteMegatronScript(text: string, t: LayoutTarget, facts?: ConfigFacts): Rewrite {
  const dialect = rewriteDialectScript(text, t, facts);
  if (dialect) return dialect;
  const hits = findFlags(text);
  const notes: string[] = [];
  const edits: OffsetEdit[] = [];
  const want = new Map([...desiredFlags(t, hits), ...recomputeFlags(t, hits, notes)]);
  if (want.has('--pipeline-model-parallel-layout') && hits.some((h) => h.flag === '--pipeline-model-parallel-layout')) {
    notes.push(`The pipeline layout (--pipeline-model-parallel-layout) does not fit PP ${t.pp}${t.vpp > 1 ? ` · VPP ${t.vpp}` : ''} and was removed; Megatron splits the layers itself, or write a layout for it.`);
  }
  if (t.vpp > 1 && isMegatronDeepSpeed(hits)) notes.push('Megatron-DeepSpeed pipelines run 1F1B without virtual stages; VPP was not written.');
  if (hits.some((h) => h.flag === '--zero-stage') && deepspeedPipelineZero(t, hits) !== t.zero) {
    notes.push(`DeepSpeed's pipeline engine refuses ZeRO-${t.zero} with PP ${t.pp} ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"); --zero-stage 1 was written.`);
  }
  const anchor = anchorFor(hits);
  const edited = new Set<string>();
  for (const [flag, value] of want) {
    const found = hits.filter((h) => h.flag === flag);
    if (value === undefined) {
      for (const h of found) edits.push(...removeFlag(text, h));
      continue;
    }
    if (found.length === 0) {
      // The flag may be written in a script this one runs or sources while its value is written here (`bash train.sh
      // --tp 2`, read through train.sh's `--tensor-model-parallel-size $TP`): the value is changed where it is.
      const here = typeof value === 'string' ? factEdit(text, facts, flag, value) : undefined;
      if (here) { edits.push(here); continue; }
      if (typeof value === 'string' && own(DEFAULTS, flag) === value) continue;
      const elsewhere = otherFile(facts, flag);
      if (elsewhere) {
        notes.push(`${flag} ${value === true ? '' : `${value} `}is set in ${elsewhere}: change it there.`.replace(/ {2}/g, ' '));
        continue;
      }
      if (!anchor) {
        notes.push(`Add ${flag}${value === true ? '' : ` ${value}`} to the training arguments.`);
        continue;
      }
      edits.push(insertNear(text, anchor, value === true ? flag : `${flag} ${value}`));
      continue;
    }
    if (value === true) continue;
    for (const h of found) {
      const e = factEdit(text, facts, flag, value) ?? valueEdit(text, h, value);
      if (typeof e === 'string') notes.push(e);
      else {
        // One variable can feed several flags: edit its definition once.
        const key = `${e.from}:${e.to}`;
        if (!edited.has(key)) edits.push(e);
        edited.add(key);
      }
    }
  }
  return { text: applyOffsetEdits(text, edits), notes };
}
