/**
 * The layout search (equal step times rank the lower peak first): every runnable combination of TP, CP, PP (even or uneven), virtual stages, EP, DP, ZeRO
 * stage, offload, recomputation and micro batch for a fixed global batch, ranked by the fast step-time path
 * subject to the fast peak-memory path ≤ GPU memory × margin. The only pruning that skips a layout without
 * evaluating it is: a larger micro batch of the same layout after a smaller one did not fit (peak memory does not
 * fall as the micro batch grows at a fixed global batch). Counts of everything skipped are returned.
 */
import type { OffloadTarget, ParallelSpec, Plan, RecomputeKind, ShardingSpec, TrainingSpec } from '../plan/types';
import { clusterFor, parallelFor, rederivedSharding, searchPlan, shardingFor, trainingFor, type LayoutChoice } from './build';
import { ParetoFront, TopK } from './ranking';
import {
  cpCandidates, epCandidates, microBatchCandidates, offloadCandidates, ppCandidates, recomputeCandidates,
  shardGroupCandidates, stageSplit, torchtitanVppCandidates, tpCandidates, vppCandidates, zeroCandidates,
} from './space';
import type { Layout, PlannerEstimators, PlannerOptions, PruneReason, SearchSpace } from './types';
import { torchtitanStageLayers, TORCHTITAN_STAGE_WEIGHT } from '../plan/derived';
import { deepspeedPipeline } from '../memory/engine';
import { nvlinkDomainOf } from '../comm/links';

/** What the search found, before the returned layouts are re-estimated with the full model. */
export interface SearchOutcome {
  evaluated: number;
  pruned: Partial<Record<PruneReason, number>>;
  truncated: boolean;
  top: Layout[];
  pareto: Layout[];
  lowestMemory?: Layout;
}

/** Layouts that share everything but micro batch and recomputation, with their parallel spec built once. */
interface Family {
  readonly tp: number;
  readonly pp: number;
  readonly vpp: number;
  readonly cp: number;
  readonly ep: number;
  readonly dp: number;
  readonly zero: 0 | 1 | 2 | 3;
  readonly offload: OffloadTarget;
  readonly sharding: ShardingSpec;
  readonly stageLayers: readonly number[] | undefined;
  readonly parallel: ParallelSpec;
  readonly microBatches: readonly number[];
}

type Prune = (r: PruneReason, n?: number) => void;

