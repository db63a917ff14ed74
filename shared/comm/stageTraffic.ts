/**
 * The step-level traffic of one pipeline stage that does not depend on the micro batch or on recomputation: message
 * sizes and seconds of the data-parallel, ZeRO/FSDP, HSDP, expert-DP and offload collectives. stageComm (collectives.ts)
 * combines them with the micro-batch work; this part is computed once per layout, stage and dtypes
 * (the TimeCache of shared/time/cache.ts), so the planner's inner loop only does the combining arithmetic.
 */
import timing from '../../data/timing.json';
import type { Dtype, Plan, Precision } from '../plan/types';
import { dtypeBytes } from '../memory/dtypes';
import { deepspeedBf16Optimizer, deepspeedPipeline } from '../memory/engine';
import { frozenBaseBytes } from '../memory/quantizedBase';
import { mtpModules } from '../model/mtp';
import { embeddingWeightTrains, paddedVocabSize } from '../model/params';
import type { LayoutLinks } from './layout';
import { axisStride, linkSeconds, productLink, type GroupLink } from './links';
import { stageLayerCount, type StageParams } from './stageParams';
import * as V from './volumes';

/** Bytes per occurrence and seconds of one occurrence of each step-level collective of a stage (0 when absent). */
export interface StageTraffic {
  readonly gradDtype: Dtype;
  readonly precision: Precision;
  readonly params: StageParams;
  /** Layers of the stage (at least 1: ZeRO-3 prefetch hides all but one layer's gather). */
  readonly layers: number;
  /** The stage has a DP/shard group of more than one rank, and an expert-DP gradient all-reduce. */
  readonly hasDense: boolean;
  readonly hasEdp: boolean;
  /** Share of the last backward before the first gradient bucket is full. */
  readonly firstBucket: number;
  readonly dpBytes: number;
  readonly dpSeconds: number;
  readonly rsBytes: number;
  readonly rsSeconds: number;
  readonly agBytes: number;
  readonly agSeconds: number;
  /** One layer's share of the ZeRO-3/FSDP gather and of the ZeRO-2/3 reduce-scatter as its own collective, seconds. */
  readonly agLayerSeconds: number;
  readonly rsLayerSeconds: number;
  readonly edpBytes: number;
  readonly edpSeconds: number;
  /**
   * The routed experts' own FSDP groups under expert parallelism outside Megatron (torchtitan's expert mesh, Axolotl's
   * dp_shard): bytes of one all-gather and one reduce-scatter over the expert shard group, each already counted in
   * agSeconds / agLayerSeconds and rsSeconds / rsLayerSeconds, which the dense groups' schedule times (0 when absent).
   */
  readonly expertAgBytes: number;
  readonly expertRsBytes: number;
  /**
   * The backward's gather when it differs from the forward's (DeepSpeed ZeRO++ hpZ: from the secondary partition,
   * over `hpzLink`, in 16 bits): bytes of one and one layer's seconds; else agBytes and agLayerSeconds.
   */
  readonly agBackBytes: number;
  readonly agBackLayerSeconds: number;
  readonly hpzLink: GroupLink | undefined;
  readonly hsdpBytes: number;
  readonly hsdpSeconds: number;
  /** One layer's share of the HSDP replica all-reduce as its own collective, seconds (FSDP's per-group reduce). */
  readonly hsdpLayerSeconds: number;
  readonly offloadOptBytes: number;
  readonly offloadOptSeconds: number;
  readonly offloadParamBytes: number;
  readonly offloadParamSeconds: number;
  /** HBM bytes of FSDP2's copies on the compute stream per micro-batch: gather copy-outs (forward, backward), reduce copy-in. */
  readonly copyForwardBytes: number;
  readonly copyBackwardBytes: number;
  /** The all-reduce of the word embedding duplicated on the first and last stage (embeddingGroupLink; 0 elsewhere). */
  readonly embBytes: number;
  readonly embSeconds: number;
  readonly embLink: GroupLink | undefined;
}

