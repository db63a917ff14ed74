/**
 * Per-stage numbers: applies the sharding map and calls one term function per physical term. Shared by the traceable
 * estimate (which adds labels and inputs) and the fast path (which only keeps the peak). No formula lives twice.
 *
 * Sharding map: attention and MLP matrices and the vocabulary are TP-sharded (k/v replicated when tp > KV heads);
 * norms and routers are replicated over TP; layers are owned by their PP stage (embedding on the first, final norm and
 * LM head on the last); routed experts are split over EP·ETP; ZeRO/FSDP divide states over the shard group × CP
 * (experts over the expert-data-parallel group shard·CP·TP/(EP·ETP)).
 */
import { moeLayersIn } from '../model/params';
import { zeroGradReduceEveryMicrobatch } from '../comm/volumes';
import {
  checkpointedLayerBytes, checkpointedLayerCount, embeddingActivationBytes, embeddingOutputGradientBytes, headInputGradientBytes,
  layerActivationBytes, recomputeWorkingBytes, stageLayerActivationBytes,
} from './activations';
import { allocatorCachedBytes } from './allocator';
import { commBufferBytes, cudaContextBytes, fsdp2RootBytes, gatheredParameterBytes } from './buffers';
import { fillLossParts } from './lossParts';
import {
  gradientsFreedAfterStep, momentTotal, newMomentInputs, newMoments, raiseCategoryPeaks, stageMoments, type CategoryBytes, type MomentInputs, type MomentTerms,
} from './moments';
import type { MemoryContext } from './context';
import { fillDsBuffers, newDsBuffers, type DsBuffers } from './deepspeed';
import { deepspeedMoments, prepareDsInputs } from './deepspeedMoments';
import { keptLayerActivations, stageInFlight } from './inFlight';
import { doraForwardTransientBytes, loraWidthsOf } from './loraSaves';
import { fillPipelineInputs, newPipelineInputs, pipelineMoments, type PipelineInputs } from './pipelineMoments';
import {
  fp8ParameterSavingBytes, fp8WeightCacheBytes, gradAccumBufferBytes, gradientBytes, masterWeightBytes, noSyncCarriedGradientBytes, optimizerStateBytes, parameterBytes,
} from './modelStates';

/** Numbers of one stage on one rank, bytes unless stated. */
export interface StageNumbers {
  stage: number; layers: number; moeLayers: number; first: boolean; last: boolean;
  /** Parameters held before ZeRO sharding (after TP/PP/EP), and the trainable ones among them. */
  paramsPerRank: number; trainablePerRank: number;
  /** Largest gathered unit (layer or embedding), parameters per rank. */
  unitParams: number;
  inFlight: number;
  /** Layer and embedding activations of ONE in-flight micro-batch (activations = inFlight · layer part + recompute working set). */
  layerActPerMicrobatch: number; embeddingActPerMicrobatch: number;
  parameters: number; gradients: number; optimizerStates: number; masterWeights: number; gradAccumBuffer: number;
  fp8WeightCache: number;
  activations: number; embeddingActivations: number; logits: number;
  /** Recomputation working set of one layer (full recomputation). */
  working: number;
  /** FSDP2: gathered bytes of the root (embedding, final norm, head of the stage), of one block and of the head. */
  rootBytes: number; unitBytes: number; headBytes: number;
  /** torch's categories (MemTracker) with the peak of each on its own over the step's moments (shared/memory/moments.ts). */
  peaks: CategoryBytes;
  /** Which moment of the step the stage peaks at (shared/memory/moments.ts order), and the terms live then. */
  peakMoment: number; shown: MomentTerms;
  /**
   * What the micro batch drives, whatever moment the whole stage peaks at (filled with the categories): the activations
   * the in-flight micro-batches keep for their backward (layers and embedding), and the largest logits of any moment
   * (the loss's copies included).
   */
  keptActivations: number; largestLogits: number;
  /** Scratch of the moment computation, refilled on every call. */
  moments: MomentTerms[]; momentInputs: MomentInputs;
  /** Scratch of a pipeline stage's moments (shared/memory/pipelineMoments.ts). */
  pipeline: PipelineInputs;
  gatheredParameters: number; commBuffers: number; cudaContext: number; fragmentation: number;
  /** The engine's transient copies at the peak moment (DeepSpeed's reduction, norm and step copies). */
  engineCopies: number;
  /** DeepSpeed's own buffers of the stage (shared/memory/deepspeed.ts; kind 0 for other engines). */
  ds: DsBuffers;
  /** Bytes this rank keeps in host memory (offload). */
  hostBytes: number;
  modelStates: number; activationTotal: number; allocated: number; reserved: number;
}

