/**
 * DeepSpeed's own buffers, as DeepSpeed 0.19.8 allocates them (runtime/zero/stage_1_and_2.py, stage3.py,
 * partitioned_param_coordinator.py, runtime/bf16_optimizer.py, runtime/engine.py). The fake-tensor oracle runs that
 * engine (probe/oracle/ds_engine.py); the moments of its step are in deepspeedMoments.ts; facts and sources:
 * docs/engine-memory.md#deepspeed. Sizes are elements unless a name says bytes; P is one rank's partition.
 *
 * Which wrapper: ZeRO-1/2 run DeepSpeedZeroOptimizer with bf16 or fp16, except ZeRO-1 with 16-bit weights and
 * `data_types.grad_accum_dtype: fp32`, which runs BF16_Optimizer (engine.py `_do_optimizer_sanity_check`); ZeRO-3 runs
 * DeepSpeedZeroOptimizer_Stage3. Without ZeRO, 16-bit weights outside the pipeline engine run the FP16 wrapper
 * (DDP_BFLOAT16 for bf16, FP16 for fp16): FP16_UnfusedOptimizer around a client torch optimizer (fp16/unfused_optimizer.py).
 */
import type { MemoryContext } from './context';
import { mlaProjections } from '../model/mla';

/** 0: not DeepSpeed's engine; 1: DeepSpeedZeroOptimizer (ZeRO-1/2); 2: BF16_Optimizer; 3: ZeRO-3; 4: the FP16 wrapper without ZeRO. */
export type DsKind = 0 | 1 | 2 | 3 | 4;

/** One stage's DeepSpeed buffers in bytes (per rank), refilled per stage (the planner's fast path allocates nothing). */
export interface DsBuffers {
  kind: DsKind;
  /** ZeRO-2, or ZeRO-1 with overlap_comm: gradients are reduced from the hooks during the backward. */
  reduceInBackward: boolean;
  /** ZeRO-1: gradients are reduced only at the accumulation boundary (`reduce_ready_partitions_and_remove_grads`). */
  zero1: boolean;
  /** Without contiguous_gradients: the gradients that wait, as they are, for a reduction (up to a bucket). */
  waiting: number;
  /** The reduction buckets (`ipg_buckets`). */
  bucket: number;
  /** The flat copy one reduction makes of a bucket or of one parameter larger than a bucket. */
  reduceCopy: number;
  /** The gradient partition (`grads_in_partition`, or the fp32 `averaged_gradients` partition). */
  partition: number;
  /** The fp32 partition of fp32 accumulation is allocated before the reduction that fills it. */
  partitionBeforeReduce: boolean;
  /** Every 16-bit gradient of the stage (autograd's .grad before the engine reduces it). */
  allGrads: number;
  /**
   * The gradient of the stage's first parameter (the embedding), the last one the backward makes and reduces, where it
   * stays beside the partition: a gradient larger than a bucket (or any, without contiguous_gradients) is reduced as it
   * is; a smaller one is copied into the bucket and freed (`reduce_independent_p_g_buckets_and_remove_grads`).
   */
  firstGrad: number;
  /** The LM head's gradient when it is made (the backward's first), what of it waits outside the bucket, its reduction copy. */
  headGrad: number; headWait: number; headCopy: number;
  /** Tied embeddings: the shared weight's gradient, made at the head's backward and kept until the embedding's. */
  tiedGrad: number;
  /** The optimizer step's transient copies: fp64 norm copies or the flat fp32 gradient partition. */
  step: number;
  /** Gradient buffers that persist: BF16_Optimizer's fp32 gradients, ZeRO-3's gradient partitions. */
  staticGrads: number;
  /** ZeRO-3: parameters gathered by the coordinator through the forward and the backward. */
  gathered: number;
  /** ZeRO-3: what the forward's fetches gather on top of `gathered` (shared/memory/deepspeed.ts `dsZero3ForwardExtraElems`). */
  fetchCopy: number;
  /** The FP16 wrapper: one block's gradients, and its largest weight's (the first the block's backward makes). */
  blockGrad: number; weightGrad: number;
}

/**
 * Elements per flat copy of DeepSpeed's all-reduce without ZeRO: `allreduce_gradients` passes MEMORY_OPT_ALLREDUCE_SIZE
 * (5·10⁸, engine.py), whatever reduce_bucket_size says, to `allreduce_no_retain`, which closes a bucket once it holds
 * more than that many elements and flattens it (`allreduce_and_copy`).
 */
const DS_ALLREDUCE_BUCKET_ELEMS = 500_000_000;

/**
 * The largest flat copy of that all-reduce, in elements: a bucket closes past B elements, so it holds at most B plus the
 * parameter that crossed it, and never more than the stage's Ψ.
 */
