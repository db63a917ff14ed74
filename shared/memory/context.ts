/**
 * The numeric context of one plan: every per-rank count, byte size and divisor the term functions need, computed once.
 * Both the traceable estimate and the fast path read it; `fillContext` reuses one mutable object (no allocation).
 */
import { frozenBaseBytes } from './quantizedBase';
import { loraSavesOf, loraWidthsOf, type LoraSaves } from './loraSaves';
import { loraLayerParams, loraTrainsEmbedding, loraTrainsHead, loraUnpagedParams, paddedVocabSize } from '../model/params';
import { dequantizedWeightBytes, heldInputBytesPerToken, largestBlockLinear } from './quantizedTransients';
import { kvHeadsPerRank, layersOfStage as layersOfStageCount, rankParts } from '../model/rankParams';
import type { LinearAttentionSpec, MlaSpec, ModelImpl, ModelSpec, OffloadTarget, Plan, PipelineSchedule, PrecisionRegime, RecomputeKind, RecomputePolicy, ShardingStyle } from '../plan/types';
import type { ActivationShape } from './activations';
import { hfMoeRoutingSaves } from './blocks';
import { adafactorBytesPerParam } from './modelStates';
import { activationBytesOf, dtypeBytes, optimizerBytesPerParam, optimizerStateElementBytes, paramBytesOf } from './dtypes';
import { deepspeedBf16Optimizer, maskedSlidingShare, modelImplOf, optimizerImplOf, precisionRegimeOf, recomputeEveryOf, recomputePolicyOf } from './engine';
import { lossImplOf, type LossImpl } from './loss';
import { hpzRanks } from '../comm/volumes';
import { pipelineEngineOf, type PipelineEngine } from './pipeline';
import { regimeBytes } from './regime';
import { routedTokenFactor } from '../model/capacity';
import { mtpModules } from '../model/mtp';
import { recomputeModuleMask } from '../plan/recomputeModules';
import { usesLigerKernel } from '../plan/liger';

