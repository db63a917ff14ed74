/**
 * estimateMemory: the traceable per-stage memory estimate. Numbers come from computeStage (shared with the fast path);
 * this file only attaches labels, formulas, citations and the inputs with their sources.
 */
import { countParams } from '../model/params';
import type { MemoryEstimate, MemoryTermName, ParameterCounts, StageKind, StageMemory, Term, TermInput } from '../plan/result';
import type { InputSource, Plan, Problem } from '../plan/types';
import { layoutImpossible, validatePlan } from '../plan/validate';
import { hostOffloadBytesPerNode } from './buffers';
import { fillContext, layersOfStage, type MemoryContext } from './context';
import { planComputable } from './fast';
import { computeStage, newStageNumbers, type StageNumbers } from './stage';
import { TERM_INFO } from './termInfo';
import { foreachStepMessage } from '../wording/optimizerStep';
import { noSyncGradientsMessage } from '../wording/noSync';
import type { MomentTerms } from './moments';
import type { PlanPath } from '../plan/paths';

/** Replaces anything not finite or negative by 0 (the estimate never shows NaN, ∞ or negative bytes). */
const clean = (x: number) => (Number.isFinite(x) && x > 0 ? x : 0);

/** Estimates per-GPU memory of every pipeline stage, with the replicated (plain DP) baseline. Never throws. */
export function estimateMemory(plan: Plan): MemoryEstimate {
  let problems: Problem[];
  try {
    problems = validatePlan(plan);
  } catch {
    problems = [{ code: 'value-not-finite', severity: 'error', message: 'The plan is malformed.', paths: [] }];
  }
  const gpuMemoryBytes = clean(plan?.cluster?.gpu?.memoryBytes ?? 0);
  const empty: MemoryEstimate = {
    model: safeCounts(plan), fits: false, gpuMemoryBytes, stages: [], peakStage: 0, replicated: { stages: [] }, hostBytesPerNode: 0, problems,
  };
  if (layoutImpossible(problems) || !planComputable(plan)) return empty;
  try {
    const stages = buildStages(plan, false);
    const replicated = buildStages(plan, true);
    let peakStage = 0;
    stages.forEach((s, i) => { if (s.peakReservedBytes > stages[peakStage].peakReservedBytes) peakStage = i; });
    const host = Math.max(0, ...stages.map((s) => s.hostBytes));
    return {
      model: safeCounts(plan),
      fits: stages.every((s) => s.peakReservedBytes <= gpuMemoryBytes),
      gpuMemoryBytes,
      stages: stages.map((s) => s.memory),
      peakStage,
      replicated: { stages: replicated.map((s) => s.memory) },
      hostBytesPerNode: clean(hostOffloadBytesPerNode(host, plan.cluster.gpusPerNode)),
      problems: withNoSyncGradients(plan, stages[peakStage], withForeachStep(plan, stages[peakStage], problems)),
    };
  } catch (e) {
    return { ...empty, problems: [...problems, { code: 'internal-error', severity: 'error', message: `Memory estimate failed: ${String(e)}`, paths: [] }] };
  }
}

/**
 * An information at the optimizer when torch's foreach Adam step is the peak (shared/memory/moments.ts): its list and
 * the peak the fused step would have, so the cheapest memory saving of such a run is not missed.
 */
function withForeachStep(plan: Plan, peak: BuiltStage, problems: Problem[]): Problem[] {
  if (peak.stepList <= 0 || peak.memory.peakMoment !== 'optimizer step') return problems;
  const fused = buildStages({ ...plan, training: { ...plan.training, optimizerImpl: 'fused' } }, false);
  const fusedPeak = Math.max(...fused.map((s) => s.peakReservedBytes));
  return [...problems, {
    code: 'foreach-step-peak', severity: 'info', paths: ['training.optimizerImpl', 'training.optimizer'],
    message: foreachStepMessage(peak.peakReservedBytes, peak.stepList, fusedPeak),
  }];
}

/**
 * An information at the accumulation when FSDP's `no_sync` gradients raise the peak (shared/memory/moments.ts
 * `carriedUnsharded`): every micro-batch but the last keeps the whole unsharded gradient, where reducing in every
 * micro-batch would carry only the shard. Said when syncing would lower the peak by at least 5 % and 0.5 GiB, with the
 * setting that does it where the file is the Hugging Face Trainer's.
 */