export function dsAllreduceCopyElems(psi: number, largest: number): number {
  return Math.min(psi, DS_ALLREDUCE_BUCKET_ELEMS + largest);
}

/** A zeroed DsBuffers to refill. */
export function newDsBuffers(): DsBuffers {
  return {
    kind: 0, reduceInBackward: false, zero1: false, waiting: 0, partitionBeforeReduce: false, bucket: 0, reduceCopy: 0, partition: 0, allGrads: 0, firstGrad: 0, headGrad: 0,
    headWait: 0, tiedGrad: 0, headCopy: 0, step: 0, staticGrads: 0, gathered: 0, fetchCopy: 0, blockGrad: 0, weightGrad: 0,
  };
}

/**
 * One rank's partition: P = ⌈Ψ / 2N⌉ · 2. The 16-bit flat group is padded to a multiple of 2N (nccl_start_alignment_factor
 * 2 × world) and split in N equal partitions (stage_1_and_2.py `__init__`, `get_data_parallel_partitions`; ZeRO-3 pads
 * each parameter to ⌈numel/N⌉ instead, within a few elements of the same).
 */
export function dsPartitionElems(psi: number, n: number): number {
  return Math.ceil(psi / (2 * n)) * 2;
}

/**
 * The reduction buckets: (overlap_comm ? 2 : 1) · reduce_bucket_size · b_grad with contiguous_gradients, allocated at
 * the first gradient hook of each backward and freed when its reduction ends (stage_1_and_2.py `setup_buckets`,
 * `_release_ipg_buffers`); none without contiguous_gradients. ZeRO-3 keeps one bucket from initialization on, overlap
 * or not (stage3.py `_setup_for_real_optimizer`). The size is reduce_bucket_size itself, not capped by the model.
 */
export function dsBucketBytes(bucketElems: number, overlap: boolean, contiguous: boolean, gradBytes: number, zero3: boolean): number {
  if (!contiguous) return 0;
  return (zero3 || !overlap ? 1 : 2) * bucketElems * gradBytes;
}

/**
 * The flat copy of one reduction: b_grad · (X > B ? min(X, B + min(P, X)) : min(B, Ψ)) for a reduction of a parameter of
 * X elements with bucket B. The reduce-scatter runs as all-reduces of the bucket's per-rank slices, which
 * `allreduce_bucket` flattens into a new tensor, in chunks closed once they pass B elements (stage_1_and_2.py
 * `average_tensor`, `allreduce_and_scatter`); a parameter larger than the bucket bypasses it and is reduced on its own.
 */
export function dsReduceCopyBytes(x: number, bucketElems: number, partition: number, psi: number, gradBytes: number): number {
  const elems = x > bucketElems ? Math.min(x, bucketElems + Math.min(partition, x)) : Math.min(bucketElems, psi);
  return gradBytes * elems;
}

/**
 * The gradient partition of a rank whose partition starts at the first parameter (rank 0, which the oracle measures):
 * DeepSpeed sizes `grads_in_partition` to every whole parameter that overlaps the partition (stage_1_and_2.py
 * `get_partition_info`, `copy_grads_in_partition`). In `module.parameters()` order the first parameter is the
 * embedding; when it is smaller than P the next parameters follow (the layers' matrices, whole).
 */
export function dsRankZeroSpanElems(first: number, partition: number, layerElems: number, largestLayerParam: number): number {
  if (first >= partition) return first;
  const rest = partition - first;
  if (layerElems <= 0) return first;
  // Whole layers, then the parameters of the next layer up to the partition's end (at most one of them overhangs).
  const whole = Math.floor(rest / layerElems) * layerElems;
  return first + (rest > whole ? rest + Math.min(largestLayerParam, layerElems) : whole);
}

/**
 * The optimizer step's transient copies. ZeRO-1/2: the gradient norm casts each gradient slice of the partition to fp64
 * (`get_grad_norm_direct`, get_norm_dtype: 8 · min(P, L)), then the partition is flattened (a 16-bit copy when it holds
 * more than one slice) and cast to fp32 (4P) for the optimizer (stage_1_and_2.py `step`); with an fp32 accumulation
 * partition it is handed over as it is. ZeRO-3: fp64 norm copies of the largest parameter's partition 8 · ⌈L/N⌉, then the
 * 16-bit flatten and its fp32 cast, 2P + 4P (stage3.py `_prepare_fp32_grad_for_sub_group`).
 */
export function dsStepCopyBytes(kind: DsKind, partition: number, largest: number, n: number, manySlices: boolean, fp32Accum: boolean): number {
  if (kind === 3) return Math.max(8 * Math.ceil(largest / n), (fp32Accum ? 0 : 2 * partition) + 4 * partition);
  const norm = 8 * Math.min(partition, largest);
  return fp32Accum ? norm : Math.max(norm, 4 * partition + (manySlices ? 2 * partition : 0));
}