/** A zeroed StageNumbers object to refill. */
export function newStageNumbers(): StageNumbers {
  const moments = newMoments();
  return {
    stage: 0, layers: 0, moeLayers: 0, first: false, last: false, paramsPerRank: 0, trainablePerRank: 0, unitParams: 0,
    inFlight: 0, layerActPerMicrobatch: 0, embeddingActPerMicrobatch: 0, parameters: 0, gradients: 0, optimizerStates: 0, masterWeights: 0, gradAccumBuffer: 0, fp8WeightCache: 0,
    activations: 0, embeddingActivations: 0, logits: 0, working: 0, rootBytes: 0, unitBytes: 0, headBytes: 0,
    peaks: { parameters: 0, gradients: 0, optimizer: 0, activations: 0, temporaries: 0, other: 0 }, peakMoment: 0, keptActivations: 0, largestLogits: 0,
    moments, shown: moments[0], momentInputs: newMomentInputs(), pipeline: newPipelineInputs(), gatheredParameters: 0, commBuffers: 0, engineCopies: 0,
    ds: newDsBuffers(), cudaContext: 0,
    fragmentation: 0, hostBytes: 0, modelStates: 0, activationTotal: 0, allocated: 0, reserved: 0,
  };
}

/** Fills `o` with the numbers of pipeline stage `stage` holding `layers` layers starting at layer `start`. */
export function computeStage(c: MemoryContext, stage: number, start: number, layers: number, o: StageNumbers): StageNumbers {
  return computeStageActivations(c, computeStageStates(c, stage, start, layers, o));
}

/**
 * The first half of computeStage: model states, fp8 cache, gathered parameters, comm buffers and host bytes, which read
 * no micro batch, accumulation or recomputation field of the context (the planner keeps them per layout family).
 */