function withNoSyncGradients(plan: Plan, peak: BuiltStage, problems: Problem[]): Problem[] {
  if (!(peak.carriedUnsharded > 0)) return problems;
  const synced = buildStages({ ...plan, training: { ...plan.training, syncEveryMicroBatch: true } }, false);
  const syncedPeak = Math.max(...synced.map((s) => s.peakReservedBytes));
  const gain = peak.peakReservedBytes - syncedPeak;
  if (!(gain >= 0.05 * peak.peakReservedBytes && gain >= 2 ** 29)) return problems;
  const hf = /accelerator\.no_sync/.test(plan.sources['training.syncEveryMicroBatch']?.detail ?? '');
  return [...problems, {
    code: 'no-sync-gradients', severity: 'info', paths: ['training.syncEveryMicroBatch', 'training.gradAccum'],
    message: noSyncGradientsMessage(peak.peakReservedBytes, peak.carriedUnsharded, syncedPeak, hf),
  }];
}

/** Parameter counts with every figure finite. */
function safeCounts(plan: Plan): ParameterCounts {
  try {
    const c = countParams(plan.model, plan.lora, plan.parallel.tp);
    return { parameters: clean(c.parameters), trainableParameters: clean(c.trainableParameters), activeParameters: clean(c.activeParameters) };
  } catch {
    return { parameters: 0, trainableParameters: 0, activeParameters: 0 };
  }
}

interface BuiltStage {
  memory: StageMemory; peakReservedBytes: number; hostBytes: number; stepList: number;
  /** Unsharded gradients carried between micro-batches under FSDP's no_sync, bytes (0 when none). */
  carriedUnsharded: number;
}

/** Static terms (model states, buffers, context) per stage signature: stages of one kind share their Term objects. */
type TermCache = Map<string, Partial<Record<MemoryTermName, Term>>>;

/** Computes every stage's numbers and turns them into labelled terms (static terms built once per stage kind). */
function buildStages(plan: Plan, replicated: boolean): BuiltStage[] {
  const c = fillContext(plan, undefined, replicated);
  const label = labeller(plan, c, replicated);
  const cache: TermCache = new Map();
  const out: BuiltStage[] = [];
  let start = 0;
  for (let i = 0; i < c.pp; i++) {
    const n = layersOfStage(c, i);
    const s = computeStage(c, i, start, n, newStageNumbers());
    start += n;
    const x = s.momentInputs;
    out.push({
      memory: toStageMemory(c, s, label, cache), peakReservedBytes: clean(s.reserved), hostBytes: clean(s.hostBytes), stepList: clean(x.stepTemp),
      carriedUnsharded: x.carriedUnsharded && x.accumulating ? clean(x.carriedGrads) : 0,
    });
  }
  return out;
}

/** Stage kind for labels. */
function kindOf(s: StageNumbers, pp: number): StageKind {
  if (pp === 1) return 'only';
  return s.first ? 'first' : s.last ? 'last' : 'middle';
}

type Labeller = (name: MemoryTermName, bytes: number, s: StageNumbers) => Term;