/** Every runnable family of the space, outer axes first; rejected axis values are counted. */
function* families(base: Plan, gpus: number, space: SearchSpace, prune: Prune): Generator<Family> {
  const model = base.model;
  const B = base.training.globalBatch;
  const zeros = zeroCandidates(base.parallel.sharding.style, space);
  const offloads = offloadCandidates(space);
  const gpusPerNode = clusterFor(base.cluster, gpus)?.gpusPerNode ?? base.cluster.gpusPerNode;
  // GPUs joined by NVLink (a node, or a GB200 NVL72 rack's domain): TP stays inside it (at most 8, as engines run it)
  // and FSDP's hybrid shard group may span it.
  const domain = Math.min(gpus, nvlinkDomainOf({ gpusPerNode, gpu: base.cluster.gpu }));
  const tpGroup = Math.max(gpusPerNode, Math.min(domain, 8));
  const splitsByPp = new Map<number, readonly number[] | undefined>();
  // torchtitan's own split (embedding and head weighted as layers), one array per (PP, VPP) for the caches' identity.
  const titan = space.stageRule === 'torchtitan'
    ? { first: base.stated?.parallel?.firstStageLess ?? TORCHTITAN_STAGE_WEIGHT, last: base.stated?.parallel?.lastStageLess ?? TORCHTITAN_STAGE_WEIGHT } : undefined;
  const titanSplits = new Map<number, readonly number[] | undefined>();
  const titanSplit = (pp: number, vpp: number): readonly number[] | undefined => {
    const key = pp * 64 + vpp;
    if (!titanSplits.has(key)) titanSplits.set(key, pp > 1 && titan ? torchtitanStageLayers(model.layers, pp, vpp, titan.first, titan.last).layers : undefined);
    return titanSplits.get(key);
  };
  // Keyed by DP and whether PP is 1 (torchtitan's default reshard policy depends on it).
  const shardingsByDp = new Map<number, { zero: 0 | 1 | 2 | 3; offload: OffloadTarget; sharding: ShardingSpec | undefined }[]>();
  for (const tp of tpCandidates(model, tpGroup, gpus, space, prune)) {
    for (const cp of cpCandidates(base.training.seqLen, gpus / tp, space, prune)) {
      if (gpus % (tp * cp) !== 0) { prune('world-size'); continue; }
      const rest = gpus / (tp * cp);
      for (const pp of ppCandidates(model, rest, space, prune)) {
        if (rest % pp !== 0) { prune('world-size'); continue; }
        const dp = rest / pp;
        if (B % dp !== 0) { prune('global-batch'); continue; }
        // torchtitan applies FSDP only over a dp_shard × cp mesh larger than 1; without it, TP or PP runs in fp32
        // (torchtitan/distributed/utils.py maybe_enable_amp), which the base plan's precision does not describe.
        if (titan && dp * cp === 1 && tp * pp > 1) { prune('engine-unsharded'); continue; }
        // One split array per PP value of the search: the estimators' per-split caches recognise it by identity.
        let stageLayers = splitsByPp.get(pp);
        if (!titan && stageLayers === undefined && !splitsByPp.has(pp)) {
          stageLayers = stageSplit(model.layers, pp) ?? undefined;
          splitsByPp.set(pp, stageLayers);
        }
        const microBatches = microBatchCandidates(B / dp, space);
        // The sharding of each (ZeRO stage, offload) pair depends only on DP (and PP = 1 or not): built once per search.
        const key = dp * 2 + (pp === 1 ? 1 : 0);
        let shardings = shardingsByDp.get(key);
        if (!shardings) {
          const groups = shardGroupCandidates(base.parallel.sharding.style, dp, domain, space);
          shardings = zeros.flatMap((zero) => offloads.flatMap((offload) => groups.map((g) => {
            const s = shardingFor(base.parallel.sharding, zero, offload, dp, g);
            return { zero, offload, sharding: s && rederivedSharding(base, s, pp) };
          })));
          shardingsByDp.set(key, shardings);
        }
        for (const ep of epCandidates(model, space, prune)) {
          // Megatron carves expert parallelism out of DP×CP (expert data parallel = DP·CP/EP).
          if ((dp * cp) % ep !== 0) { prune('ep-experts'); continue; }
          const vpps = titan ? torchtitanVppCandidates(model.layers, pp, titan.first, titan.last, space, prune) : vppCandidates(model.layers, pp, stageLayers, space, prune);
          for (const vpp of vpps) {
            const split = titan ? titanSplit(pp, vpp) : stageLayers;
            for (const { zero, offload, sharding } of shardings) {
              if (!sharding) { prune('zero-offload'); continue; }
              if (zero >= 2 && deepspeedPipeline({ parallel: { sharding, pp } })) { prune('engine-pipeline-zero'); continue; }
              const choice = { tp, pp, vpp, cp, ep, dp, sp: tp > 1, stageLayers: split };
              const parallel = parallelFor(base.parallel, choice, sharding);
              yield { tp, pp, vpp, cp, ep, dp, zero, offload, sharding, stageLayers: split, parallel, microBatches };
            }
          }
        }
      }
    }
  }
}