export function computeStageStates(c: MemoryContext, stage: number, start: number, layers: number, o: StageNumbers): StageNumbers {
  const first = stage === 0, last = stage === c.pp - 1;
  // FSDP2's pipeline terms depend on the states only: computed again with the next activations half.
  o.pipeline.statesKept = false;
  const nMoe = moeLayersIn(c.model, start, start + layers);
  const layerDense = layers * c.attnRank + (layers - nMoe) * c.denseMlpRank + nMoe * c.moeDenseRank;
  const dense = layerDense + (first ? c.embedRank + c.positions : 0) + (last ? c.finalNorm + c.headRank + c.mtpRank : 0);
  const expert = nMoe * c.expertRank;
  const lora = layers * c.loraPerLayer;
  // Modules LoRA trains in full on this stage (PEFT modules_to_save: the embedding on the first, the head on the last).
  const full = (first && c.loraEmbed ? c.embedRank : 0) + (last && c.loraHead ? c.headRank : 0);
  const trainable = lora + full;
  const z = c.zstage;
  const accumFrom = c.style === 'megatron-distopt' ? 1 : 2;
  // ZeRO divisors: a state is sharded from ZeRO stage `from` on (dense over nd, experts over ne).
  // FSDP2 shards parameters at any stage ≥ 2 (fully_shard; stage 2 only keeps them gathered after the forward).
  const shardParams = z >= 3 || (c.style === 'fsdp2' && z >= 2);
  const dP = shardParams ? c.nd : 1, eP = shardParams ? c.ne : 1;
  const dG = z >= 2 ? c.nd : 1, eG = z >= 2 ? c.ne : 1;
  const dO = z >= 1 ? c.nd : 1, eO = z >= 1 ? c.ne : 1;
  const dA = z >= accumFrom ? c.nd : 1, eA = z >= accumFrom ? c.ne : 1;
  let parameters: number, gradients: number, optimizerStates: number, masterWeights: number, gradAccumBuffer: number;
  // Lightning's bitsandbytes precision quantizes the head too (headQuantized): it then counts with the layers.
  const qHead = last && c.headQuantized ? c.headRank : 0;
  if (c.lora) {
    // Frozen base in its storage dtype (QLoRA: NF4); adapters train normally.
    // A quantized base quantizes the layers' linear weights only: the embedding and head stay 16-bit (loraRestBytes).
    // A module trained in full is held in the trained dtype: beside its frozen original when PEFT copies it
    // (ModulesToSaveWrapper), in place of it otherwise (DeepSpeed-Chat without --only_optimize_lora).
    parameters = parameterBytes(layerDense + qHead, c.baseBytes, dP) + parameterBytes(dense - layerDense - qHead - (c.loraCopies ? 0 : full), c.loraRestBytes, dP)
      + parameterBytes(expert, c.baseBytes, eP) + parameterBytes(lora, c.paramB, dP) + parameterBytes(full, c.loraFullParamB, dP);
    gradients = gradientBytes(lora, c.gradB, dG) + gradientBytes(full, c.loraFullGradB, dG);
    optimizerStates = optimizerStateBytes(lora, c.optB, dO) + optimizerStateBytes(full, c.loraFullOptB, dO);
    masterWeights = masterWeightBytes(lora, c.masterB, dO) + masterWeightBytes(full, c.loraFullMasterB, dO);
    gradAccumBuffer = c.accum ? gradAccumBufferBytes(trainable, dA) : 0;
  } else {
    parameters = parameterBytes(dense, c.paramB, dP) + parameterBytes(expert, c.paramB, eP);
    gradients = gradientBytes(dense, c.gradB, dG) + gradientBytes(expert, c.gradB, eG);
    optimizerStates = optimizerStateBytes(layerDense, c.optB, dO) + optimizerStateBytes(dense - layerDense, c.optBRest, dO) + optimizerStateBytes(expert, c.optB, eO);
    masterWeights = masterWeightBytes(dense, c.masterB, dO) + masterWeightBytes(expert, c.masterB, eO);
    gradAccumBuffer = c.accum ? gradAccumBufferBytes(dense, dA) + gradAccumBufferBytes(expert, eA) : 0;
  }
  const fp8WeightCache = c.fp8 ? fp8WeightCacheBytes(layerDense + expert, z >= 3 ? c.nd : 1, c.fp8Params) : 0;
  if (c.fp8Params && !c.lora) parameters -= fp8ParameterSavingBytes(layerDense + expert, c.paramB, dP);
  let hostBytes = 0;
  if (c.offOpt !== 'none') {
    if (c.offOpt === 'cpu') hostBytes += optimizerStates + masterWeights + gradAccumBuffer;
    optimizerStates = 0; masterWeights = 0; gradAccumBuffer = 0;
  }
  if (c.offParams !== 'none' && z >= 3) {
    if (c.offParams === 'cpu') hostBytes += parameters;
    parameters = 0;
    // FSDP's parameter offload moves the sharded gradients too (FSDP1 CPUOffload(offload_params=True): the flat
    // parameter's `_cpu_grad`; FSDP2 CPUOffloadPolicy: the sharded `.grad` copied to the host after the reduce-scatter).
    if (c.style === 'fsdp' || c.style === 'fsdp2') {
      hostBytes += gradients;
      gradients = 0;
    }
  }
  // bitsandbytes' 4-bit constants stay whole on every GPU, whatever shards or offloads the codes (quantizedBase.ts).
  if (c.lora) parameters += (layerDense + expert + qHead) * c.baseWholeBytes;
  // bitsandbytes' paged optimizer states live in unified memory that the driver pages to CPU memory under pressure
  // (Dettmers et al. 2023 §2): never the cause of an out-of-memory error, so counted with the host's bytes.
  // The states of tensors under 10⁵ elements are ordinary GPU tensors even then (model/params.ts loraUnpagedParams): an
  // unsharded engine's adapters; a sharding engine hands the optimizer its flat or sharded parameters, counted as paged.
  if (c.pagedOpt) {
    const unpaged = c.lora && z === 0 ? optimizerStateBytes(layers * c.loraUnpaged, c.pagedStateB, 1) : 0;
    hostBytes += Math.max(0, optimizerStates - unpaged);
    optimizerStates = unpaged;
  }
  // torchtune's optimizer in the backward applies each gradient as soon as it is final and frees it (torch
  // register_post_accumulate_grad_hook): one weight's gradient at a time, at most the stage's largest.
  if (c.optInBwd) {
    const largest = c.lora ? Math.max(c.largestLayerParam, first && c.loraEmbed ? c.embedRank : 0, last && c.loraHead ? c.headRank : 0) : Math.max(layers > 0 ? c.largestLayerParam : 0, first ? c.embedRank : 0, last ? c.headRank : 0);
    gradients = Math.min(gradients, gradientBytes(largest, c.gradB, dG));
  }
  const perLayerUnit = c.attnRank + Math.max(c.denseMlpRank, nMoe > 0 ? c.moeDenseRank + c.expertRank : 0);
  // FSDP2 wraps each block; the embedding and head belong to the root group, counted on its own (fsdp2RootBytes).
  const unitParams = c.style === 'fsdp2' && layers > 0 ? perLayerUnit : Math.max(layers > 0 ? perLayerUnit : 0, first ? c.embedRank : 0, last ? c.headRank : 0);
  const stageParams = dense + expert + lora;
  const gatherB = c.lora ? c.baseBytes : c.gatherB;
  const gatheredParameters = z >= 3
    ? gatheredParameterBytes(c.style, unitParams, stageParams, gatherB, c.lora ? 0 : gatherB, c.reshard, c.prefetch, c.maxLive)
    : 0;
  o.rootBytes = c.style === 'fsdp2' && z >= 2 ? fsdp2RootBytes((first ? c.embedRank + c.positions : 0) + (last ? c.finalNorm + c.headRank + c.mtpRank : 0), gatherB) : 0;
  o.unitBytes = c.style === 'fsdp2' && z >= 2 && layers > 0 ? perLayerUnit * gatherB : 0;
  o.headBytes = c.style === 'fsdp2' && z >= 2 && last ? c.headRank * gatherB : 0;
  // Megatron's DDP buckets are views into its contiguous grad buffer (megatron/core/distributed/param_and_grad_buffer.py);
  // torch DDP copies gradients into buckets only when it wraps the model (more than one data-parallel rank).
  const noBucketCopy = c.style === 'ddp' && (c.regime === 'megatron' || c.dp <= 1);
  // Expert-parallel experts hold different weights on every EP rank, so torch DDP is told to leave them out
  // (`_ddp_params_and_buffers_to_ignore`, as Axolotl's expert-parallel plugin sets it in shard.py): no bucket copies.
  const bucketed = c.lora ? trainable : c.style === 'ddp' && c.ep > 1 ? stageParams - expert : stageParams;
  let commBuffers = noBucketCopy ? 0 : commBufferBytes(c.style, z, bucketed, c.gradB, c.reduceBucket, c.allgatherBucket, c.overlap, c.contiguous);
  // DeepSpeed's engine: its buckets, gradient partitions and ZeRO-3 gathered parameters (shared/memory/deepspeed.ts).
  const ds = fillDsBuffers(c, first, last, layers, stageParams, o.ds);
  // DeepSpeed ZeRO++ hpZ keeps a secondary copy of the weights in 16 bits, partitioned over hpz ranks of a node, for
  // the backward's gathers (Wang et al. 2023 §4.2): Ψ_stage·b_param/hpz more per GPU, held all step like the buckets.
  const hpzBytes = c.hpz > 1 && z >= 3 ? (stageParams * gatherB) / c.hpz : 0;
  if (ds.kind === 3) ds.bucket += hpzBytes;
  if (ds.kind !== 0) commBuffers = ds.bucket;
  else commBuffers += hpzBytes;
  const modelStates = parameters + gradients + optimizerStates + masterWeights + gradAccumBuffer;
  o.stage = stage; o.layers = layers; o.moeLayers = nMoe; o.first = first; o.last = last;
  o.paramsPerRank = stageParams; o.trainablePerRank = c.lora ? trainable : stageParams; o.unitParams = unitParams;
  o.parameters = parameters; o.gradients = gradients; o.optimizerStates = optimizerStates; o.masterWeights = masterWeights;
  o.gradAccumBuffer = gradAccumBuffer; o.fp8WeightCache = fp8WeightCache; o.gatheredParameters = ds.kind === 3 ? ds.gathered : gatheredParameters;
  o.commBuffers = commBuffers; o.hostBytes = hostBytes; o.modelStates = modelStates;
  return o;
}