/**
 * ZeRO-3 parameters gathered at the turn from the forward to the backward and through the backward: the coordinator
 * prefetches until stage3_max_live_parameters are available (`_fetch_sub_module_impl`: min(max_live − available,
 * prefetch bucket) per fetch, overshooting by the parameter that crosses it), releases a module's parameters after it
 * ran unless they are reused within stage3_max_reuse_distance or the prefetch walked past their reuse
 * (`__params_to_release`), and fetches the LM head (H) on demand. So min(Ψ, max(max_live, H)) stay gathered; once the
 * stage fits within max_live plus one parameter (L) every parameter stays gathered.
 */
export function dsZero3GatheredElems(psi: number, maxLive: number, largest: number, head: number): number {
  return psi <= maxLive + largest ? psi : Math.min(psi, Math.max(maxLive, head));
}

/**
 * What the forward's fetches hold on top of that. With the whole stage gathered: one prefetch's all-gather output beside
 * the parameters copied out of it (partition_parameters.py `AllGatherCoalescedHandle.wait` concatenates each parameter
 * out of the flat buffer), at most stage3_prefetch_bucket_size plus the layer parameter that crosses it; otherwise the
 * LM head fetched on demand beside the max_live parameters the prefetch holds, min(Ψ, max_live + H) in all.
 */
export function dsZero3ForwardExtraElems(psi: number, maxLive: number, largest: number, head: number, prefetch: number, largestLayer: number): number {
  if (psi <= maxLive + largest) return prefetch > 0 ? prefetch + largestLayer : 0;
  return Math.max(0, Math.min(psi, maxLive + head) - dsZero3GatheredElems(psi, maxLive, largest, head));
}

/**
 * The largest attention weight one rank holds: the output projection a·d·h/t, or under MLA the largest of its
 * projections (shared/model/mla.ts: the split ones ÷t, the down projections whole).
 */
function largestAttentionMatrix(c: MemoryContext): number {
  if (!c.mla) return (c.heads * c.headDim * c.h) / c.tp;
  let most = 0;
  for (const p of mlaProjections(c.mla, c.h, c.heads)) most = Math.max(most, (p.in * p.out) / (p.tp === 'replicated' ? 1 : c.tp));
  return most;
}

/** Fills `o` for one stage of a DeepSpeed plan; kind 0 when the plan is not run by DeepSpeed's ZeRO optimizers. */
export function fillDsBuffers(c: MemoryContext, first: boolean, last: boolean, layers: number, psi: number, o: DsBuffers): DsBuffers {
  o.kind = 0;
  if (c.style !== 'deepspeed' || c.regime !== 'deepspeed' || c.lora || c.offOpt !== 'none' || c.offParams !== 'none') return o;
  const mlpMatrix = c.denseMlpRank / (c.gated ? 3 : 2);
  const layerElems = c.attnRank + c.denseMlpRank;
  const largestLayer = Math.max(mlpMatrix, largestAttentionMatrix(c));
  const firstParam = first ? c.embedRank : largestLayer;
  const head = last ? c.headRank : 0;
  const largest = Math.max(firstParam, head, layers > 0 ? largestLayer : 0);
  if (c.zstage < 1) return c.paramB < 4 ? fillFp16Wrapper(c, layers, psi, { layerElems, largestLayer, firstParam, head, largest }, o) : o;
  const n = c.nd, g = c.gradB, B = c.reduceBucket, P = dsPartitionElems(psi, n);
  o.kind = c.zstage >= 3 ? 3 : c.zstage === 1 && (c.accum || c.dsBf16Opt) ? 2 : 1;
  o.reduceInBackward = c.zstage >= 2 || c.overlap;
  o.zero1 = c.zstage === 1;
  o.bucket = o.kind === 2 ? 0 : dsBucketBytes(B, c.overlap, c.contiguous, g, o.kind === 3);
  o.allGrads = g * psi;
  o.firstGrad = firstParam > B || !c.contiguous ? g * firstParam : 0;
  o.headGrad = g * head;
  o.headWait = head > B || !c.contiguous ? g * head : 0;
  // One weight serves the embedding and the head: autograd accumulates its gradient until the embedding's backward.
  o.tiedGrad = first && last && c.model.tiedEmbeddings && c.pp === 1 ? g * firstParam : 0;
  o.headCopy = o.reduceInBackward && head > B ? dsReduceCopyBytes(head, B, P, psi, g) : 0;
  // BF16_Optimizer reduces its fp32 gradients through a 16-bit copy of them all (engine.py `allreduce_bucket` with the
  // model's communication dtype), after casting each 16-bit gradient to fp32 (bf16_optimizer.py `_update_hp_grad`).
  o.reduceCopy = o.kind === 2 ? Math.max(g * psi, 4 * largest) : dsReduceCopyBytes(Math.max(firstParam, largest), B, P, psi, g);
  const span = dsRankZeroSpanElems(firstParam, P, layerElems, largestLayer);
  const fp32Partition = c.accum && c.zstage >= 2;
  o.partitionBeforeReduce = fp32Partition;
  // Without contiguous_gradients the partition's parameters keep their own gradients (no copy); the others wait in a
  // bucket until it passes B elements (stage_1_and_2.py `reduce_independent_p_g_buckets_and_remove_grads`).
  o.partition = o.kind !== 1 ? 0 : fp32Partition ? 4 * P : c.contiguous ? g * span : g * Math.max(0, span - firstParam);
  o.waiting = o.kind === 1 && !c.contiguous ? g * Math.min(B, Math.max(0, psi - firstParam - head)) : 0;
  // An fp32 partition adds each reduced slice cast to fp32 (`_add_to_grad_partition_buffer`).
  if (o.kind === 1 && fp32Partition) o.reduceCopy += 4 * Math.min(P, Math.max(firstParam, largest));
  o.step = o.kind === 2 ? 0 : dsStepCopyBytes(o.kind, P, largest, n, firstParam < P, c.accum);
  // BF16_Optimizer's gradient buffer is in its accumulation dtype (bf16_optimizer.py `grad_acc_dtype`): fp32 when
  // data_types.grad_accum_dtype says so, else the model's 16 bits (the pipeline engine without ZeRO).
  o.staticGrads = o.kind === 2 ? (c.accum ? 4 : g) * psi : o.kind === 3 ? (c.accum ? 4 : g) * P : 0;
  o.gathered = o.kind === 3 ? c.gatherB * dsZero3GatheredElems(psi, c.maxLive, largest, head) : 0;
  o.fetchCopy = o.kind === 3 ? c.gatherB * dsZero3ForwardExtraElems(psi, c.maxLive, largest, head, layers > 0 ? c.prefetch : 0, largestLayer) : 0;
  return o;
}