/** Whether a kept layout is the family's layout at the same micro batch (then only recomputation can differ). */
function sameChoiceBut(l: Layout, f: Family, microBatch: number): boolean {
  return l.tp === f.tp && l.pp === f.pp && l.vpp === f.vpp && l.cp === f.cp && l.ep === f.ep && l.dp === f.dp && l.zero === f.zero
    && l.offload === f.offload && l.sharding === f.sharding.style && l.microBatch === microBatch
    && (l.shardGroup ?? f.dp) === f.sharding.shardGroupSize && l.stageLayers === f.stageLayers;
}

/** A layout without the empty tie list the search gave it. */
function withoutEquivalent(l: Layout): Layout {
  const { equivalent: _e, ...rest } = l;
  return rest;
}

/** The layout object of one evaluated point (built only when it is kept). Optional fields are left out, not undefined. */
function layoutOf(f: Family, microBatch: number, gradAccum: number, recompute: RecomputeKind, bytes: number, seconds: number, fits: boolean): Layout {
  // Filled field by field in the same key order as an object with optional spreads, without their object copies.
  const l: { -readonly [K in keyof Layout]?: Layout[K] } = {
    tp: f.tp, pp: f.pp, vpp: f.vpp, cp: f.cp, ep: f.ep, dp: f.dp, sp: f.tp > 1, zero: f.zero, sharding: f.sharding.style,
  };
  if (f.sharding.fsdpStrategy) l.fsdpStrategy = f.sharding.fsdpStrategy;
  if (f.sharding.shardGroupSize < f.dp) l.shardGroup = f.sharding.shardGroupSize;
  l.distributedOptimizer = f.sharding.style === 'megatron-distopt';
  l.offload = f.offload;
  if (f.stageLayers) l.stageLayers = f.stageLayers;
  l.microBatch = microBatch; l.gradAccum = gradAccum; l.recompute = recompute; l.stepSeconds = seconds;
  l.peakAllocatedBytes = bytes; l.peakReservedBytes = bytes; l.fits = fits; l.estimate = 'fast';
  if (fits) l.equivalent = [];
  return l as Layout;
}

/**
 * The training spec of (micro batch, accumulation) for one recomputation choice, built once per search: layout families
 * with the same DP share it, and the estimators' per-layout caches recognise it by identity.
 */
function trainingCache(base: Plan, recompute: RecomputeKind): (microBatch: number, gradAccum: number) => TrainingSpec {
  const seen = new Map<number, TrainingSpec>();
  const stride = base.training.globalBatch + 1;
  return (microBatch, gradAccum) => {
    const key = microBatch * stride + gradAccum;
    let t = seen.get(key);
    if (!t) {
      t = trainingFor(base.training, { microBatch, gradAccum, recompute });
      seen.set(key, t);
    }
    return t;
  };
}