/** Everything the per-stage computation reads. Mutable so the fast path can refill one instance. */
export interface MemoryContext extends ActivationShape {
  streamBytes: number; autocastWeightBytes: number; autocastHeadBytes: number; qkNorm: boolean; lowPrecisionNorm: boolean; acPolicy: RecomputePolicy; acEvery: number;
  sandwichNorms: boolean; normFp32: boolean; ligerNorm: boolean; ligerGlu: boolean; attnSoftcap: boolean; finalSoftcap: boolean; maskedSliding: number;
  compiled: boolean; normUpcast: boolean;
  model: ModelSpec;
  /** The model's multi-head latent attention, if any (shared/memory/mlaSaves.ts). */
  mla: MlaSpec | undefined;
  /** Its Gated DeltaNet layers and softmax attention's output gate (shared/memory/gatedDeltaNetSaves.ts, blocks.ts). */
  linearAttention: LinearAttentionSpec | undefined; outputGate: boolean;
  sLocal: number; b: number; h: number; heads: number; kvHeadsEff: number; headDim: number; ffn: number;
  gated: boolean; tp: number; sp: boolean; flash: boolean; actBytes: number; sKeys: number; dropout: boolean;
  /** MLP width of an MoE layer for activations: top-k · expert FFN + shared experts' FFN. */
  moeFfn: number;
  /** What transformers' grouped-GEMM experts save per MoE layer beyond the MLP's activations (blocks.ts hfMoeRoutingSaves). */
  moeRouteSaves: number;
  pp: number; vpp: number; m: number; schedule: PipelineSchedule; recompute: RecomputeKind; recomputeLayers: number; recomputeMask: number; sharedFfn: number;
  /** The pipeline runtime (shared/memory/pipeline.ts) and FSDP2's gradient reduce dtype in bytes (training.gradDtype). */
  ppEngine: PipelineEngine; reduceB: number;
  layers: number; stageLayers: readonly number[] | undefined; vocab: number;
  /** Per-rank parameters of one layer's attention (incl. norms), dense MLP, MoE non-expert part, routed experts. */
  attnRank: number; denseMlpRank: number; moeDenseRank: number; expertRank: number;
  embedRank: number; positions: number; finalNorm: number; headRank: number;
  /** The MTP modules' projections, norms and embedding copy on the last stage, and their count D (shared/model/mtp.ts). */
  mtpRank: number; mtpLayers: number;
  loraPerLayer: number; lora: boolean; loraSaves: LoraSaves | undefined;
  /**
   * Bytes per frozen base weight of a LoRA model in the layers: the part ZeRO-3/FSDP shards and gathers, and the part
   * every rank keeps whole (bitsandbytes' 4-bit constants, shared/memory/quantizedBase.ts).
   */
  baseBytes: number; baseWholeBytes: number;
  /** LoRA trains the embedding / the head in full beside the adapters; as copies beside frozen originals (PEFT). */
  loraEmbed: boolean; loraHead: boolean; loraCopies: boolean;
  /** Bytes per parameter of a module LoRA trains in full: weight, gradient, optimizer states, master copy. */
  loraFullParamB: number; loraFullGradB: number; loraFullOptB: number; loraFullMasterB: number;
  /**
   * Bytes per weight of a LoRA model's embedding, positions, final norm and head: 16-bit when the base is quantized
   * (QLoRA replaces the layers' linear weights only: bitsandbytes skips nn.Embedding and the output head,
   * transformers get_keys_to_not_convert; torchtune FrozenNF4Linear in the blocks, nn.Embedding and TiedLinear kept).
   */
  loraRestBytes: number;
  /** The output head is 4-bit too (LoraSpec.headQuantized): its weight counts with the quantized base. */
  headQuantized: boolean;
  /**
   * A 4-bit base's dequantized weight at a matmul (shared/memory/quantizedTransients.ts), bytes: the block's largest
   * linear's and the head's (when quantized); 0 without a 4-bit base.
   */
  dequantBlock: number; dequantHead: number;
  /** Bytes per token per layer of the inputs bitsandbytes' linears hold outside the saved tensors (0 when they do not). */
  heldInputs: number;
  /** The loop keeps the previous micro-batch's output and graph through the next forward (training.previousOutputHeld). */
  prevHeld: boolean;
  /**
   * Trainable parameters per layer in adapter tensors under 10⁵ elements: a paged optimizer keeps their states in
   * ordinary GPU memory (bitsandbytes optim/optimizer.py get_state_buffer: `p.numel() < 1e5` → torch.zeros_like).
   */
  loraUnpaged: number;
  /** Bytes per parameter of those states: bitsandbytes keeps a 32-bit optimizer's in fp32 whatever the weights' dtype. */
  pagedStateB: number;
  paramB: number; gradB: number; masterB: number; optB: number; optBRest: number; accum: boolean; fp8: boolean;
  /** DeepSpeed's pipeline engine without ZeRO in bf16: BF16_Optimizer (shared/memory/engine.ts deepspeedBf16Optimizer). */
  dsBf16Opt: boolean;
  /** FP8 weights kept as parameters (Megatron --fp8-param-gather) on an engine with TE (Megatron regime). */
  fp8Params: boolean;
  /** GEMM inputs saved as fp8 casts (Transformer Engine). */
  fp8Inputs: boolean;
  /** Bytes of a parameter (and of its unsharded gradient) while gathered by FSDP/ZeRO-3 (FSDP2's param dtype). */
  gatherB: number;
  /** How the engine keeps the precision, what the model saves, how the loss is computed (shared/memory/engine.ts, loss.ts). */
  regime: PrecisionRegime; impl: ModelImpl; loss: LossImpl;
  /** ZeRO divisors of dense and expert states, and the stage the states are sharded at. */
  nd: number; ne: number; zstage: number; style: ShardingStyle;
  /** Data-parallel ranks (torch DDP wraps the model, and copies gradients into its buckets, only when > 1). */
  dp: number;
  /** Expert-parallel degree (torch DDP leaves the expert-parallel experts out of its buckets when > 1). */
  ep: number;
  /** DeepSpeed ZeRO++ hpZ: ranks of a node the secondary copy of the weights is partitioned over (1: none). */
  hpz: number;
  /** Replicas of a shard group (HSDP: data-parallel ranks / shard group size). */
  replicas: number;
  reshard: boolean; prefetch: number; maxLive: number; reduceBucket: number; allgatherBucket: number; overlap: boolean;
  /** DeepSpeed contiguous_gradients (its reduction buckets exist only with it). */
  contiguous: boolean;
  /** DeepSpeed builds FusedAdam from its JSON: without ZeRO the 16-bit wrapper is FP16_Optimizer (shared/memory/deepspeed.ts). */
  dsFusedAdam: boolean;
  ctxBytes: number; frag: number;
  offOpt: OffloadTarget; offParams: OffloadTarget;
  /** The optimizer applies and frees each gradient inside the backward (training.optimizerInBackward). */
  optInBwd: boolean;
  /** The optimizer states are in paged (unified) memory, off the GPU's peak (training.pagedOptimizer). */
  pagedOpt: boolean;
  /**
   * torch's foreach Adam/AdamW steps the whole parameter group at once and makes the square root of every exp_avg_sq
   * as one list beside the states (training.optimizerImpl 'foreach').
   */
  foreachStep: boolean;
  /** The data-parallel gradients are reduced only in the step's last micro-batch (training.syncEveryMicroBatch false). */
  syncLast: boolean;
  /** Checkpointed activations go to CPU memory, the forward stash of the last few stays (training.activationOffload). */
  actOffload: boolean;
  /** Parameters of a layer's largest trained weight matrix on one rank (a LoRA adapter's under LoRA). */
  largestLayerParam: number;
  gpusPerNode: number; gpuMemory: number;
}