/**
 * The second half of computeStage: activations of the in-flight micro-batches (micro batch, accumulation and
 * recomputation of the context), then the totals, CUDA context and the caching allocator's cached bytes, on a stage `o`
 * whose states are filled.
 * `categories` = false skips torch's per-category peaks (`o.peaks`), which only the traceable estimate shows.
 */
export function computeStageActivations(
  c: MemoryContext, o: StageNumbers, layerAct = stageLayerActs(c, o.layers, o.moeLayers), categories = true,
): StageNumbers {
  const stage = o.stage, layers = o.layers, nMoe = o.moeLayers, first = o.first, last = o.last;
  const inFlight = stageInFlight(c, stage);
  // DoRA's weight-norm transient runs in every forward of a layer: the last block's and each recomputed one's.
  const ffn = nMoe > 0 ? Math.max(c.ffn, c.moeFfn) : c.ffn;
  const dora = layers > 0 && c.loraSaves?.dora ? doraForwardTransientBytes(c.loraSaves, loraWidthsOf(c, ffn), c.actBytes, c.paramB) : 0;
  const recomputed = recomputeWorkingBytes(c, c.recompute, layers, ffn, nMoe > 0 ? c.moeRouteSaves : 0, nMoe > 0);
  const working = recomputed > 0 ? recomputed + dora : 0;
  const embAct = first ? embeddingActivationBytes(c) : 0;
  // The stage peaks at the largest moment of its step (shared/memory/moments.ts), not at the sum of every term's peak.
  // Inputs and moments are the stage record's own scratch: nothing is allocated per call (the planner's fast path).
  const x = o.momentInputs;
  x.first = first; x.last = last; x.parameters = o.parameters; x.gradients = o.gradients; x.optimizerStates = o.optimizerStates;
  x.masterWeights = o.masterWeights; x.gradAccumBuffer = o.gradAccumBuffer; x.fp8WeightCache = o.fp8WeightCache;
  x.commBuffers = o.commBuffers; x.gathered = o.gatheredParameters; x.rootBytes = o.rootBytes; x.unitBytes = o.unitBytes;
  x.headBytes = o.headBytes; x.unitShardedGrad = o.unitBytes > 0 ? (o.unitBytes / c.gatherB) * c.gradB / c.nd : 0;
  x.rootShardedGrad = o.rootBytes > 0 ? (o.rootBytes / c.gatherB) * c.gradB / c.nd : 0; x.reduceRatio = c.reduceB / c.gatherB;
  x.layerActivations = inFlight * keptLayerActivations(c, layers, layerAct); x.embeddingActivations = inFlight * embAct; x.working = working; x.doraTransient = dora;
  x.stepCopy = c.regime === 'megatron' && c.gradB < 4 ? o.masterWeights : 0;
  fillBlockBackward(c, o, layerAct, x);
  fillLossParts(c, last, x, ffn);
  fillQuantizedTransients(c, o, x);
  x.accumulating = c.m > 1;
  // FSDP without the sync keeps every gradient unsharded until the last micro-batch reduces it (modelStates.ts).
  x.carriedUnsharded = c.zstage >= 2 && !zeroGradReduceEveryMicrobatch(c.style, !c.syncLast);
  x.carriedGrads = x.carriedUnsharded ? noSyncCarriedGradientBytes(c.style, o.trainablePerRank, c.reduceB, c.gatherB) : o.gradients;
  x.stepTemp = c.foreachStep ? o.optimizerStates / 2 : 0;
  prepareDsInputs(x, o.ds);
  // A torch or Megatron pipeline stage has its own moments (the schedule's tensors, FSDP2 between micro-batches).
  const count = c.pp > 1 && c.ppEngine !== 'other'
    ? pipelineMoments(c, x, fillPipelineInputs(c, o, x, o.pipeline), o.moments)
    : deepspeedMoments(x, o.ds, o.moments, stageMoments(c, x, o.moments));
  // The peak reserved is the largest need over the moments: tensors plus what the caching allocator holds cached then
  // (shared/memory/allocator.ts); it never gives memory back during a step. Allocated is the largest moment's tensors.
  let at = 0, best = -1, allocatedPeak = 0;
  const peaks = o.peaks;
  o.keptActivations = x.layerActivations + x.embeddingActivations; o.largestLogits = 0;
  peaks.parameters = peaks.gradients = peaks.optimizer = peaks.activations = peaks.temporaries = peaks.other = 0;
  for (let i = 0; i < count; i++) {
    const t = momentTotal(o.moments[i]);
    const need = t + allocatorCachedBytes(c, o.moments[i], x, t);
    if (need > best) { best = need; at = i; }
    if (t > allocatedPeak) allocatedPeak = t;
    if (categories) {
      raiseCategoryPeaks(o.moments[i], peaks);
      if (o.moments[i].logits > o.largestLogits) o.largestLogits = o.moments[i].logits;
    }
  }
  const m = o.moments[at];
  // The terms shown are what is live at that moment (the states stay as computed: the fast path reuses them);
  // backward temporaries are shown with what they are the gradients of: the layers' with the activations, the loss's
  // and the head's with the logits.
  o.shown = m;
  const blockTemps = m.name === 'layers backward' ? m.temporaries : 0;
  const activations = m.activations + blockTemps, embeddingActivations = m.embeddingActivations, logits = m.logits + m.temporaries - blockTemps;
  const activationTotal = activations + embeddingActivations + logits;
  const cudaContext = cudaContextBytes(c.ctxBytes);
  const fragmentation = best - momentTotal(m);
  o.working = working; o.peakMoment = at;
  o.inFlight = inFlight; o.layerActPerMicrobatch = layerAct; o.embeddingActPerMicrobatch = embAct;
  o.activations = activations; o.embeddingActivations = embeddingActivations; o.logits = logits; o.engineCopies = m.engineCopies;
  o.cudaContext = cudaContext; o.fragmentation = fragmentation; o.activationTotal = activationTotal;
  o.allocated = allocatedPeak + cudaContext; o.reserved = best + cudaContext;
  return o;
}