/** Returns a function that labels one term of one stage: formula, citation and the inputs with their sources. */
function labeller(plan: Plan, c: MemoryContext, replicated: boolean): Labeller {
  const src = (path: PlanPath): InputSource =>
    (replicated && path.startsWith('parallel.sharding') ? { kind: 'derived', detail: 'replicated baseline: plain data parallel' } : undefined) ??
    plan.sources?.[path] ?? { kind: 'derived', detail: `from the plan (${path})` };
  const at = (value: TermInput['value'], path: PlanPath): TermInput => ({ value, source: src(path) });
  const der = (value: TermInput['value'], how: string): TermInput => ({ value, source: { kind: 'derived', detail: how } });
  const z = c.zstage;
  const nShard = (from: number) => der(z >= from ? c.nd : 1, z >= from ? `ZeRO/FSDP stage ${z} ≥ ${from}: shard group × CP${c.expertRank > 0 ? ` (experts: ${c.ne})` : ''}` : `not sharded at ZeRO stage ${z}`);
  const psi = (s: StageNumbers) => der(s.paramsPerRank, `parameters of the stage's ${s.layers} layers after TP ${c.tp}${c.expertRank ? ', EP·ETP' : ''}${s.first ? ' + embedding' : ''}${s.last ? ' + final norm/LM head' : ''}`);
  const fullHere = (s: StageNumbers) => [s.first && c.loraEmbed ? 'the embedding' : '', s.last && c.loraHead ? 'the LM head' : ''].filter(Boolean).join(' and ');
  const psiT = (s: StageNumbers) => der(s.trainablePerRank, !c.lora ? 'all parameters train'
    : fullHere(s) ? `LoRA adapter parameters of the stage, and ${fullHere(s)} trained in full (lora.fullModules${c.loraCopies ? ': a trained copy beside the frozen original, PEFT modules_to_save' : ''}; ${c.loraFullParamB + c.loraFullGradB + c.loraFullOptB + c.loraFullMasterB} bytes per parameter for weight, gradient, optimizer states and master)`
      : 'LoRA adapter parameters of the stage');
  const common = () => ({ s: at(plan.training.seqLen, 'training.seqLen'), b: at(c.b, 'training.microBatch'), h: at(c.h, 'model.hiddenSize'), t: at(c.tp, 'parallel.tp') });
  const inputsOf = (name: MemoryTermName, s: StageNumbers): Record<string, TermInput> => {
    switch (name) {
      case 'parameters': return {
        Ψ_rank: psi(s), b_param: der(c.lora ? c.baseBytes : c.paramB, c.lora ? `frozen base dtype (lora.baseDtype)${c.baseWholeBytes > 0 ? ': the 4-bit codes' : ''}${c.loraRestBytes !== c.baseBytes ? (c.headQuantized ? ' in the layers and the head (lora.headQuantized); the embedding stays 16-bit' : ' in the layers; the embedding and head stay 16-bit') : ''}` : `bytes per weight for ${plan.training.precision}`),
        N_shard: nShard(3), offload: at(c.offParams, 'parallel.sharding.offloadParams'),
        ...(c.baseWholeBytes > 0 ? { b_whole: der(c.baseWholeBytes, "bitsandbytes' 4-bit block constants per quantized weight: kept whole on every rank's GPU (the module's quant_state), never sharded or offloaded") } : {}),
      };
      case 'gradients': return { Ψ_train: psiT(s), b_grad: at(c.gradB, 'training.gradDtype'), N_shard: nShard(2) };
      case 'optimizerStates': return { Ψ_train: psiT(s), b_opt: der(c.optB, plan.training.optimizer === 'muon' ? `muon: ${c.optB} state bytes per weight-matrix parameter (one momentum); the embedding, head and norms keep AdamW's ${c.optBRest}` : `${plan.training.optimizer} state bytes per parameter`), N_shard: nShard(1), offload: at(c.offOpt, 'parallel.sharding.offloadOptimizer'),
        ...(c.pagedOpt ? { paged: at(c.pagedOpt, 'training.pagedOptimizer'), Ψ_unpaged: der(c.lora && z === 0 ? s.layers * c.loraUnpaged : 0, `adapter parameters in tensors under 10⁵ elements, whose states bitsandbytes keeps on the GPU in fp32 (${c.pagedStateB} bytes each; optim/optimizer.py get_state_buffer)`) } : {}) };
      case 'masterWeights': return { Ψ_train: psiT(s), b_master: der(c.masterB, `fp32 master copy with ${plan.training.precision}`), N_shard: nShard(1), offload: at(c.offOpt, 'parallel.sharding.offloadOptimizer') };
      case 'gradAccumBuffer': return { Ψ_train: psiT(s), N_shard: nShard(c.style === 'megatron-distopt' ? 1 : 2), fp32GradAccum: at(c.accum, 'training.fp32GradAccum') };
      case 'fp8WeightCache': return { Ψ_linear: der(s.paramsPerRank, 'linear weights of the stage'), N_shard: nShard(3) };
      case 'activations': return {
        ...common(), a: at(c.heads, 'model.heads'), L_stage: der(s.layers, `layers of stage ${s.stage}`), m_inflight: der(s.inFlight, `${plan.parallel.schedule} schedule, stage ${s.stage} of ${c.pp}`),
        sp: at(c.sp, 'parallel.sp'), flash: at(c.flash, 'training.flashAttention'), recompute: at(c.recompute, 'training.recompute'), cp: at(plan.parallel.cp, 'parallel.cp'),
        ...(c.dequantBlock > 0 ? { W_dequant: der(Math.max(c.dequantBlock, s.last ? c.dequantHead : 0), `bytes of a 4-bit weight dequantized for its matmul${plan.lora?.dequantCast ? ' (fp16, and its bf16 cast)' : ''}: the largest block linear's${c.dequantHead > 0 ? ', the head\'s on the last stage' : ''} (bitsandbytes MatMul4Bit; docs/engine-memory.md#qlora-transients)`) } : {}),
        ...(c.prevHeld ? { previousOutput: at(c.prevHeld, 'training.previousOutputHeld') } : {}),
        ...(c.prevHeld && c.heldInputs > 0 ? { held: der(c.heldInputs, "bytes per token and layer of the inputs bitsandbytes' linears hold in ctx.tensors, alive with the previous micro-batch's graph through this forward") } : {}),
      };
      case 'embeddingActivations': return { ...common(), m_inflight: der(s.inFlight, 'in-flight micro-batches') };
      case 'logits': return { ...common(), V: der(c.vocab, 'vocabulary (padded when vocabPadMultiple is set)') };
      case 'gatheredParameters': return { Ψ_unit: der(s.unitParams, 'largest gathered unit (layer or embedding) per rank'), style: at(c.style, 'parallel.sharding.style'), reshardAfterForward: at(c.reshard, 'parallel.sharding.reshardAfterForward'), prefetch: at(c.prefetch, 'parallel.sharding.prefetchBucketElems') };
      case 'commBuffers': return { style: at(c.style, 'parallel.sharding.style'), bucket: at(c.reduceBucket, 'parallel.sharding.reduceBucketElems'), overlap: at(c.overlap, 'parallel.sharding.overlapComm') };
      case 'engineCopies': return { B: at(c.reduceBucket, 'parallel.sharding.reduceBucketElems'), N_shard: nShard(1), stage: at(c.zstage, 'parallel.sharding.stage') };
      case 'cudaContext': return { C_ctx: at(c.ctxBytes, 'overhead.cudaContextBytes') };
      case 'fragmentation': return { f: at(c.frag, 'overhead.allocatorFragmentation') };
    }
  };
  return (name, bytes, s) => {
    const info = TERM_INFO[name];
    return { name, label: info.label, bytes: clean(bytes), formula: info.formula, citation: info.citation, inputs: inputsOf(name, s) };
  };
}