/** A fresh context object (fields are overwritten by fillContext). */
export function newContext(): MemoryContext {
  return fillContext(undefined, undefined, false);
}

/** Fills `ctx` from `plan` (or creates it); `replicated` = plain DP baseline (no ZeRO, no offload). */
export function fillContext(plan: Plan | undefined, ctx: MemoryContext | undefined, replicated: boolean): MemoryContext {
  const c = (ctx ?? {}) as MemoryContext;
  if (!plan) return c;
  const { model, training: t, parallel: p } = plan;
  const s = p.sharding;
  const tp = p.tp;
  const kvPerRank = kvHeadsPerRank(model.kvHeads, tp);
  const r = rankParts(model, tp, p.ep, p.etp, p.pp);
  c.model = model; c.mla = model.mla;
  c.linearAttention = model.linearAttention; c.layers = model.layers; c.outputGate = model.attentionOutputGate === true;
  c.sLocal = t.seqLen / p.cp; c.b = t.microBatch; c.h = model.hiddenSize; c.heads = model.heads;
  c.kvHeadsEff = kvPerRank * tp; c.headDim = model.headDim; c.ffn = model.ffnSize; c.gated = model.gatedMlp;
  c.tp = tp; c.sp = p.sp && tp > 1; c.flash = t.flashAttention; c.actBytes = activationBytesOf(t.precision); c.sKeys = t.seqLen;
  c.dropout = model.dropout !== false;
  // Under drop and pad the experts' activations hold their padded capacity (routedTokenFactor).
  c.moeFfn = model.moe ? model.moe.topK * routedTokenFactor(model.moe) * model.moe.expertFfnSize + model.moe.sharedExperts * model.moe.sharedExpertFfnSize : model.ffnSize;
  c.pp = p.pp; c.vpp = p.schedule === 'interleaved' ? Math.max(1, p.vpp) : 1; c.m = t.gradAccum; c.schedule = p.schedule;
  c.recompute = t.recompute; c.recomputeLayers = t.recomputeLayers ?? Number.MAX_SAFE_INTEGER; c.recomputeMask = recomputeModuleMask(t);
  c.sharedFfn = model.moe ? model.moe.sharedExperts * model.moe.sharedExpertFfnSize : 0;
  c.ppEngine = pipelineEngineOf(plan.engine); c.reduceB = dtypeBytes(t.gradDtype);
  c.layers = model.layers; c.stageLayers = p.stageLayers; c.vocab = paddedVocabSize(model.vocabSize, model.vocabPadMultiple, tp);
  // Per-rank parameters from the one model memory, communication and time share (shared/model/rankParams.ts).
  c.attnRank = r.attn; c.denseMlpRank = r.denseMlp; c.moeDenseRank = r.moeDense; c.expertRank = r.expert;
  c.embedRank = r.embed; c.positions = r.positions; c.finalNorm = r.finalNorm; c.headRank = r.head;
  c.mtpRank = r.mtp; c.mtpLayers = mtpModules(model);
  c.lora = plan.lora !== undefined; c.loraSaves = loraSavesOf(plan.lora);
  c.loraPerLayer = plan.lora ? loraLayerParams(model, plan.lora) : 0;
  c.loraEmbed = loraTrainsEmbedding(model, plan.lora); c.loraHead = loraTrainsHead(model, plan.lora);
  c.loraCopies = plan.lora?.fullModulesCopied === true;
  const base = frozenBaseBytes(plan);
  c.baseBytes = plan.lora ? base.sharded : paramBytesOf(t.precision);
  c.baseWholeBytes = plan.lora ? base.replicated : 0;
  c.loraRestBytes = plan.lora && c.baseBytes < 2 ? 2 : c.baseBytes;
  const nf4 = plan.lora?.baseDtype === 'nf4';
  c.headQuantized = nf4 && plan.lora?.headQuantized === true;
  const widths = loraWidthsOf(c, c.ffn);
  const cast = plan.lora?.dequantCast === true;
  c.dequantBlock = nf4 ? dequantizedWeightBytes(largestBlockLinear(widths, plan.lora?.fusedQkv === true), c.actBytes, cast) : 0;
  c.dequantHead = c.headQuantized ? dequantizedWeightBytes(r.head, c.actBytes, cast) : 0;
  c.heldInputs = plan.lora?.baseSavesInputs === true ? heldInputBytesPerToken(widths, c.actBytes) : 0;
  c.prevHeld = t.previousOutputHeld === true;
  c.loraUnpaged = plan.lora ? loraUnpagedParams(model, plan.lora) : 0;
  // Bytes per parameter as the engine's precision regime keeps them (shared/memory/regime.ts).
  c.regime = precisionRegimeOf(plan); c.impl = modelImplOf(plan); c.loss = lossImplOf(c.impl, t.lossFusion, p.tp);
  // What the block saves (shared/memory/blocks.ts): transformers models with fp32 weights under autocast keep an fp32
  // residual stream and the 16-bit casts of every layer's weights.
  const autocast = c.regime === 'amp' && c.actBytes < 4;
  c.streamBytes = c.regime === 'amp' || c.regime === 'fp32' ? 4 : c.actBytes;
  c.moeRouteSaves = model.moe && c.impl === 'hf' ? hfMoeRoutingSaves(model.moe, c.sLocal * c.b, c.h, c.actBytes, !!plan.lora) : 0;
  c.autocastWeightBytes = autocast && c.impl === 'hf' && !plan.lora ? c.actBytes * (c.attnRank + c.denseMlpRank) : 0;
  c.autocastHeadBytes = autocast && c.impl === 'hf' && !plan.lora ? (c.actBytes * c.vocab * c.h) / tp : 0;
  c.qkNorm = model.qkNorm; c.lowPrecisionNorm = model.lowPrecisionNorm === true; c.sandwichNorms = model.sandwichNorms === true; c.normFp32 = model.normFp32 === true;
  c.ligerNorm = usesLigerKernel(t, 'rms_norm'); c.ligerGlu = usesLigerKernel(t, 'swiglu');
  c.attnSoftcap = model.attnLogitSoftcap === true; c.finalSoftcap = model.finalLogitSoftcap === true; c.maskedSliding = maskedSlidingShare(plan); c.acPolicy = recomputePolicyOf(plan); c.acEvery = recomputeEveryOf(plan);
  c.compiled = plan.training.compile === true && c.impl === 'torchtitan';
  c.normUpcast = t.normUpcast === true && c.impl === 'torchtitan' && !c.compiled;
  const rb = regimeBytes(c.regime, t.precision);
  c.paramB = rb.param; c.gradB = rb.grad ?? dtypeBytes(t.gradDtype); c.masterB = rb.master; c.gatherB = rb.gathered;
  c.optB = t.optimizer === 'adafactor'
    ? adafactorBytesPerParam(model) * (t.precision === 'bf16' ? 0.5 : 1)
    : optimizerBytesPerParam(t.optimizer, model.hiddenSize, optimizerStateElementBytes(t.precision));
  // The embedding, positions, final norm and head: AdamW's states under Muon, which orthogonalises the layers' 2-D
  // matrices only (Liu et al. 2025, arXiv:2502.16982 §2); the layers' bytes otherwise.
  // bitsandbytes' optimizers keep fp32 states for any parameter dtype (optim/optimizer.py Optimizer2State.init_state).
  c.pagedStateB = optimizerBytesPerParam(t.optimizer, model.hiddenSize, 4);
  c.optBRest = t.optimizer === 'muon' ? optimizerBytesPerParam('adamw', model.hiddenSize, optimizerStateElementBytes(t.precision)) : c.optB;
  // An fp32 accumulation buffer only adds memory when gradients themselves are not fp32 (Megatron bf16: main_grad is the grad).
  // A module LoRA trains in full: engines with master weights (DeepSpeed, Megatron) keep it as they keep the adapters;
  // otherwise the torch optimizer steps the module in the dtype it was loaded in (16 bits, as the frozen base: PEFT's
  // copy is a deepcopy of it, and casts only the adapters to fp32), its gradient and states (zeros_like) in that dtype.
  const engineMaster = c.masterB > 0;
  c.loraFullParamB = engineMaster ? c.paramB : c.loraRestBytes;
  c.loraFullGradB = engineMaster ? c.gradB : c.loraRestBytes;
  c.loraFullOptB = engineMaster || t.optimizer === 'adam-8bit' ? c.optBRest : (c.optBRest * c.loraRestBytes) / 4;
  c.loraFullMasterB = engineMaster ? c.masterB : 0;
  c.accum = t.fp32GradAccum && c.gradB < 4; c.fp8 = t.precision === 'fp8-mixed';
  c.fp8Params = c.fp8 && c.regime === 'megatron' && t.fp8?.paramGather === true;
  // Transformer Engine saves the fp8 casts of GEMM inputs for the backward (Megatron and NeMo run TE).
  c.fp8Inputs = c.fp8 && c.impl === 'megatron';
  const shardRanks = s.shardGroupSize * p.cp;
  c.nd = Math.max(1, shardRanks);
  c.ne = Math.max(1, (shardRanks * tp) / (p.ep * p.etp));
  c.zstage = replicated ? 0 : s.stage;
  // DeepSpeed's pipeline engine without ZeRO in bf16 runs BF16_Optimizer: ZeRO-1's partitions (deepspeedBf16Optimizer).
  c.dsBf16Opt = !replicated && deepspeedBf16Optimizer(plan);
  if (c.dsBf16Opt) c.zstage = 1;
  c.hpz = hpzRanks(s, shardRanks);
  c.dp = p.dp; c.ep = Math.max(1, p.ep); c.replicas = Math.max(1, Math.floor(p.dp / Math.max(1, s.shardGroupSize)));
  // The baseline keeps Megatron's contiguous grad buffers for Megatron plans, else PyTorch DDP.
  c.style = replicated ? (s.style === 'megatron-distopt' ? 'megatron-distopt' : 'ddp') : s.style;
  c.reshard = s.reshardAfterForward; c.prefetch = s.prefetchBucketElems; c.maxLive = s.maxLiveParams;
  c.reduceBucket = replicated ? Math.round((25 * 2 ** 20) / c.gradB) : s.reduceBucketElems;
  c.allgatherBucket = s.allgatherBucketElems; c.overlap = s.overlapComm; c.contiguous = s.contiguousGradients ?? true;
  c.dsFusedAdam = s.dsFusedAdam === true;
  c.ctxBytes = plan.overhead.cudaContextBytes; c.frag = plan.overhead.allocatorFragmentation;
  c.offOpt = replicated ? 'none' : s.offloadOptimizer; c.offParams = replicated ? 'none' : s.offloadParams;
  // Properties of the training loop, not of the sharding: the replicated baseline keeps them.
  c.optInBwd = t.optimizerInBackward === true; c.pagedOpt = t.pagedOptimizer === true; c.actOffload = t.activationOffload === true;
  c.syncLast = t.syncEveryMicroBatch === false;
  c.foreachStep = (t.optimizer === 'adam' || t.optimizer === 'adamw') && optimizerImplOf(plan) === 'foreach' && !c.optInBwd && !c.pagedOpt
    && (c.regime === 'amp' || c.regime === 'fsdp2' || c.regime === 'bf16-true' || c.regime === 'fp32');
  c.largestLayerParam = plan.lora
    ? plan.lora.rank * Math.max(model.hiddenSize, model.ffnSize)
    : (model.hiddenSize * Math.max(model.ffnSize, model.heads * model.headDim)) / tp;
  c.gpusPerNode = plan.cluster.gpusPerNode; c.gpuMemory = plan.cluster.gpu.memoryBytes;
  return c;
}

/** Layers per pipeline stage: the explicit uneven split, else an even split (shared/model/rankParams.ts). */
export function layersOfStage(c: Pick<MemoryContext, 'layers' | 'pp' | 'stageLayers' | 'mtpLayers'>, stage: number): number {
  return layersOfStageCount(c.layers, c.pp, c.stageLayers, stage, c.mtpLayers);
}
