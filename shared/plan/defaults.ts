/**
 * makePlan: fills every missing Plan field with a documented default and records where each value came from.
 * Used by tests, the CLI, the planner and the config resolver. Explicit values win; their sources are kept.
 */
import { findGpu } from '../hardware/gpus';
import type {
  ClusterSpec, EngineId, GpuSpec, InputSource, ModelSpec, OverheadSpec, ParallelSpec, Plan, ShardingSpec, TrainingSpec,
} from './types';

/** Recursively optional version of a plan (arrays stay whole). */
export type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { -readonly [K in keyof T]?: DeepPartial<T[K]> } : T;

/** Input of makePlan: any subset of a Plan, but the model is required. */
export type PlanInput = DeepPartial<Omit<Plan, 'model' | 'cluster' | 'sources'>> & {
  readonly sources?: Readonly<Record<string, InputSource>>;
  readonly model: ModelSpec;
  readonly cluster?: DeepPartial<Omit<ClusterSpec, 'gpu'>> & { readonly gpu?: GpuSpec };
};

/** Default training inputs and why. */
export const TRAINING_DEFAULTS: { readonly [K in keyof TrainingSpec]-?: readonly [TrainingSpec[K], string] } = {
  microBatch: [1, 'ShardLens default micro batch 1'],
  globalBatch: [1, 'micro batch × gradient accumulation × DP'],
  gradAccum: [1, 'no gradient accumulation'],
  seqLen: [2048, 'ShardLens default sequence length 2048'],
  precision: ['bf16-mixed', 'bf16 mixed precision with fp32 master weights (common default)'],
  gradDtype: ['bf16', 'gradients in the compute dtype'],
  fp32GradAccum: [false, 'no separate fp32 gradient accumulation buffer'],
  optimizer: ['adamw', 'AdamW (default of every framework)'],
  recompute: ['none', 'no activation recomputation'],
  recomputeLayers: [undefined, 'all layers of the stage when recompute is full'],
  flashAttention: [true, 'fused/flash attention (default in current frameworks)'],
  compile: [false, 'eager mode (no torch.compile)'],
  fp8: [undefined, "the engine's default FP8 recipe"],
  regime: [undefined, 'derived from the engine and precision (docs/engine-memory.md)'],
  recomputePolicy: [undefined, "the engine's recomputation policy"],
  recomputeEvery: [undefined, 'every block'],
  modelImpl: [undefined, "the engine's model implementation"],
  optimizerImpl: [undefined, "the engine's default optimizer implementation"],
  lossFusion: [undefined, 'no cross-entropy fusion'],
};

/** The engine a sharding style implies when no file names one. */
export function engineForStyle(style: ShardingSpec['style']): EngineId {
  switch (style) {
    case 'deepspeed': return 'deepspeed';
    case 'megatron-distopt': return 'megatron';
    case 'fsdp': return 'fsdp1';
    case 'fsdp2': return 'fsdp2';
    default: return 'ddp';
  }
}

/** DeepSpeed defaults for buckets (deepspeed/runtime/zero/config.py): reduce/allgather 5e8, prefetch 5e7, max live 1e9. */
const DS_BUCKET = 5e8;
/** PyTorch DDP bucket_cap_mb = 25 MiB. */
const DDP_BUCKET_BYTES = 25 * 2 ** 20;

/** Greatest common divisor of two positive integers (1 for anything else). */
function gcd(a: number, b: number): number {
  if (!Number.isInteger(a) || !Number.isInteger(b) || a <= 0 || b <= 0) return 1;
  while (b) [a, b] = [b, a % b];
  return a;
}

type Pick = <T>(path: string, value: T | undefined, fallback: T, why: string, kind?: InputSource['kind']) => T;

/** The optional memory-model fields that were given (absent ones stay absent: the engine decides). */
function optionalTraining(t: DeepPartial<TrainingSpec>, pick: Pick): Partial<TrainingSpec> {
  const out: Record<string, unknown> = {};
  for (const k of ['regime', 'recomputePolicy', 'recomputeEvery', 'modelImpl', 'optimizerImpl', 'lossFusion'] as const) {
    if (t[k] !== undefined) out[k] = pick(`training.${k}`, t[k], t[k], '');
  }
  return out as Partial<TrainingSpec>;
}

