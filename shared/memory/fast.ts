/**
 * The numeric fast path (≥ 10⁶ plan evaluations per second): the same context and term functions as the traceable
 * estimate, no labels, no allocation. Also the per-stage accessors the step simulator uses.
 */
import { recomputeEveryOf, recomputePolicyOf } from './engine';
import { cudaContextBytes } from './buffers';
import { moeLayersIn } from '../model/params';
import { recomputeModuleMask } from '../plan/recomputeModules';
import type { Plan } from '../plan/types';
import { fillContext, layersOfStage, newContext, type MemoryContext } from './context';
import { computeStage, computeStageActivations, computeStageStates, newStageNumbers, stageLayerActs, type StageNumbers } from './stage';
import { keptLayerActivations, stageInFlight } from './inFlight';

const CTX: MemoryContext = newContext();
const ST: StageNumbers = newStageNumbers();
/** Scratch list of middle-stage layer mixes already evaluated. */
const SEEN = new Float64Array(64);

const bad = (x: unknown) => typeof x !== 'number' || !(x > 0) || x > 1e15 || !Number.isFinite(x);

/** Cheap structural check: every count positive and finite, PP ≤ layers, a consistent uneven split. Never throws. */
export function planComputable(plan: Plan): boolean {
  try {
    return computable(plan);
  } catch {
    return false;
  }
}

/** The checks of planComputable (may throw on structurally broken objects). */
function computable(plan: Plan): boolean {
  const m = plan.model, t = plan.training, p = plan.parallel;
  if (bad(m.layers) || bad(m.hiddenSize) || bad(m.heads) || bad(m.kvHeads) || bad(m.headDim) || bad(m.ffnSize) || bad(m.vocabSize)) return false;
  if (bad(t.microBatch) || bad(t.gradAccum) || bad(t.seqLen) || bad(p.tp) || bad(p.pp) || bad(p.cp) || bad(p.dp)) return false;
  if (bad(p.ep) || bad(p.etp) || bad(p.vpp) || bad(p.sharding.shardGroupSize) || bad(plan.cluster.gpusPerNode)) return false;
  if (p.pp > m.layers || !Number.isInteger(p.pp)) return false;
  if (p.stageLayers) {
    // The planner evaluates many plans with one split array: its check is remembered for the last array.
    if (p.stageLayers !== lastSplit || m.layers !== lastSplitLayers || p.pp !== lastSplitPp) {
      lastSplitOk = splitComputable(p.stageLayers, p.pp, m.layers);
      lastSplit = p.stageLayers;
      lastSplitLayers = m.layers;
      lastSplitPp = p.pp;
    }
    if (!lastSplitOk) return false;
  }
  return true;
}

let lastSplit: readonly number[] | undefined;
let lastSplitLayers = 0;
let lastSplitPp = 0;
let lastSplitOk = false;

/** An uneven split: pp non-negative integers summing to the layers. */
function splitComputable(split: readonly number[], pp: number, layers: number): boolean {
  if (split.length !== pp) return false;
  let sum = 0;
  for (const x of split) {
    if (!(x >= 0) || !Number.isInteger(x)) return false;
    sum += x;
  }
  return sum === layers;
}

/** True when every middle stage has the same layers and layer kinds, so stages 0, 1 and p−1 bound the peak. */
function uniformMiddle(c: MemoryContext): boolean {
  const moe = c.model.moe;
  return !c.stageLayers && c.layers % c.pp === 0 && (!moe || (moe.denseFirstLayers === 0 && moe.layerFrequency <= 1));
}

/**
 * Peak reserved bytes per GPU over all pipeline stages. Returns +∞ for a plan that cannot be computed (for planners
 * to reject; never shown). With uniform stages only stages 0, 1 and p − 1 are evaluated: in-flight micro-batches
 * never grow with the stage index, so a middle stage cannot exceed stage 1. The states half of each evaluated stage
 * (computeStageStates) is kept for the last layout family; only the activations half runs per micro batch and recomputation.
 * With `enough`, the caller needs no peak above it: once the stages evaluated so far exceed it, their largest peak (at
 * most the plan's) is returned without evaluating the others. A stage after that stop is then never evaluated, so a
 * layout whose later stage would give no finite estimate is pruned for memory rather than as an invalid estimate.
 */