/**
 * The two ranks that all-reduce the word embedding's gradient once per step, seen from `stage`: the first and the last
 * pipeline stage at one TP, CP and DP coordinate, where the embedding is duplicated on both and trains — Megatron with
 * a tied output layer or multi-token prediction (finalize_model_grads.py `_allreduce_word_embedding_grads`), DeepSpeed's
 * pipeline engine and nanotron with a tied one (deepspeed/runtime/pipe/engine.py `_exec_reduce_tied_grads`; nanotron
 * trainer.py `sync_tied_weights_gradients`, neither overlapped). Undefined on middle stages, without a pipeline, for
 * other engines (torch pipelining's tied weights are the user's to sync).
 */
export function embeddingGroupLink(plan: Plan, stage: number): GroupLink | undefined {
  const p = Math.max(1, Math.floor(plan.parallel.pp) || 1);
  if (p < 2 || (stage !== 0 && stage !== p - 1)) return undefined;
  const tied = plan.model.tiedEmbeddings;
  const duplicated = plan.engine === 'megatron' ? tied || mtpModules(plan.model) > 0 : tied && (plan.engine === 'nanotron' || deepspeedPipeline(plan));
  if (!duplicated || !embeddingWeightTrains(plan.model, plan.lora)) return undefined;
  return productLink(plan, [[2, (p - 1) * axisStride(plan, 'pp')]]);
}

/**
 * Bytes per element of that all-reduce: Megatron's main_grad and nanotron's accumulator in the gradient dtype;
 * DeepSpeed's pipeline engine reduces the fp32 gradient of its BF16_Optimizer (`_hp_grad`), else the parameter's own.
 */
function embeddingGradBytes(plan: Plan): number {
  if (plan.engine === 'megatron' || plan.engine === 'nanotron') return dtypeBytes(plan.training.gradDtype);
  return deepspeedBf16Optimizer(plan) ? 4 : V.paramCommBytes(plan.training.precision);
}

/** Share of the last backward that runs before the first gradient bucket is full: bucket / Ψ_stage (DDP, DeepSpeed buckets). */
export function firstBucketFraction(plan: Plan, stageParamCount: number): number {
  const b = plan.parallel.sharding.reduceBucketElems;
  if (!(b > 0) || !(stageParamCount > 0)) return timing.firstBucketFraction;
  return Math.min(1, b / stageParamCount);
}

/**
 * Step-level traffic of one stage (Rajbhandari et al. 2020 §7; Zhao et al. 2023 FSDP; Ren et al. 2021 ZeRO-Offload):
 * DP gradient all-reduce (stage 0) or reduce-scatter (ZeRO ≥ 1), the ZeRO parameter all-gather, the experts' own FSDP
 * gathers and reduce-scatters, the expert-DP and HSDP replica all-reduces and the PCIe offload copies, each as bytes per
 * occurrence and seconds of one occurrence.
 */