/** Fills a Plan from a partial one; `gpu` is the cluster's GPU when the partial has none (default H100 SXM). */
export function makePlan(partial: PlanInput, gpu?: GpuSpec): Plan {
  const src: Record<string, InputSource> = {};
  const given = partial.sources ?? {};
  const pick = <T>(path: string, value: T | undefined, fallback: T, why: string, kind: InputSource['kind'] = 'default'): T => {
    if (value !== undefined) {
      src[path] = given[path] ?? { kind: 'explicit', detail: 'given' };
      return value;
    }
    src[path] = given[path] ?? { kind, detail: why };
    return fallback;
  };
  const t = partial.training ?? {};
  const p = partial.parallel ?? {};
  const s = p.sharding ?? {};
  const c = partial.cluster ?? {};
  const o = partial.overhead ?? {};

  const tp = pick('parallel.tp', p.tp, 1, 'no tensor parallelism');
  const pp = pick('parallel.pp', p.pp, 1, 'no pipeline parallelism');
  const cp = pick('parallel.cp', p.cp, 1, 'no context parallelism');
  const mp = Math.max(1, tp * pp * cp) || 1;
  const worldFromCluster = c.nodes !== undefined && c.gpusPerNode !== undefined ? c.nodes * c.gpusPerNode : undefined;
  const dp = pick('parallel.dp', p.dp, worldFromCluster ? Math.max(1, Math.floor(worldFromCluster / mp)) : 1,
    worldFromCluster ? 'world size / (TP·PP·CP)' : 'single data-parallel replica', worldFromCluster ? 'derived' : 'default');
  const world = dp * mp;
  // Default node: 8 GPUs (HGX/DGX); smaller worlds fill one node; other sizes use gcd(world, 8) so nodes × GPUs = world.
  const gpnDefault = world <= 8 ? Math.max(1, world) : world % 8 === 0 ? 8 : gcd(world, 8);
  const gpusPerNode = pick('cluster.gpusPerNode', c.gpusPerNode, gpnDefault, '8 GPUs per node (HGX/DGX)');
  const nodes = pick('cluster.nodes', c.nodes, Math.max(1, Math.ceil(world / gpusPerNode)), 'world size / GPUs per node', 'derived');
  const gpuSpec = pick('cluster.gpu', c.gpu ?? gpu, findGpu('h100-sxm') as GpuSpec, 'ShardLens default GPU H100 SXM 80GB', 'assumed');

  const precision = pick('training.precision', t.precision, TRAINING_DEFAULTS.precision[0], TRAINING_DEFAULTS.precision[1]);
  const gradDefault = precision === 'fp32' ? 'fp32' : precision === 'fp16-mixed' ? 'fp16' : 'bf16';
  const microBatch = pick('training.microBatch', t.microBatch, 1, TRAINING_DEFAULTS.microBatch[1]);
  let gradAccum: number;
  let globalBatch: number;
  if (t.gradAccum === undefined && t.globalBatch !== undefined) {
    globalBatch = pick('training.globalBatch', t.globalBatch, 1, '');
    gradAccum = pick('training.gradAccum', undefined, Math.max(1, Math.round(globalBatch / Math.max(1, microBatch * dp))) || 1,
      'global batch / (micro batch × DP)', 'derived');
  } else {
    gradAccum = pick('training.gradAccum', t.gradAccum, 1, TRAINING_DEFAULTS.gradAccum[1]);
    globalBatch = pick('training.globalBatch', t.globalBatch, microBatch * gradAccum * dp, TRAINING_DEFAULTS.globalBatch[1], 'derived');
  }
  const training: TrainingSpec = {
    microBatch, globalBatch, gradAccum,
    seqLen: pick('training.seqLen', t.seqLen, Math.min(2048, partial.model.maxPositions || 2048), TRAINING_DEFAULTS.seqLen[1]),
    precision,
    gradDtype: pick('training.gradDtype', t.gradDtype, gradDefault, TRAINING_DEFAULTS.gradDtype[1]),
    fp32GradAccum: pick('training.fp32GradAccum', t.fp32GradAccum, false, TRAINING_DEFAULTS.fp32GradAccum[1]),
    optimizer: pick('training.optimizer', t.optimizer, 'adamw', TRAINING_DEFAULTS.optimizer[1]),
    recompute: pick('training.recompute', t.recompute, 'none', TRAINING_DEFAULTS.recompute[1]),
    ...(t.recomputeLayers !== undefined ? { recomputeLayers: pick('training.recomputeLayers', t.recomputeLayers, 0, '') } : {}),
    flashAttention: pick('training.flashAttention', t.flashAttention, true, TRAINING_DEFAULTS.flashAttention[1]),
    compile: pick('training.compile', t.compile, false, TRAINING_DEFAULTS.compile[1]),
    ...optionalTraining(t, pick),
    ...(t.fp8 !== undefined && t.fp8.recipe !== undefined
      ? { fp8: pick('training.fp8', { recipe: t.fp8.recipe, paramGather: t.fp8.paramGather ?? false }, { recipe: 'tensorwise', paramGather: false }, '') }
      : {}),
  };

  const style = pick('parallel.sharding.style', s.style, 'ddp', 'plain data parallel (DDP)');
  // FSDP strategies map to ZeRO stages: FULL_SHARD/HYBRID_SHARD 3, SHARD_GRAD_OP/_HYBRID_SHARD_ZERO2 2, NO_SHARD 0.
  const fsdpStage = { FULL_SHARD: 3, HYBRID_SHARD: 3, SHARD_GRAD_OP: 2, _HYBRID_SHARD_ZERO2: 2, NO_SHARD: 0 } as const;
  const stageDefault = s.fsdpStrategy !== undefined ? fsdpStage[s.fsdpStrategy] ?? 3
    : style === 'megatron-distopt' ? 1 : style === 'fsdp' || style === 'fsdp2' ? 3 : 0;
  const gradBytes = training.gradDtype === 'fp32' ? 4 : 2;
  const bucketDefault = style === 'deepspeed' ? DS_BUCKET : Math.round(DDP_BUCKET_BYTES / gradBytes);
  const sharding: ShardingSpec = {
    style,
    stage: pick('parallel.sharding.stage', s.stage, stageDefault, 'stage implied by the sharding style'),
    ...(s.fsdpStrategy !== undefined ? { fsdpStrategy: pick('parallel.sharding.fsdpStrategy', s.fsdpStrategy, 'FULL_SHARD', '') } : {}),
    shardGroupSize: pick('parallel.sharding.shardGroupSize', s.shardGroupSize, dp, 'shard over the whole DP group', 'derived'),
    reshardAfterForward: pick('parallel.sharding.reshardAfterForward', s.reshardAfterForward, true, 'FSDP reshard_after_forward=True'),
    offloadOptimizer: pick('parallel.sharding.offloadOptimizer', s.offloadOptimizer, 'none', 'no offload'),
    offloadParams: pick('parallel.sharding.offloadParams', s.offloadParams, 'none', 'no offload'),
    reduceBucketElems: pick('parallel.sharding.reduceBucketElems', s.reduceBucketElems, bucketDefault,
      style === 'deepspeed' ? 'DeepSpeed reduce_bucket_size 5e8' : 'DDP bucket_cap_mb 25'),
    allgatherBucketElems: pick('parallel.sharding.allgatherBucketElems', s.allgatherBucketElems, DS_BUCKET, 'DeepSpeed allgather_bucket_size 5e8'),
    prefetchBucketElems: pick('parallel.sharding.prefetchBucketElems', s.prefetchBucketElems, 5e7, 'DeepSpeed stage3_prefetch_bucket_size 5e7'),
    maxLiveParams: pick('parallel.sharding.maxLiveParams', s.maxLiveParams, 1e9, 'DeepSpeed stage3_max_live_parameters 1e9'),
    overlapComm: pick('parallel.sharding.overlapComm', s.overlapComm, style !== 'deepspeed' || (s.stage ?? stageDefault) === 3,
      'DeepSpeed overlap_comm defaults on only for ZeRO-3; DDP/FSDP/Megatron overlap'),
  };
  const parallel: ParallelSpec = {
    dp, tp, pp, cp,
    sp: pick('parallel.sp', p.sp, false, 'no sequence parallelism'),
    vpp: pick('parallel.vpp', p.vpp, 1, 'no virtual pipeline stages'),
    schedule: pick('parallel.schedule', p.schedule, (p.vpp ?? 1) > 1 ? 'interleaved' : '1f1b', '1F1B (Megatron and torchtitan default)'),
    ...(p.stageLayers !== undefined ? { stageLayers: pick('parallel.stageLayers', p.stageLayers, [], '') } : {}),
    ep: pick('parallel.ep', p.ep, 1, 'no expert parallelism'),
    etp: pick('parallel.etp', p.etp, 1, 'expert tensor parallel 1'),
    sharding,
    order: pick('parallel.order', p.order, ['tp', 'cp', 'ep', 'pp', 'dp'], 'Megatron order tp-cp-ep-pp-dp'),
    tpCommOverlap: pick('parallel.tpCommOverlap', p.tpCommOverlap, false, 'no TP communication overlap'),
  };
  const overhead: OverheadSpec = {
    cudaContextBytes: pick('overhead.cudaContextBytes', o.cudaContextBytes, 1.5 * 2 ** 30,
      'CUDA context, cuBLAS workspace and NCCL communicators ≈ 1.5 GiB (formulas.md guidance 3: 1–2 GB)'),
    allocatorFragmentation: pick('overhead.allocatorFragmentation', o.allocatorFragmentation, 0.1,
      'caching-allocator fragmentation ≈ 10% of allocated (formulas.md guidance 3: 5–10%)'),
  };
  src.model = given.model ?? { kind: 'explicit', detail: partial.model.name };
  for (const [k, v] of Object.entries(given)) if (!(k in src)) src[k] = v;
  const lora = partial.lora && partial.lora.rank !== undefined
    ? { rank: partial.lora.rank, targets: partial.lora.targets ?? ['q', 'k', 'v', 'o'], baseDtype: partial.lora.baseDtype ?? 'bf16' }
    : undefined;
  const engine = pick('engine', partial.engine, engineForStyle(style), `engine implied by the sharding style (${style})`, 'derived');
  return {
    engine, model: partial.model, training, parallel, overhead,
    cluster: { gpu: gpuSpec, gpusPerNode, nodes },
    ...(lora ? { lora } : {}),
    sources: src,
  };
}