/**
 * A 4-bit base's transients (shared/memory/quantizedTransients.ts): its dequantized weights — in the forward the last
 * block's largest linear, or on the last stage the head's beside the logits where the head is quantized (the block's
 * moment comes before the logits exist: it counts only where it is the higher) — and, where the loop keeps the previous
 * micro-batch's output, that output and the inputs bitsandbytes' linears hold in its graph (the head's too when quantized).
 */
function fillQuantizedTransients(c: MemoryContext, o: StageNumbers, x: MomentInputs): void {
  const blockDq = o.layers > 0 ? c.dequantBlock : 0, headDq = o.last ? c.dequantHead : 0;
  x.dequantForward = Math.max(headDq, blockDq - (o.last ? x.head + x.logits : 0), 0);
  x.dequantBlock = blockDq; x.dequantHead = headDq;
  const tokens = c.sLocal * c.b;
  const heldHead = o.last && c.headQuantized && c.heldInputs > 0 ? c.actBytes * tokens * c.h : 0;
  x.previousHeld = c.prevHeld ? (o.last ? x.logits : 0) + c.heldInputs * tokens * o.layers + heldHead : 0;
}

/**
 * What one block's backward adds (shared/memory/moments.ts, the layers' backward): the next block prefetched is in the
 * gathered parameters; its first weight gradient — the MLP's down projection, h·f/t, in the unsharded gradient dtype —
 * on engines whose gradients appear in the backward (Megatron accumulates into main_grad instead); two activation
 * gradients of the MLP width, 2·B·T·f/t, as the down projection's backward hands them to the activation function; the
 * gradients a finished block leaves (FSDP2: its sharded gradient and the reduce-scatter input FSDP keeps for one more
 * group; a replicated engine: the block's whole gradient); the saved bytes one layer frees; the head's gradient.
 */