export function peakMemoryFast(plan: Plan, enough = Number.POSITIVE_INFINITY): number {
  // A plan of the last family passed planComputable on everything but micro batch and accumulation.
  let same: boolean;
  try {
    same = sameFamily(plan);
  } catch {
    return Number.POSITIVE_INFINITY;
  }
  const t = plan.training;
  if (same ? bad(t.microBatch) || bad(t.gradAccum) : !planComputable(plan)) return Number.POSITIVE_INFINITY;
  const c = same ? FAM_CTX : newFamily(plan);
  // The context fields the states half does not read, as fillContext sets them.
  c.b = t.microBatch; c.m = t.gradAccum; c.recompute = t.recompute; c.recomputeLayers = t.recomputeLayers ?? Number.MAX_SAFE_INTEGER;
  c.recomputeMask = recomputeModuleMask(t);
  // The recomputation policy follows the recompute setting (torchtitan: selective → per-layer every N-th block).
  c.acPolicy = recomputePolicyOf(plan); c.acEvery = recomputeEveryOf(plan);
  let peak = 0;
  // Stages with the same layer and MoE-layer counts hold the same activations per micro-batch: computed once per count.
  let lastLayers = -1, lastMoe = -1, act = 0;
  for (let i = 0; i < famCount; i++) {
    const st = FAM_STAGES[i];
    // Every moment holds the stage's parameters, optimizer states and master weights (moments.ts fill), and the CUDA
    // context comes on top: a stage whose states alone pass `enough` needs no activations to say so.
    const states = st.parameters + st.optimizerStates + st.masterWeights + cudaContextBytes(c.ctxBytes);
    if (states > enough) return Math.max(peak, states);
    if (st.layers !== lastLayers || st.moeLayers !== lastMoe) {
      lastLayers = st.layers;
      lastMoe = st.moeLayers;
      act = stageLayerActs(c, lastLayers, lastMoe);
    }
    // The forward of the last in-flight micro-batch holds those states and every in-flight micro-batch's saved
    // activations (moments.ts and pipelineMoments.ts, 'forward'; every other term there is non-negative): above
    // `enough`, the stage's moments need not be run.
    const floor = states + stageInFlight(c, st.stage) * keptLayerActivations(c, st.layers, act);
    if (floor > enough) return Math.max(peak, floor);
    peak = Math.max(peak, computeStageActivations(c, st, act, false).reserved);
    if (peak > enough) return peak;
  }
  return peak;
}

/** The memory context of the last layout family (everything but micro batch, accumulation and recomputation). */
const FAM_CTX: MemoryContext = newContext();
/** The states halves of the stages peakMemoryFast evaluates for that family, and how many there are. */
const FAM_STAGES: StageNumbers[] = [];
let famCount = 0;
let famPlan: Plan | undefined;

/** Whether a plan differs from the last family's only in micro batch, accumulation and recomputation (objects by identity). */
function sameFamily(plan: Plan): boolean {
  const f = famPlan;
  if (!f) return false;
  if (f === plan) return true;
  const a = f.training, b = plan.training;
  return f.parallel === plan.parallel && f.model === plan.model && f.cluster === plan.cluster && f.overhead === plan.overhead
    && f.lora === plan.lora && a.seqLen === b.seqLen && a.precision === b.precision && a.gradDtype === b.gradDtype
    && a.optimizerInBackward === b.optimizerInBackward && a.pagedOptimizer === b.pagedOptimizer && a.previousOutputHeld === b.previousOutputHeld && a.activationOffload === b.activationOffload && a.normUpcast === b.normUpcast
    && a.fp32GradAccum === b.fp32GradAccum && a.ligerKernels === b.ligerKernels && a.compile === b.compile && a.optimizer === b.optimizer && a.optimizerImpl === b.optimizerImpl && a.flashAttention === b.flashAttention
    // The engine, its precision regime, model implementation and loss set bytes per parameter, the block's saves and the logits' copies.
    && f.engine === plan.engine && a.regime === b.regime && a.modelImpl === b.modelImpl && a.lossFusion === b.lossFusion;
}

/** Fills the family context from a plan and computes the states half of every stage that can hold the peak. */
function newFamily(plan: Plan): MemoryContext {
  famPlan = undefined;
  const c = fillContext(plan, FAM_CTX, false);
  famCount = 0;
  if (uniformMiddle(c)) {
    // The last stage also holds the multi-token-prediction layers (layersOfStage).
    const n = c.layers / c.pp;
    addStage(c, 0, 0, layersOfStage(c, 0));
    if (c.pp > 2) addStage(c, 1, n, n);
    if (c.pp > 1) addStage(c, c.pp - 1, (c.pp - 1) * n, layersOfStage(c, c.pp - 1));
  } else {
    const list = stagesToEvaluate(c);
    for (let i = 0; i < list.length; i += 3) addStage(c, list[i], list[i + 1], list[i + 2]);
  }
  famPlan = plan;
  return c;
}

function addStage(c: MemoryContext, stage: number, start: number, layers: number): void {
  if (famCount === FAM_STAGES.length) FAM_STAGES.push(newStageNumbers());
  computeStageStates(c, stage, start, layers, FAM_STAGES[famCount++]);
}