/**
 * The FP16 wrapper's transient bytes at the step, for a stage of Ψ parameters in one parameter group:
 * FP16_UnfusedOptimizer casts each 16-bit gradient to an fp32 `.grad` of its master copy (4Ψ, fp16/unfused_optimizer.py
 * `step`); FP16_Optimizer (DeepSpeed's FusedAdam) makes the same fp32 casts as a list and flattens them into one fp32
 * gradient before the list is freed (fp16/fused_optimizer.py `step`: `_flatten_dense_tensors([p.grad.to(fp32) …])`),
 * 8Ψ at once. The oracle runs both (probe/oracle/ds_engine.py).
 */
export function dsFp16WrapperStepBytes(psi: number, fusedAdam: boolean): number {
  return (fusedAdam ? 8 : 4) * psi;
}

/**
 * The FP16 wrapper without ZeRO (kind 4; engine.py `_do_optimizer_sanity_check` returns DDP_BFLOAT16 or FP16 when the
 * gradient accumulation dtype is the model's, outside the pipeline engine for bf16), as FP16_UnfusedOptimizer runs it:
 * the 16-bit `.grad` of every parameter lives from the backward to the step's `zero_grad`; the engine all-reduces them
 * at the accumulation boundary through flat copies of up to 5·10⁸ elements (`buffered_allreduce_fallback`); the step
 * casts each to an fp32 `.grad` of its master copy (4Ψ) beside them, runs the torch optimizer and drops the fp32 copies
 * (`step`). A later micro-batch's gradient is made beside the accumulated one (autograd's out-of-place sum): the
 * stage's first parameter's, the backward's last and largest. MoE layers are counted at the dense width. The oracle runs this engine (probe/oracle/ds_engine.py).
 */
function fillFp16Wrapper(
  c: MemoryContext, layers: number, psi: number,
  p: { layerElems: number; largestLayer: number; firstParam: number; head: number; largest: number }, o: DsBuffers,
): DsBuffers {
  const g = c.gradB;
  o.kind = 4;
  o.reduceInBackward = false; o.zero1 = false; o.partitionBeforeReduce = false;
  o.bucket = 0; o.partition = 0; o.waiting = 0; o.headWait = 0; o.headCopy = 0; o.tiedGrad = 0; o.staticGrads = 0; o.gathered = 0; o.fetchCopy = 0;
  o.allGrads = g * psi;
  o.firstGrad = g * p.firstParam;
  o.headGrad = g * p.head;
  o.blockGrad = layers > 0 ? g * p.layerElems : 0;
  o.weightGrad = layers > 0 ? g * p.largestLayer : 0;
  o.reduceCopy = g * dsAllreduceCopyElems(psi, p.largest);
  o.step = dsFp16WrapperStepBytes(psi, c.dsFusedAdam);
  return o;
}