/** Terms that do not depend on the stage's position in the schedule, with whether they are always shown. */
const STATIC_TERMS: readonly [MemoryTermName, keyof StageNumbers, boolean][] = [
  ['parameters', 'parameters', true], ['gradients', 'gradients', true], ['optimizerStates', 'optimizerStates', true],
  ['masterWeights', 'masterWeights', false], ['gradAccumBuffer', 'gradAccumBuffer', false], ['fp8WeightCache', 'fp8WeightCache', false],
  ['gatheredParameters', 'gatheredParameters', false], ['commBuffers', 'commBuffers', false], ['cudaContext', 'cudaContext', true],
];
const DYNAMIC_TERMS: readonly [MemoryTermName, keyof StageNumbers, boolean][] = [
  ['activations', 'activations', true], ['embeddingActivations', 'embeddingActivations', false], ['logits', 'logits', false],
  ['engineCopies', 'engineCopies', false], ['fragmentation', 'fragmentation', true],
];

/** Builds the labelled StageMemory of one stage. */
function toStageMemory(c: MemoryContext, s: StageNumbers, label: Labeller, cache: TermCache): StageMemory {
  const key = `${s.layers}|${s.moeLayers}|${s.first}|${s.last}|${s.peakMoment}`;
  let fixed = cache.get(key);
  if (!fixed) {
    fixed = {};
    for (const [name, field, always] of STATIC_TERMS) {
      // States live at the peak moment (gradients of engines that free them are absent before the backward).
      const bytes = field in s.shown ? s.shown[field as Exclude<keyof MomentTerms, 'name'>] : s[field] as number;
      if (always || bytes > 0) fixed[name] = label(name, bytes, s);
    }
    cache.set(key, fixed);
  }
  const terms: Partial<Record<MemoryTermName, Term>> = {};
  for (const [name, , always] of STATIC_TERMS) if (fixed[name] || always) terms[name] = fixed[name];
  for (const [name, field, always] of DYNAMIC_TERMS) {
    const bytes = s[field] as number;
    if (always || bytes > 0) terms[name] = label(name, bytes, s);
  }
  return {
    stage: s.stage, kind: kindOf(s, c.pp), layers: s.layers, parametersPerRank: clean(s.paramsPerRank), inFlightMicrobatches: clean(s.inFlight),
    terms, modelStatesBytes: clean(s.modelStates), gradientBytes: clean(s.gradients + s.gradAccumBuffer), activationBytes: clean(s.activationTotal),
    peakAllocatedBytes: clean(s.allocated), peakReservedBytes: clean(s.reserved), peaks: categoryPeaks(s),
    activationPeak: { activations: clean(s.keptActivations), logits: clean(s.largestLogits) }, peakMoment: s.shown.name,
  };
}

/**
 * torch's categories (MemTracker: tensors made in forward are activations, the recomputation included; tensors made in
 * backward that are not gradients are temporaries) with the peak of each on its own, for the fake-tensor oracle.
 */
function categoryPeaks(s: StageNumbers): NonNullable<StageMemory['peaks']> {
  const p = s.peaks;
  return {
    parameters: clean(p.parameters), gradients: clean(p.gradients), optimizer: clean(p.optimizer), activations: clean(p.activations),
    temporaries: clean(p.temporaries), other: clean(p.other), total: clean(s.allocated - s.cudaContext),
  };
}