/** The (stage, first layer, layers) triples peakMemoryFast evaluates for the last split and model seen. */
let lastList: number[] = [];
let lastListSplit: readonly number[] | undefined;
let lastListModel: MemoryContext['model'] | undefined;
let lastListPp = 0;
let lastListLayers = 0;

/**
 * Stages whose peak can be the largest, as flat (stage, first layer, layers) triples: the first, the last and each
 * middle stage with a layer mix no earlier middle stage had (fewer in-flight micro-batches, same states: it cannot peak
 * higher). Depends only on the split and the model, so it is kept for the last (split, model) pair.
 */
function stagesToEvaluate(c: MemoryContext): number[] {
  if (c.stageLayers && c.stageLayers === lastListSplit && c.model === lastListModel && c.pp === lastListPp && c.layers === lastListLayers) return lastList;
  const out: number[] = [];
  let start = 0;
  let seenCount = 0;
  for (let i = 0; i < c.pp; i++) {
    const n = layersOfStage(c, i);
    const edge = i === 0 || i === c.pp - 1;
    const key = n * 1e6 + moeLayersIn(c.model, start, start + n);
    let seen = false;
    if (!edge) {
      for (let j = 0; j < seenCount && !seen; j++) seen = SEEN[j] === key;
      if (!seen && seenCount < SEEN.length) SEEN[seenCount++] = key;
    }
    if (!seen) out.push(i, start, n);
    start += n;
  }
  if (c.stageLayers) {
    lastList = out;
    lastListSplit = c.stageLayers;
    lastListModel = c.model;
    lastListPp = c.pp;
    lastListLayers = c.layers;
  }
  return out;
}

/** Numbers of one stage (fresh object); undefined when the plan cannot be computed or the stage does not exist. */
export function stageNumbers(plan: Plan, stage: number, replicated = false): StageNumbers | undefined {
  if (!planComputable(plan) || !(stage >= 0 && stage < plan.parallel.pp) || !Number.isInteger(stage)) return undefined;
  const c = fillContext(plan, undefined, replicated);
  let start = 0;
  for (let i = 0; i < stage; i++) start += layersOfStage(c, i);
  return computeStage(c, stage, start, layersOfStage(c, stage), newStageNumbers());
}

/** Layers per pipeline stage, honouring `stageLayers` or an even split ([] when the plan cannot be computed). */
export function stageLayerCounts(plan: Plan): number[] {
  if (!planComputable(plan)) return [];
  const c = fillContext(plan, CTX, false);
  return Array.from({ length: c.pp }, (_, i) => layersOfStage(c, i));
}

/** Activation bytes one in-flight micro-batch holds on a stage (layers + embedding on the first + logits on the last). */
export function activationBytesPerMicrobatch(plan: Plan, stage: number): number {
  const s = stageNumbers(plan, stage);
  return s ? s.layerActPerMicrobatch + s.embeddingActPerMicrobatch + s.logits : 0;
}

/**
 * Everything but micro-batch activations on a stage: model states, fp8 caches, gathered params, buffers, CUDA context
 * and the full-recompute working set (allocated, without fragmentation).
 */
export function staticBytes(plan: Plan, stage: number): number {
  const s = stageNumbers(plan, stage);
  return s ? s.allocated - s.inFlight * (s.layerActPerMicrobatch + s.embeddingActPerMicrobatch) - s.logits : 0;
}

/** Micro-batches whose activations a stage holds at its peak (fractional for interleaved schedules). */
export function inFlightMicrobatches(plan: Plan, stage: number): number {
  return stageNumbers(plan, stage)?.inFlight ?? 0;
}

/**
 * Largest allocated and reserved bytes over every pipeline stage: the maxima of estimateMemory's stage figures (same
 * computeStage numbers, cleaned the same way) without building labels, for callers that need only the peak. Zeros when
 * the plan cannot be computed, as estimateMemory's empty result.
 */
export function stagePeaks(plan: Plan): { allocated: number; reserved: number } {
  if (!planComputable(plan)) return { allocated: 0, reserved: 0 };
  const c = fillContext(plan, CTX, false);
  let allocated = 0;
  let reserved = 0;
  let start = 0;
  for (let i = 0; i < c.pp; i++) {
    const n = layersOfStage(c, i);
    const s = computeStage(c, i, start, n, ST);
    start += n;
    allocated = Math.max(allocated, clean(s.allocated));
    reserved = Math.max(reserved, clean(s.reserved));
  }
  return { allocated, reserved };
}

/** Anything not finite or negative becomes 0, as in estimateMemory. */
const clean = (x: number) => (Number.isFinite(x) && x > 0 ? x : 0);