/** Runs the search; `gpus` and `limitBytes` are already checked. */
export function searchLayouts(base: Plan, gpus: number, limitBytes: number, opts: PlannerOptions, est: PlannerEstimators): SearchOutcome {
  const pruned: Partial<Record<PruneReason, number>> = {};
  const prune: Prune = (r, n = 1) => {
    pruned[r] = (pruned[r] ?? 0) + n;
  };
  const B = base.training.globalBatch;
  const cluster = clusterFor(base.cluster, gpus) ?? base.cluster;
  const maxEval = opts.maxEvaluations ?? 50_000_000;
  const recomputes = recomputeCandidates(opts.space ?? {});
  const trainings = recomputes.map((recompute) => trainingCache(base, recompute));
  const top = new TopK<Layout>(Math.max(1, opts.topK ?? 5));
  const front = new ParetoFront<Layout>();
  let lowest: Layout | undefined;
  let fitted = false;
  let evaluated = 0;
  // Kept layouts by step time, to merge exact ties (sameChoiceBut) into one row.
  const kept = new Map<number, Layout>();
  let truncated = false;

  // The training specs of a family's (recomputation, micro batch) grid depend only on DP: looked up once per family.
  const specsByDp = new Map<number, TrainingSpec[][]>();
  for (const f of families(base, gpus, opts.space ?? {}, prune)) {
    const mbs = f.microBatches;
    let specs = specsByDp.get(f.dp);
    if (!specs) {
      specs = trainings.map((tr) => mbs.map((mb) => tr(mb, B / (f.dp * mb))));
      specsByDp.set(f.dp, specs);
    }
    for (let r = 0; r < recomputes.length; r++) {
      const recompute = recomputes[r];
      const specsR = specs[r];
      for (let i = 0; i < mbs.length; i++) {
        if (evaluated >= maxEval) {
          truncated = true;
          prune('cap');
          continue;
        }
        const microBatch = mbs[i];
        const gradAccum = B / (f.dp * microBatch);
        if (f.vpp > 1 && gradAccum % f.pp !== 0) { prune('interleave-microbatches'); continue; }
        const plan = searchPlan(base, cluster, f.parallel, specsR[i]);
        // Above the limit and the lowest peak so far, a layout's exact peak changes nothing: the estimator may stop there.
        // Once a layout fits, the lowest peak is never reported (lowestMemory is for searches where none fits): the limit.
        const bytes = est.peakBytes(plan, fitted ? limitBytes : lowest ? Math.max(limitBytes, lowest.peakReservedBytes) : Number.POSITIVE_INFINITY);
        evaluated++;
        if (!Number.isFinite(bytes) || bytes < 0) { prune('invalid-estimate'); continue; }
        if (bytes > limitBytes) {
          prune('memory');
          if (!lowest || bytes < lowest.peakReservedBytes) lowest = layoutOf(f, microBatch, gradAccum, recompute, bytes, est.stepSeconds(plan), false);
          // Peak memory does not fall as the micro batch grows at a fixed global batch: skip the larger ones.
          if (!opts.exhaustive && i + 1 < mbs.length) {
            prune('memory-monotone', mbs.length - i - 1);
            break;
          }
          continue;
        }
        // A time neither list would take needs no exact figure: the estimator may answer with a lower bound then.
        const seconds = est.stepSeconds(plan, (lb) => top.accepts(lb, bytes) || front.accepts(bytes, lb));
        if (!Number.isFinite(seconds) || seconds <= 0) { prune('invalid-estimate'); continue; }
        fitted = true;
        // An exact tie with a kept layout of the same family and micro batch (only recomputation differs) joins that row
        // of the top layouts instead of taking a row of its own (it may still be on the memory/time front).
        // Only a layout the top list would take can tie with one of its rows (a tie has a kept row's step time).
        let keepTop = top.accepts(seconds, bytes);
        const twin = keepTop ? kept.get(seconds) : undefined;
        if (twin !== undefined && sameChoiceBut(twin, f, microBatch) && twin.recompute !== recompute) {
          (twin.equivalent as string[]).push(`recompute ${recompute} (${(bytes / 2 ** 30).toFixed(1)} GiB)`);
          prune('tie');
          keepTop = false;
        }
        const keepFront = front.accepts(bytes, seconds);
        if (!keepTop && !keepFront) continue;
        const layout = layoutOf(f, microBatch, gradAccum, recompute, bytes, seconds, true);
        if (keepTop) {
          top.add(seconds, layout, bytes);
          kept.set(seconds, layout);
        }
        if (keepFront) front.add(bytes, seconds, layout);
      }
    }
  }
  const clean = (l: Layout): Layout => (l.equivalent?.length ? l : withoutEquivalent(l));
  const found = top.values().map(clean);
  return { evaluated, pruned, truncated, top: found, pareto: front.values().map(clean), lowestMemory: found.length ? undefined : lowest };
}

/** Strips the cost fields, for rebuilding a layout's plan. */
export function choiceOf(l: Layout): LayoutChoice {
  const { stepSeconds: _s, peakAllocatedBytes: _p, peakReservedBytes: _r, fits: _f, estimate: _e, equivalent: _q, ...choice } = l;
  return choice;
}