function fillBlockBackward(c: MemoryContext, o: StageNumbers, layerAct: number, x: MomentInputs): void {
  // DeepSpeed's gradients are its own buffers' (shared/memory/deepspeed.ts): the generic terms below stay 0 for it.
  const dynamic = gradientsFreedAfterStep(c) && c.style !== 'deepspeed';
  const fsdp2 = c.style === 'fsdp2' && c.zstage >= 2;
  const ffn = o.moeLayers > 0 ? Math.max(c.ffn, c.moeFfn) : c.ffn;
  // The head's and embedding's gradients in their gradient dtype (under LoRA, a module trained in full: loraFullGradB).
  const gB = c.lora ? c.loraFullGradB : c.gradB;
  const weightB = fsdp2 ? c.gatherB : gB / (c.zstage >= 2 ? c.nd : 1);
  const unitParams = fsdp2 ? o.unitBytes / c.gatherB : o.unitParams;
  x.actGrads = o.layers > 0 ? (2 * c.actBytes * c.sLocal * c.b * ffn) / c.tp : 0;
  // LoRA trains only the adapters: the frozen weights get no gradient.
  // transformers' and torchtitan's experts are stacked parameters ((E, 2f, h) and (E, h, f); torchtitan's w1, w2, w3):
  // a MoE layer's backward makes each whole, the down projection's before the up projections' (grouped_mm's weight
  // gradient), so the layer's expert gradients are all made before its attention's.
  const stacked = o.moeLayers > 0 && (c.impl === 'hf' || c.impl === 'torchtitan') ? c.expertRank * weightB : 0;
  const denseGrad = ((c.h * ffn) / c.tp) * weightB;
  x.weightGrad = dynamic && o.layers > 0 && !c.lora ? Math.max(denseGrad, stacked) : 0;
  // By then that layer's MLP saves on the S routed copies and the down projection's output (B·S·h) are freed.
  const S = c.sLocal * c.b * (c.model.moe?.topK ?? 1);
  x.expertSavesFreed = x.weightGrad > denseGrad ? ((c.gated ? 4 : 2) * c.actBytes * c.sLocal * c.b * c.moeFfn) / c.tp + c.actBytes * S * c.h : 0;
  // LoRA freezes the embedding and head unless it trains them in full (PEFT modules_to_save).
  const headFrozen = c.lora && !c.loraHead, embedFrozen = c.lora && !c.loraEmbed;
  x.headGrad = !o.last || headFrozen ? 0 : fsdp2 ? o.headBytes : dynamic ? (c.headRank + c.finalNorm) * weightB : 0;
  x.blockGrad = o.layers < 2 || !dynamic ? 0 : c.lora ? c.loraPerLayer * c.gradB
    : fsdp2 ? x.unitShardedGrad + o.unitBytes * x.reduceRatio : unitParams * weightB;
  x.layerSaved = o.layers < 2 ? 0 : layerAct / o.layers;
  x.working1 = x.working;
  if (c.recompute === 'selective' && c.acPolicy === 'torchtitan-layer' && o.layers > 0) {
    // torchtitan checkpoints blocks N, 2N, … (1-based): the backward starts at the last block, checkpointed or not. A
    // fractional N (a memory budget) checkpoints block i where the count i crosses a multiple of N (⌊L/N⌋ in all).
    const every = Math.max(1, c.acEvery);
    const ck = (i: number) => i >= 0 && Math.floor((i + 1) / every) > Math.floor(i / every);
    const full = layerActivationBytes(c, 'none', ffn), input = checkpointedLayerBytes(c);
    x.layerSaved = o.layers < 2 ? 0 : ck(o.layers - 1) ? input : full;
    x.working1 = ck(o.layers - 2) ? x.working : 0;
    x.working = ck(o.layers - 1) ? x.working : 0;
  }
  // The head's gradient as made: FSDP2 and replicated engines make it in the parameter (or unsharded) dtype next to the
  // logits' gradient; autocast makes it in 16 bits and casts it to the fp32 weight's dtype once the logits' gradient is
  // freed; Megatron accumulates it straight into main_grad (gradient_accumulation_fusion).
  const headW = o.last && !headFrozen ? c.headRank : 0;
  const logitsGrad = o.last ? c.actBytes * c.sLocal * c.b * (c.vocab / c.tp) : 0;
  x.headGradCreate = !dynamic ? logitsGrad : c.autocastHeadBytes > 0 ? c.autocastHeadBytes + headW * c.gradB : logitsGrad + x.headGrad;
  x.forwardCache = c.autocastWeightBytes * checkpointedLayerCount(c, o.layers, c.recompute, c.recomputeLayers);
  // The embedding's gradient as made: Megatron's `.grad` in the parameter dtype (kept until its hook); engines whose
  // gradients appear in the backward make it in the gradient dtype, and a tied head on the same stage adds its own
  // contribution and their sum (three at once) before AccumulateGrad assigns it.
  // A DTensor vocab-parallel embedding without FSDP (torchtitan TP alone) keeps its gradient for the whole vocabulary
  // until the optimizer step copies its own rows out (DTensor redistribution to the weight's Shard(0)).
  const tiedHere = o.first && o.last && c.model.tiedEmbeddings;
  const dtensorAlone = c.impl === 'torchtitan' && c.tp > 1 && !fsdp2 && dynamic && o.first && !embedFrozen;
  const embWhole = dtensorAlone ? c.tp : 1;
  x.embedGradKept = c.regime === 'megatron' && o.first && !embedFrozen ? c.embedRank * c.paramB
    : dtensorAlone ? (c.tp - 1) * c.embedRank * c.gradB : 0;
  x.embedGrad = !o.first || embedFrozen || fsdp2 ? 0 : c.regime === 'megatron' ? x.embedGradKept
    : dynamic ? c.embedRank * gB * embWhole * (tiedHere ? 3 : 1) : 0;
  x.embedGradFinal = x.embedGrad > 0 && dynamic ? c.embedRank * gB * embWhole : 0;
  x.embedGradAtStep = dtensorAlone ? x.embedGradKept : 0;
  // Megatron's model: what its embedding's and head's backwards make besides the weight gradients (the oracle's
  // Megatron model allocates them as TE and megatron-core do; the eager models' are not modelled).
  const megatronModel = c.impl === 'megatron';
  x.embedOutputGrad = megatronModel && x.embedGrad > 0 ? embeddingOutputGradientBytes(c) : 0;
  x.headInputGrad = megatronModel && o.last ? headInputGradientBytes(c) : 0;
  if (dtensorAlone) x.stepCopy += c.embedRank * c.gradB;
  // FSDP2's root: a DTensor vocab-parallel embedding (torchtitan TP, RowwiseParallel) makes the dense gradient of the
  // whole vocabulary, then copies its own rows out (t + 1 local sizes at once); the head's unsharded gradient is still
  // held when the root's reduce-scatter output is cast (torch 2.13's fully_shard, seen in the oracle grid: the autograd
  // engine releases the head's gradient only after the root's post-backward hook returns).
  const dtensorTp = c.impl === 'torchtitan' && c.tp > 1;
  x.embedGradMade = fsdp2 && o.first && !embedFrozen ? c.embedRank * c.gatherB * (dtensorTp ? c.tp + 1 : 1) : 0;
  x.embedDense = fsdp2 && o.first && !embedFrozen ? c.embedRank * c.gatherB * (dtensorTp ? c.tp : 1) : 0;
  x.headGradHeld = fsdp2 ? o.headBytes : 0;
  x.rootReduceOutput = fsdp2 ? (o.rootBytes * x.reduceRatio) / c.nd : 0;
  x.lossInRoot = c.impl === 'hf';
  x.kept = fsdp2 && !(c.reshard && c.zstage >= 3) ? o.rootBytes + o.unitBytes * o.layers : 0;
  x.replicaHeld = fsdp2 && c.replicas > 1 ? (Math.max(0, o.gradients - x.rootShardedGrad) / c.gradB) * c.reduceB : 0;
}

/**
 * Activation bytes one micro-batch leaves in a stage's `layers` layers, `moeLayers` of them MoE: dense and MoE layers
 * differ in MLP width; recomputed layers are taken from the dense ones first. The same for stages with equal counts.
 */
export function stageLayerActs(c: MemoryContext, layers: number, moeLayers: number): number {
  const rDense = Math.min(layers - moeLayers, c.recomputeLayers);
  // A kind with no layers adds nothing (skipped: dense models never pay for the MoE width).
  const dense = layers > moeLayers ? stageLayerActivationBytes(c, layers - moeLayers, c.recompute, rDense) : 0;
  return moeLayers > 0 ? dense + stageLayerActivationBytes(c, moeLayers, c.recompute, c.recomputeLayers - rDense, c.moeFfn, c.moeRouteSaves, true) : dense;
}