export function stageTraffic(plan: Plan, stage: number, l: LayoutLinks, sp: StageParams): StageTraffic {
  const sh = plan.parallel.sharding;
  const tr = plan.training;
  const zero = sh.stage;
  // Where the routed experts' traffic goes. Megatron (and DeepSpeed-MoE with EP) reduce them over the expert-DP group
  // once per step. Elsewhere, without EP, they are weights like any other of the FSDP, ZeRO or DDP group (FSDP wraps
  // them in their block, ZeRO partitions them); with EP under FSDP they are FSDP units of their own over the expert
  // shard group (torchtitan's expert mesh, Axolotl's dp_shard), gathered and reduced layer by layer with the block.
  const ownEngine = plan.engine !== 'megatron';
  const noEp = !(plan.parallel.ep > 1);
  const fold = ownEngine && noEp ? sp.expert : 0;
  const expertFsdp = ownEngine && !noEp && (sh.style === 'fsdp' || sh.style === 'fsdp2') && zero >= 1 && l.edp > 1 && sp.expert > 0;
  // Gradients exist for trainable parameters only (LoRA: the adapters); ZeRO-3 still gathers every parameter.
  const denseParams = sp.dense + fold;
  const gradDense = plan.lora ? sp.trainable : denseParams;
  const gradExpert = plan.lora || fold > 0 ? 0 : sp.expert;
  const gB = dtypeBytes(tr.gradDtype);
  const pB = V.paramCommBytes(tr.precision, tr.fp8?.paramGather);
  const dense = l.dpSize > 1 && l.shardLink.size > 1 ? l.shardLink : undefined;
  const dpBytes = dense && zero === 0 ? V.dpGradAllReduceBytes(gradDense, gB) : 0;
  // DeepSpeed ZeRO++ at stage 3 (Wang et al. 2023 §4; deepspeed/runtime/zero/config.py): qwZ gathers the weights in
  // int8 (block-quantized, 1 byte an element, §4.1); hpZ keeps a secondary partition over hpz ranks of a node, which
  // every backward gathers from in 16 bits (§4.2); qgZ reduces the gradients as int4 (0.5 bytes an element, §4.3).
  const zpp = sh.style === 'deepspeed' && zero >= 3;
  const qwz = zpp && sh.quantizedWeights === true;
  const hpz = V.hpzRanks(sh, l.shard);
  const rsB = zpp && sh.quantizedGradients === true ? 0.5 : gB;
  const rsBytes = dense && zero >= 1 ? V.zeroGradReduceScatterBytes(gradDense, rsB) : 0;
  // BF16_Optimizer (DeepSpeed without ZeRO in bf16) all-reduces the gradients, then all-gathers the updated weights.
  const bf16Opt = deepspeedBf16Optimizer(plan);
  // A quantized LoRA base (QLoRA's NF4, 8-bit) is gathered in its storage: the layers' linear weights at the base
  // dtype's bytes (bitsandbytes' quant_storage packs them into 16-bit elements FSDP shards and gathers; the experts
  // too, as the memory model counts them), the embedding and head at the parameter dtype's. bitsandbytes' 4-bit
  // constants stay whole on every rank and are not gathered (shared/memory/quantizedBase.ts).
  const baseB = plan.lora ? frozenBaseBytes(plan).sharded : pB;
  const quantized = sp.layerDense + fold;
  const gatherB = baseB < pB && denseParams > 0 ? (quantized * baseB + (denseParams - quantized) * pB) / denseParams : pB;
  const gz = V.gatherStage(sh.style, zero);
  const agBytes = dense && (zero >= 1 || bf16Opt) ? (gz <= 2 ? V.zeroParamAllGatherBytes(gradDense, pB) : V.zeroParamAllGatherBytes(denseParams, qwz ? Math.min(gatherB, 1) : gatherB)) : 0;
  const hpzLink = dense && hpz > 1 ? productLink(plan, [[hpz, axisStride(plan, 'dp')]]) : undefined;
  const agBackBytes = hpzLink ? V.zeroParamAllGatherBytes(denseParams, gatherB) : agBytes;
  const expertAgBytes = dense && expertFsdp ? V.zeroParamAllGatherBytes(gz <= 2 ? gradExpert : sp.expert, pB) : 0;
  const expertRsBytes = dense && expertFsdp ? V.zeroGradReduceScatterBytes(gradExpert, gB) : 0;
  const hasEdp = gradExpert > 0 && l.edp > 1 && !expertFsdp;
  const edpBytes = hasEdp ? V.dpGradAllReduceBytes(gradExpert, gB) : 0;
  const hsdpBytes = l.replicas > 1 && zero >= 1 ? V.dpGradAllReduceBytes(gradDense / l.shard + (expertFsdp ? gradExpert / l.edp : 0), gB) : 0;
  const shardOf = zero >= 1 ? l.shard : 1;
  // The optimizer's copies move what trains (under LoRA the adapters); the parameters' fetches every weight, in the
  // dtype it is stored in (a quantized LoRA base in its own).
  const offloadOptBytes = sh.offloadOptimizer !== 'none' ? V.optimizerOffloadBytes((gradDense + gradExpert) / shardOf, gB) : 0;
  const storedB = (denseParams * gatherB + (sp.expert - fold) * pB) / Math.max(1, denseParams + sp.expert - fold);
  const offloadParamBytes = sh.offloadParams !== 'none' ? V.paramOffloadBytesPerMicrobatch((sp.dense + sp.expert) / shardOf, storedB) : 0;
  const layers = Math.max(1, stageLayerCount(plan, stage));
  // FSDP2 copies every gathered parameter out of the all-gather buffer and every gradient into the reduce-scatter buffer.
  const fsdp2 = dense !== undefined && sh.style === 'fsdp2';
  const gathers = fsdp2 && gz >= 3 ? V.zero3AllGathersPerMicrobatch(V.gatherReshards(sh.style, zero, sh.reshardAfterForward)) : 0;
  const copyOut = gathers > 0 ? V.fsdp2CopyOutBytes(denseParams, gatherB) + (expertFsdp ? V.fsdp2CopyOutBytes(sp.expert, pB) : 0) : 0;
  const copyIn = fsdp2 && zero >= 2 ? V.fsdp2ReduceCopyInBytes(gradDense + (expertFsdp ? gradExpert : 0), V.paramCommBytes(tr.precision), gB) : 0;
  // The experts' gathers and reduce-scatters run on the same streams as the dense groups', one after the other.
  const ex = (kind: 'all-gather' | 'reduce-scatter', bytes: number) => (bytes > 0 ? linkSeconds(kind, bytes, l.edpLink) : 0);
  const agLayerSeconds = dense && zero >= 1 ? linkSeconds('all-gather', agBytes / layers, dense) + ex('all-gather', expertAgBytes / layers) : 0;
  const embLink = embeddingGroupLink(plan, stage);
  const tp = Math.max(1, plan.parallel.tp);
  const embBytes = embLink ? V.embeddingGroupGradBytes(paddedVocabSize(plan.model.vocabSize, plan.model.vocabPadMultiple, tp), plan.model.hiddenSize, tp, embeddingGradBytes(plan)) : 0;
  return {
    gradDtype: tr.gradDtype, precision: tr.precision, params: sp,
    hasDense: dense !== undefined, hasEdp,
    layers, firstBucket: firstBucketFraction(plan, sp.dense + sp.expert),
    dpBytes, dpSeconds: dense && zero === 0 ? linkSeconds('all-reduce', dpBytes, dense) : 0,
    rsBytes, rsSeconds: dense && zero >= 1 ? linkSeconds('reduce-scatter', rsBytes, dense) + ex('reduce-scatter', expertRsBytes) : 0,
    agBytes, agSeconds: agBytes > 0 ? linkSeconds('all-gather', agBytes, dense!) + ex('all-gather', expertAgBytes) : 0,
    agLayerSeconds,
    rsLayerSeconds: dense && zero >= 2 ? linkSeconds('reduce-scatter', rsBytes / layers, dense) + ex('reduce-scatter', expertRsBytes / layers) : 0,
    edpBytes, edpSeconds: hasEdp ? linkSeconds('all-reduce', edpBytes, l.edpLink) : 0,
    expertAgBytes, expertRsBytes,
    agBackBytes, hpzLink,
    agBackLayerSeconds: hpzLink ? linkSeconds('all-gather', agBackBytes / layers, hpzLink) + ex('all-gather', expertAgBytes / layers) : agLayerSeconds,
    hsdpBytes, hsdpSeconds: l.replicas > 1 && zero >= 1 ? linkSeconds('all-reduce', hsdpBytes, l.replicaLink) : 0,
    hsdpLayerSeconds: l.replicas > 1 && zero >= 1 ? linkSeconds('all-reduce', hsdpBytes / layers, l.replicaLink) : 0,
    offloadOptBytes, offloadOptSeconds: sh.offloadOptimizer !== 'none' ? linkSeconds('send-recv', offloadOptBytes, l.pcieLink) : 0,
    offloadParamBytes, offloadParamSeconds: sh.offloadParams !== 'none' ? linkSeconds('send-recv', offloadParamBytes, l.pcieLink) : 0,
    copyForwardBytes: copyOut, copyBackwardBytes: (gathers > 1 ? copyOut : 0) + copyIn,
    embBytes, embSeconds: embLink ? linkSeconds('all-reduce', embBytes, embLink) : 0, embLink,
  };
}
