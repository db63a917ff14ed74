/**
 * The step-time model's caches, owned by an explicit object: the planner creates one TimeCache per search and passes it
 * to every estimate; a one-off estimate makes its own. Nothing is kept in module state.
 *
 * What is cached, per layout (identity of `plan.parallel` plus the model, cluster and LoRA objects it was built
 * with): the links of every process group, each stage's per-rank parameters, step-level traffic and optimizer time,
 * the step contexts per micro-batch shape and the runs of alike stages. Which entry (and which part of it) a plan may
 * reuse is decided by one key function, `sameKey`, at the level each part depends on.
 */
import type { Plan } from '../plan/types';
import { layoutLinks, type LayoutLinks } from '../comm/layout';
import { stageParams, type StageParams } from '../comm/stageParams';
import { stageTraffic, type StageTraffic } from '../comm/stageTraffic';
import { FITTED_PARAMS, type TimeParams } from './params';
import { layoutChecksRunnable } from './problems';

/**
 * What a cached part depends on: 'layout' (the same parallel spec, model, cluster and LoRA objects), 'core' (the same
 * model, cluster and LoRA, and a parallel spec equal but for the sharding: step contexts, stage runs and stage
 * parameters read no sharding field), 'links' ('core' and the sharding fields the process groups' links read: whether
 * states are sharded, the shard group and whether anything is offloaded), 'layer' (what one layer's kernels and in-layer communication read: the in-layer
 * degrees and axis order, the micro-batch shape, precision and engine, not the pipeline or data-parallel layout),
 * 'shape' (the training fields a step context reads), 'traffic' (gradient dtype,
 * precision and FP8 parameter gather), 'runs' (recomputation), 'optimizer'.
 */
export type KeyLevel = 'layout' | 'core' | 'links' | 'layer' | 'shape' | 'traffic' | 'runs' | 'optimizer';

/** Two recomputation module lists with the same modules in the same order (undefined: the default). */
function sameModules(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  return a.every((m, i) => m === b[i]);
}

