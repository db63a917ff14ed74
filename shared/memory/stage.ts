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
import {
  embeddingActivationBytes, inFlightMicrobatchCount, outputLayerInputBytes, recomputeWorkingBytes, stageLayerActivationBytes,
} from './activations';
import { commBufferBytes, cudaContextBytes, fragmentationBytes, fsdp2RootBytes, gatheredParameterBytes } from './buffers';
import { lossBackwardBytes, lossForwardBytes, lossSavedBytes } from './loss';
import type { MemoryContext } from './context';
import {
  fp8WeightCacheBytes, gradAccumBufferBytes, gradientBytes, masterWeightBytes, optimizerStateBytes, parameterBytes,
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
  /** Last stage: output-layer inputs + the loss's forward copies; the tensors its backward adds; recomputation working set. */
  lossForward: number; lossBackwardNew: number; working: number;
  gatheredParameters: number; commBuffers: number; cudaContext: number; fragmentation: number;
  /** Bytes this rank keeps in host memory (offload). */
  hostBytes: number;
  modelStates: number; activationTotal: number; allocated: number; reserved: number;
}

/** A zeroed StageNumbers object to refill. */
export function newStageNumbers(): StageNumbers {
  return {
    stage: 0, layers: 0, moeLayers: 0, first: false, last: false, paramsPerRank: 0, trainablePerRank: 0, unitParams: 0,
    inFlight: 0, layerActPerMicrobatch: 0, embeddingActPerMicrobatch: 0, parameters: 0, gradients: 0, optimizerStates: 0, masterWeights: 0, gradAccumBuffer: 0, fp8WeightCache: 0,
    activations: 0, embeddingActivations: 0, logits: 0, lossForward: 0, lossBackwardNew: 0, working: 0, gatheredParameters: 0, commBuffers: 0, cudaContext: 0,
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
  const nMoe = moeLayersIn(c.model, start, start + layers);
  const layerDense = layers * c.attnRank + (layers - nMoe) * c.denseMlpRank + nMoe * c.moeDenseRank;
  const dense = layerDense + (first ? c.embedRank + c.positions : 0) + (last ? c.finalNorm + c.headRank : 0);
  const expert = nMoe * c.expertRank;
  const lora = layers * c.loraPerLayer;
  const z = c.zstage;
  const accumFrom = c.style === 'megatron-distopt' ? 1 : 2;
  // ZeRO divisors: a state is sharded from ZeRO stage `from` on (dense over nd, experts over ne).
  const dP = z >= 3 ? c.nd : 1, eP = z >= 3 ? c.ne : 1;
  const dG = z >= 2 ? c.nd : 1, eG = z >= 2 ? c.ne : 1;
  const dO = z >= 1 ? c.nd : 1, eO = z >= 1 ? c.ne : 1;
  const dA = z >= accumFrom ? c.nd : 1, eA = z >= accumFrom ? c.ne : 1;
  let parameters: number, gradients: number, optimizerStates: number, masterWeights: number, gradAccumBuffer: number;
  if (c.lora) {
    // Frozen base in its storage dtype (QLoRA: NF4); adapters train normally.
    parameters = parameterBytes(dense, c.baseBytes, dP) + parameterBytes(expert, c.baseBytes, eP) + parameterBytes(lora, c.paramB, dP);
    gradients = gradientBytes(lora, c.gradB, dG);
    optimizerStates = optimizerStateBytes(lora, c.optB, dO);
    masterWeights = masterWeightBytes(lora, c.masterB, dO);
    gradAccumBuffer = c.accum ? gradAccumBufferBytes(lora, dA) : 0;
  } else {
    parameters = parameterBytes(dense, c.paramB, dP) + parameterBytes(expert, c.paramB, eP);
    gradients = gradientBytes(dense, c.gradB, dG) + gradientBytes(expert, c.gradB, eG);
    optimizerStates = optimizerStateBytes(dense, c.optB, dO) + optimizerStateBytes(expert, c.optB, eO);
    masterWeights = masterWeightBytes(dense, c.masterB, dO) + masterWeightBytes(expert, c.masterB, eO);
    gradAccumBuffer = c.accum ? gradAccumBufferBytes(dense, dA) + gradAccumBufferBytes(expert, eA) : 0;
  }
  const fp8WeightCache = c.fp8 ? fp8WeightCacheBytes(layerDense + expert, z >= 3 ? c.nd : 1) : 0;
  let hostBytes = 0;
  if (c.offOpt !== 'none') {
    if (c.offOpt === 'cpu') hostBytes += optimizerStates + masterWeights + gradAccumBuffer;
    optimizerStates = 0; masterWeights = 0; gradAccumBuffer = 0;
  }
  if (c.offParams !== 'none' && z >= 3) {
    if (c.offParams === 'cpu') hostBytes += parameters;
    parameters = 0;
  }
  const perLayerUnit = c.attnRank + Math.max(c.denseMlpRank, nMoe > 0 ? c.moeDenseRank + c.expertRank : 0);
  // FSDP2 wraps each block; the embedding and head belong to the root group, counted on its own (fsdp2RootBytes).
  const unitParams = c.style === 'fsdp2' && layers > 0 ? perLayerUnit : Math.max(layers > 0 ? perLayerUnit : 0, first ? c.embedRank : 0, last ? c.headRank : 0);
  const stageParams = dense + expert + lora;
  const gatherB = c.lora ? c.baseBytes : c.gatherB;
  const gatheredParameters = z >= 3
    ? gatheredParameterBytes(c.style, unitParams, stageParams, gatherB, c.lora ? 0 : gatherB, c.reshard, c.prefetch, c.maxLive)
      + (c.style === 'fsdp2' ? fsdp2RootBytes((first ? c.embedRank + c.positions : 0) + (last ? c.finalNorm + c.headRank : 0), gatherB) : 0)
    : 0;
  const commBuffers = commBufferBytes(c.style, z, c.lora ? lora : stageParams, c.gradB, c.reduceBucket, c.allgatherBucket, c.overlap);
  const modelStates = parameters + gradients + optimizerStates + masterWeights + gradAccumBuffer;
  o.stage = stage; o.layers = layers; o.moeLayers = nMoe; o.first = first; o.last = last;
  o.paramsPerRank = stageParams; o.trainablePerRank = c.lora ? lora : stageParams; o.unitParams = unitParams;
  o.parameters = parameters; o.gradients = gradients; o.optimizerStates = optimizerStates; o.masterWeights = masterWeights;
  o.gradAccumBuffer = gradAccumBuffer; o.fp8WeightCache = fp8WeightCache; o.gatheredParameters = gatheredParameters;
  o.commBuffers = commBuffers; o.hostBytes = hostBytes; o.modelStates = modelStates;
  return o;
}

/**
 * The second half of computeStage: activations of the in-flight micro-batches (micro batch, accumulation and
 * recomputation of the context), then the totals, CUDA context and fragmentation, on a stage `o` whose states are filled.
 */
export function computeStageActivations(c: MemoryContext, o: StageNumbers, layerAct = stageLayerActs(c, o.layers, o.moeLayers)): StageNumbers {
  const stage = o.stage, layers = o.layers, nMoe = o.moeLayers, first = o.first, last = o.last;
  const inFlight = inFlightMicrobatchCount(c.schedule, c.pp, c.vpp, c.m, stage);
  const working = recomputeWorkingBytes(c, c.recompute, layers, nMoe > 0 ? Math.max(c.ffn, c.moeFfn) : c.ffn);
  // The loss's copies of the logits live only around the loss; the recomputation working set only in the layers'
  // backward, after them. The peak holds the larger of the two (the other is shown as 0 at that moment).
  const lossParts = last ? lossPartBytes(c) : undefined;
  const loss = lossParts ? lossParts.peak : 0;
  const activations = inFlight * layerAct + (working > loss ? working : 0);
  const embAct = first ? embeddingActivationBytes(c) : 0;
  const embeddingActivations = inFlight * embAct;
  const logits = working > loss ? 0 : loss;
  const activationTotal = activations + embeddingActivations + logits;
  const tensors = o.modelStates + o.fp8WeightCache + activationTotal + o.gatheredParameters + o.commBuffers;
  const cudaContext = cudaContextBytes(c.ctxBytes);
  const fragmentation = fragmentationBytes(tensors, c.frag);
  o.lossForward = lossParts ? lossParts.forward : 0; o.lossBackwardNew = lossParts ? lossParts.backwardNew : 0; o.working = working;
  o.inFlight = inFlight; o.layerActPerMicrobatch = layerAct; o.embeddingActPerMicrobatch = embAct;
  o.activations = activations; o.embeddingActivations = embeddingActivations; o.logits = logits;
  o.cudaContext = cudaContext; o.fragmentation = fragmentation; o.activationTotal = activationTotal;
  o.allocated = tensors + cudaContext; o.reserved = tensors + cudaContext + fragmentation;
  return o;
}

/**
 * Activation bytes one micro-batch leaves in a stage's `layers` layers, `moeLayers` of them MoE: dense and MoE layers
 * differ in MLP width; recomputed layers are taken from the dense ones first. The same for stages with equal counts.
 */
export function stageLayerActs(c: MemoryContext, layers: number, moeLayers: number): number {
  const rDense = Math.min(layers - moeLayers, c.recomputeLayers);
  // A kind with no layers adds nothing (skipped: dense models never pay for the MoE width).
  const dense = layers > moeLayers ? stageLayerActivationBytes(c, layers - moeLayers, c.recompute, rDense) : 0;
  return moeLayers > 0 ? dense + stageLayerActivationBytes(c, moeLayers, c.recompute, c.recomputeLayers - rDense, c.moeFfn) : dense;
}

/**
 * The last stage's output layer and loss: the output layer's saved inputs (final norm input, head input) with the
 * loss's forward copies of the logits, the tensors its backward adds, and the larger of the two moments
 * (shared/memory/loss.ts), for one micro-batch: n = b · s/cp · V/t logits per rank.
 */
export function lossPartBytes(c: MemoryContext): { forward: number; backwardNew: number; peak: number } {
  const tokens = c.sLocal * c.b;
  const n = (tokens * c.vocab) / c.tp;
  const head = outputLayerInputBytes(c, c.impl === 'torchtitan');
  const fwd = lossForwardBytes(c.loss, n, tokens, c.actBytes), bwd = lossBackwardBytes(c.loss, n, tokens, c.actBytes);
  return { forward: head + fwd, backwardNew: Math.max(0, bwd - lossSavedBytes(c.loss, n, tokens, c.actBytes)), peak: head + Math.max(fwd, bwd) };
}