/** The one key function: whether a part cached for plan `a` is valid for plan `b` at a level. */
export function sameKey(level: KeyLevel, a: Plan, b: Plan): boolean {
  if (a === b) return true;
  // The fast path asks 'layout' on every call: identities only, before anything else is read.
  if (level === 'layout') return a.parallel === b.parallel && a.model === b.model && a.cluster === b.cluster && a.lora === b.lora;
  const ta = a.training;
  const tb = b.training;
  switch (level) {
    case 'core': {
      const x = a.parallel;
      const y = b.parallel;
      return a.model === b.model && a.cluster === b.cluster && a.lora === b.lora && a.engine === b.engine
        && (x === y || (x.tp === y.tp && x.pp === y.pp && x.vpp === y.vpp && x.schedule === y.schedule && x.cp === y.cp && x.ep === y.ep
          && x.etp === y.etp && x.sp === y.sp && x.dp === y.dp && x.order === y.order && x.stageLayers === y.stageLayers
          && x.tpCommOverlap === y.tpCommOverlap && x.epDispatcher === y.epDispatcher && x.epCommOverlap === y.epCommOverlap));
    }
    case 'links': {
      const x = a.parallel.sharding;
      const y = b.parallel.sharding;
      return sameKey('core', a, b) && (x === y || ((x.stage === 0) === (y.stage === 0) && x.shardGroupSize === y.shardGroupSize
        && (x.offloadOptimizer !== 'none' || x.offloadParams !== 'none') === (y.offloadOptimizer !== 'none' || y.offloadParams !== 'none')));
    }
    case 'layer': {
      const x = a.parallel;
      const y = b.parallel;
      return a.model === b.model && a.cluster === b.cluster && a.lora === b.lora && a.engine === b.engine
        && x.tp === y.tp && x.cp === y.cp && x.ep === y.ep && x.etp === y.etp && x.sp === y.sp && x.tpCommOverlap === y.tpCommOverlap
        && x.epDispatcher === y.epDispatcher && x.epCommOverlap === y.epCommOverlap
        && x.order === y.order && ta.microBatch === tb.microBatch && ta.seqLen === tb.seqLen && ta.precision === tb.precision
        && ta.flashAttention === tb.flashAttention && ta.compile === tb.compile && ta.fp8 === tb.fp8 && ta.cudaGraph === tb.cudaGraph
        // LoRA adapters and the elementwise passes follow the precision regime and model implementation
        // (shared/time/adapters.ts adapterRunOf, kernels/elementwise.ts fusionOf), the norm passes its upcast and Liger's kernels.
        && ta.regime === tb.regime && ta.modelImpl === tb.modelImpl && ta.normUpcast === tb.normUpcast && ta.ligerKernels === tb.ligerKernels
        // Packed samples' attention (kernels/attention.ts packedSamples).
        && ta.packing === tb.packing && ta.sampleTokens === tb.sampleTokens
        // Megatron's selective recomputation reruns the modules of its list (shared/time/megatronRecompute.ts).
        && sameModules(ta.recomputeModules, tb.recomputeModules)
        && (a.engine !== 'megatron' || (ta.gradAccum === tb.gradAccum && ta.globalBatch === tb.globalBatch && x.dp === y.dp));
    }
    case 'shape':
      return ta === tb || (ta.microBatch === tb.microBatch && ta.seqLen === tb.seqLen && ta.precision === tb.precision
        && ta.flashAttention === tb.flashAttention && ta.gradAccum === tb.gradAccum && ta.globalBatch === tb.globalBatch
        && ta.compile === tb.compile && ta.fp8 === tb.fp8 && a.engine === b.engine && ta.regime === tb.regime && ta.modelImpl === tb.modelImpl
        && ta.normUpcast === tb.normUpcast && ta.ligerKernels === tb.ligerKernels && ta.lossFusion === tb.lossFusion);
    case 'traffic':
      return ta.gradDtype === tb.gradDtype && ta.precision === tb.precision && ta.fp8?.paramGather === tb.fp8?.paramGather;
    case 'runs':
      return ta.recompute === tb.recompute && ta.recomputeLayers === tb.recomputeLayers;
    case 'optimizer':
      // The bytes a step touches follow the bytes the engine keeps per parameter (shared/time/optimizer.ts).
      return ta.optimizer === tb.optimizer && ta.optimizerImpl === tb.optimizerImpl && ta.precision === tb.precision
        && ta.gradDtype === tb.gradDtype && ta.regime === tb.regime && a.engine === b.engine;
    default:
      return false;
  }
}

/** What one layout's cache entry holds; `contexts` is filled by shared/time/context.ts, `runs` by stepTime.ts. */
export interface LayoutEntry<C = unknown, R = unknown> {
  /** The plan the entry was built from (the key for `sameKey`). */
  readonly plan: Plan;
  /** The process groups' links (shared/comm/layout.ts); shared with the previous layout when 'links'-equal. */
  readonly links: LayoutLinks;
  /** Per-rank parameters by stage index, filled on first use; shared with 'core'-equal layouts. */
  readonly stageParams: (StageParams | undefined)[];
  /** Step-level traffic by stage index and the plan it was built for. */
  readonly traffic: (StageTraffic | undefined)[];
  trafficFor: Plan | undefined;
  /** Optimizer-step seconds by stage for `optimizerFor`. */
  readonly optimizer: number[];
  optimizerFor: Plan | undefined;
  /** Step contexts built for this layout, one per distinct micro-batch shape; shared with 'core'-equal layouts. */
  readonly contexts: C[];
  /** Runs of alike pipeline stages per recomputation setting. */
  readonly runs: R[];
  /** layoutChecksRunnable of the entry's plan (shared/time/problems.ts). */
  readonly runnable: boolean;
}

/** Most step contexts kept per layout (the planner tries every divisor of the per-replica batch as micro batch). */
export const MAX_CONTEXTS = 64;

/**
 * Caches of the step-time model for a sequence of estimates with one parameter set. A small ring of recent layouts
 * instead of a weak map: the planner walks one layout family at a time, and short-lived weak-map entries cost more
 * garbage-collection time than they save.
 */
export class TimeCache {
  private readonly ring: (LayoutEntry | undefined)[] = [undefined, undefined, undefined, undefined];
  private next = 0;
  private last: LayoutEntry | undefined;
  /** Scratch records of the fast path, one list per count of alike-stage runs (shared/time/stepTime.ts). */
  readonly scratch: unknown[][] = [];
  /** Layer costs in buckets by layerHash, each entry checked with sameKey('layer') (shared/time/context.ts). */
  private readonly layerMemo = new Map<number, { plan: Plan; value: unknown }[]>();

  constructor(readonly params: TimeParams = FITTED_PARAMS) {}

  /** The cache entry of a plan's layout, built on first use. */
  entry<C, R = unknown>(plan: Plan): LayoutEntry<C, R> {
    const last = this.last;
    if (last && sameKey('layout', last.plan, plan)) return last as LayoutEntry<C, R>;
    for (const e of this.ring) {
      if (e && sameKey('layout', e.plan, plan)) {
        this.last = e;
        return e as LayoutEntry<C, R>;
      }
    }
    // The planner's consecutive layouts often differ only in sharding: they share everything that does not read it.
    const prev = last && sameKey('core', last.plan, plan) ? last : undefined;
    const entry: LayoutEntry = {
      plan, links: prev && sameKey('links', prev.plan, plan) ? prev.links : layoutLinks(plan), stageParams: prev ? prev.stageParams : [], traffic: [], trafficFor: undefined,
      optimizer: [], optimizerFor: undefined, contexts: prev ? prev.contexts : [], runs: prev ? prev.runs : [],
      runnable: layoutChecksRunnable(plan),
    };
    this.ring[this.next] = entry;
    this.next = (this.next + 1) % this.ring.length;
    this.last = entry;
    return entry as LayoutEntry<C, R>;
  }

  /** The layer costs of a plan (equal for every plan sameKey('layer') matches), computed by `make` on first use. */
  layerCosts<T>(plan: Plan, make: () => T): T {
    const h = layerHash(plan);
    let bucket = this.layerMemo.get(h);
    if (bucket) {
      for (let i = 0; i < bucket.length; i++) if (sameKey('layer', bucket[i].plan, plan)) return bucket[i].value as T;
    } else {
      if (this.layerMemo.size >= 4096) this.layerMemo.clear();
      bucket = [];
      this.layerMemo.set(h, bucket);
    }
    const value = make();
    bucket.push({ plan, value });
    return value;
  }

  /** stageParams of shared/comm/stageParams.ts, computed once per layout and stage. */
  stageParams(plan: Plan, stage: number, entry: LayoutEntry = this.entry(plan)): StageParams {
    if (!Number.isInteger(stage) || stage < 0 || stage > 4096) return stageParams(plan, stage);
    return (entry.stageParams[stage] ??= stageParams(plan, stage));
  }

  /** stageTraffic of shared/comm/stageTraffic.ts, computed once per layout, stage and 'traffic' key. */
  stageTraffic(plan: Plan, stage: number, entry: LayoutEntry = this.entry(plan)): StageTraffic {
    if (!Number.isInteger(stage) || stage < 0 || stage > 4096) return stageTraffic(plan, stage, entry.links, stageParams(plan, stage));
    if (!entry.trafficFor || !sameKey('traffic', entry.trafficFor, plan)) {
      entry.traffic.length = 0;
      entry.trafficFor = plan;
    }
    return (entry.traffic[stage] ??= stageTraffic(plan, stage, entry.links, this.stageParams(plan, stage, entry)));
  }
}

/** A hash of the numbers sameKey('layer') compares, so the memo looks up a short bucket without building a string. */
function layerHash(p: Plan): number {
  const x = p.parallel;
  const t = p.training;
  let h = x.tp | 0;
  h = (h * 31 + (x.cp | 0)) | 0;
  h = (h * 31 + (x.ep | 0)) | 0;
  h = (h * 31 + (x.sp ? 1 : 0) + (x.tpCommOverlap ? 2 : 0) + (t.flashAttention ? 4 : 0) + (t.compile ? 8 : 0)) | 0;
  h = (h * 31 + (t.microBatch | 0)) | 0;
  h = (h * 31 + (t.seqLen | 0)) | 0;
  h = (h * 31 + t.precision.length) | 0;
  return h;
}
