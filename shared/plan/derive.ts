/**
 * derivePlan: the one place where plan values are derived from other inputs or defaulted. Readers only report what a
 * file states (and the constant defaults of their framework); the resolver gathers those statements into a PlanInput;
 * everything that depends on another input (DP from the world size, accumulation from the global batch, overlap from
 * the ZeRO stage, SP from TP, VPP from layers per virtual stage, engine-dependent defaults) is computed here. A what-if
 * overrides stated inputs and derives again (`rederive`), so it equals editing the file and reading it again.
 */
import { findGpu } from '../hardware/gpus';
import { assumedSplit, deriveBatch } from './batch';
import { applyCalibration, type ClusterCorrection } from './calibration';
import { withProfile } from './profilePlan';
import type { ClusterProfile } from '../hardware/profile';
import {
  dpOfWorld, engineForFormat, modelImplForFormat, engineForStyle, gpusPerNodeDefault, gradDtypeOf, hybridStrategy, overlapCommDefault,
  reduceBucketDefault, reshardAfterForwardDefault, scheduleFor, sequenceParallel, shardGroupOf, stageOfStrategy, stageOfStyle, styleDefault,
  countedStageLayers, unevenStageLayers, vppOfLayers, torchtitanStageLayers, torchtitanStagesPerRank, DS_DEFAULTS, TORCHTITAN_STAGE_WEIGHT,
} from './derived';
import type { FormatId } from './facts';
import type { PlanPath } from './paths';
import { EP_DISPATCHERS } from './types';
import type {
  MegatronRecomputeModule,
  ClusterSpec, GpuSpec, InputSource, ModelSpec, OverheadSpec, ParallelSpec, Plan, Problem, ShardingSpec, TrainingSpec,
} from './types';

/** Recursively optional version of a plan (arrays stay whole). */
export type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { -readonly [K in keyof T]?: DeepPartial<T[K]> } : T;

/** Stated training inputs that are not plan fields. */
interface ExtraTraining {
  /** Sequences per GPU per optimizer step (Axolotl `batch_size`): accumulation = this / micro batch. */
  readonly deviceBatch?: number;
  /**
   * Optimizer steps the run plans (torchtitan `training.steps`, Megatron `--train-iters`, the HF Trainer's `max_steps`):
   * with the step time, the run's wall-clock and GPU-hours (shared/wording/runLength.ts). No estimate reads it.
   */
  readonly steps?: number;
  /** Sequences the run plans instead (Megatron `--train-samples`): steps = samples / global batch. */
  readonly samples?: number;
}

/** Stated inputs that are not plan fields: what the resolver reads from facts and derivePlan turns into plan fields. */
interface ExtraParallel {
  /** HSDP replicas (the shard group is DP / replicas). */
  readonly dpReplicate?: number;
  /** Megatron distributed-optimizer instances (the shard group is DP / instances). */
  readonly shardInstances?: number;
  /** Megatron layers per virtual pipeline stage (VPP = L / PP / this). */
  readonly vppLayers?: number;
  /** Megatron first / last pipeline stage layer counts (uneven split). */
  readonly firstStageLayers?: number;
  readonly lastStageLayers?: number;
  /** torchtitan's layer-equivalents of the embedding and of the norm + head in its pipeline split (default 1 each). */
  readonly firstStageLess?: number;
  readonly lastStageLess?: number;
}

/** The stated inputs of a plan: any subset of a Plan plus the extras above; the model is required. */
export type PlanInput = DeepPartial<Omit<Plan, 'model' | 'cluster' | 'sources' | 'parallel' | 'training' | 'stated'>> & {
  readonly training?: DeepPartial<TrainingSpec> & ExtraTraining;
  readonly sources?: Readonly<Partial<Record<PlanPath, InputSource>>>;
  readonly model: ModelSpec;
  readonly cluster?: DeepPartial<Omit<ClusterSpec, 'gpu'>> & { readonly gpu?: GpuSpec; readonly worldSize?: number };
  readonly parallel?: DeepPartial<ParallelSpec> & ExtraParallel;
  /** The format of the file the inputs came from (format-dependent defaults: torchtitan SP and reshard policy, Megatron ETP). */
  readonly format?: FormatId;
  /** Per-cluster correction from "Calibrate", applied after derivation. */
  readonly calibration?: ClusterCorrection;
  /** A measured cluster profile, attached last (shared/plan/profilePlan.ts). */
  readonly profile?: ClusterProfile;
};

/**
 * Megatron's split with the embedding and the loss counted as layers (derived.ts countedStageLayers) once the model's
 * layers are known (a preset's, a recipe's model); a problem when it does not divide.
 */
function megatronCountedSplit(L: number, pp: number, e: number | undefined, l: number | undefined, problems: Problem[]): { first?: number; last?: number } | undefined {
  if (!e && !l) return undefined;
  const split = countedStageLayers(L, pp, e ?? 0, l ?? 0);
  if (!split) problems.push({ code: 'megatron-account-split', severity: 'warning', message: `With the embedding and loss counted as layers, ${L} layers do not split evenly over ${pp} pipeline stages.`, paths: ['parallel.pp', 'model.layers'] });
  return split;
}

/** Default training inputs and why (constants; values that depend on other inputs are derived below). */
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
  recomputeModules: [undefined, "Megatron's default selective recomputation: core attention"],
  flashAttention: [true, 'fused/flash attention (default in current frameworks)'],
  compile: [false, 'eager mode (no torch.compile)'],
  fp8: [undefined, "the engine's default FP8 recipe"],
  regime: [undefined, 'derived from the engine and precision (docs/engine-memory.md)'],
  recomputePolicy: [undefined, "the engine's recomputation policy"],
  recomputeEvery: [undefined, 'every block'],
  modelImpl: [undefined, "the engine's model implementation"],
  optimizerImpl: [undefined, "the engine's default optimizer implementation"],
  lossFusion: [undefined, 'no cross-entropy fusion'],
  cudaGraph: [undefined, 'no CUDA graphs'],
  expertsImpl: [undefined, "transformers' default experts (grouped_mm)"],
  packing: [undefined, 'one sample per sequence'],
  optimizerInBackward: [undefined, 'one optimizer step after the backward'],
  syncEveryMicroBatch: [undefined, 'gradients reduced in every micro-batch'],
  pagedOptimizer: [undefined, 'optimizer states in GPU memory'],
  previousOutputHeld: [undefined, "the loop drops a micro-batch's output after its backward"],
  activationOffload: [undefined, 'saved activations stay on the GPU'],
  normUpcast: [undefined, "the engine's RMSNorm"],
  ligerKernels: [undefined, "transformers' own norm, rotary and activation code"],
  sampleTokens: [undefined, 'sample lengths unknown (attention over whole sequences)'],
};

/** The optional memory-model fields that were given (absent ones stay absent: the engine decides). */
function optionalTraining(t: DeepPartial<TrainingSpec>, pick: Pick): Partial<TrainingSpec> {
  const out: Record<string, unknown> = {};
  for (const k of ['regime', 'recomputePolicy', 'recomputeEvery', 'modelImpl', 'optimizerImpl', 'lossFusion', 'cudaGraph', 'expertsImpl', 'packing', 'optimizerInBackward', 'syncEveryMicroBatch', 'pagedOptimizer', 'previousOutputHeld', 'activationOffload', 'normUpcast', 'ligerKernels', 'sampleTokens'] as const) {
    if (t[k] !== undefined) out[k] = pick(`training.${k}`, t[k], t[k], '');
  }
  return out as Partial<TrainingSpec>;
}

/** A derived plan with the problems derivation found (inconsistent world size or batch identity). */
export interface Derived {
  readonly plan: Plan;
  readonly problems: Problem[];
}

/** Picks stated values (keeping their sources) or records a default / derived value with its reason. */
function picker(given: Readonly<Partial<Record<PlanPath, InputSource>>>) {
  const src: Partial<Record<PlanPath, InputSource>> = {};
  const pick = <T>(path: PlanPath, value: T | undefined, fallback: T, why: string, kind: InputSource['kind'] = 'default'): T => {
    if (value !== undefined) {
      src[path] = given[path] ?? { kind: 'explicit', detail: 'given' };
      return value;
    }
    src[path] = { kind, detail: why };
    return fallback;
  };
  return { src, pick };
}

/** Derives every plan value from stated inputs; `gpu` is the cluster's GPU when the input names none. */
export function derivePlan(input: PlanInput, gpu?: GpuSpec): Derived {
  const problems: Problem[] = [];
  const given = input.sources ?? {};
  const { src, pick } = picker(given);
  const p = input.parallel ?? {};
  const s = p.sharding ?? {};
  const c = input.cluster ?? {};
  const o = input.overhead ?? {};
  const L = input.model.layers;

  const tp = pick('parallel.tp', p.tp, 1, 'no tensor parallelism');
  const pp = pick('parallel.pp', p.pp, 1, 'no pipeline parallelism');
  const cp = pick('parallel.cp', p.cp, 1, 'no context parallelism');
  const mp = Math.max(1, tp * pp * cp) || 1;
  const fromNodes = c.nodes !== undefined && c.gpusPerNode !== undefined ? c.nodes * c.gpusPerNode : undefined;
  const world0 = c.worldSize ?? fromNodes;
  if (world0 !== undefined && p.dp === undefined && world0 % mp !== 0) {
    problems.push({ code: 'world-not-divisible', severity: 'error', paths: ['cluster.worldSize', 'parallel.tp', 'parallel.pp', 'parallel.cp'], message: `World size ${world0} is not divisible by TP·PP·CP = ${mp}.` });
  }
  const dp = pick('parallel.dp', p.dp, world0 !== undefined ? dpOfWorld(world0, tp, pp, cp) : 1,
    world0 !== undefined ? `world size ${world0} / (TP ${tp} · PP ${pp} · CP ${cp})` : 'single data-parallel replica', world0 !== undefined ? 'derived' : 'default');
  if (p.dp !== undefined && c.worldSize !== undefined && dp * mp !== c.worldSize && given['cluster.worldSize']?.kind !== 'assumed') {
    problems.push({ code: 'world-size-mismatch', severity: 'error', paths: ['parallel.dp', 'parallel.tp', 'parallel.pp', 'parallel.cp', 'cluster.worldSize'],
      message: `DP ${dp} × TP ${tp} × PP ${pp} × CP ${cp} = ${dp * mp} GPUs, but the world size is ${c.worldSize}.` });
  }
  const world = c.worldSize ?? dp * mp;
  const cluster = deriveCluster(c, world, gpu, pick);

  const training0 = deriveTraining(input, dp, pick, problems);
  const style0 = s.style ?? styleDefault(input.format, s.stage);
  const engine = pick('engine', input.engine, engineForFormat(input.format) ?? engineForStyle(style0),
    input.format && engineForFormat(input.format) ? `${input.format} files run on the ${engineForFormat(input.format)} engine` : `engine implied by the sharding style (${style0})`, 'derived');
  // transformers' modeling code (Axolotl, Accelerate, TRL, …) saves what transformers' modules save, not what
  // torchtitan's do (shared/memory/engine.ts modelImplOf), and runs its own eager ops (shared/time/kernels/elementwise.ts).
  const hfImpl = training0.modelImpl === undefined ? modelImplForFormat(input.format, engine) : undefined;
  const training1: TrainingSpec = hfImpl
    ? { ...training0, modelImpl: pick('training.modelImpl', undefined, hfImpl, `${input.format} trains transformers' model code`, 'derived') }
    : training0;
  // transformers without an SDPA path for the model (Gemma 2) runs eager attention unless the file names a kernel.
  const eagerByDefault = training1.modelImpl === 'hf' && input.model.noSdpa === true && input.training?.flashAttention === undefined;
  const training: TrainingSpec = eagerByDefault
    ? { ...training1, flashAttention: pick('training.flashAttention', undefined, false, `transformers has no SDPA attention for ${input.model.name}: eager unless attn_implementation names flash_attention_2`, 'derived') }
    : training1;
  const sharding = deriveSharding(input, dp, training, pick, problems);
  const titan = input.format === 'torchtitan';
  const [firstLess, lastLess] = [p.firstStageLess ?? TORCHTITAN_STAGE_WEIGHT, p.lastStageLess ?? TORCHTITAN_STAGE_WEIGHT];
  const vpp = titan && p.vppLayers && pp > 1 ? titanVpp(L, pp, p.vppLayers, firstLess, lastLess, p.vpp, pick, problems)
    : pick('parallel.vpp', p.vpp, p.vppLayers ? vppOfLayers(L, pp, p.vppLayers) : 1,
      p.vppLayers ? `Megatron: VPP = (L ${L} / PP ${pp}) / ${p.vppLayers} layers per virtual stage` : 'no virtual pipeline stages', p.vppLayers ? 'derived' : 'default');
  const megatron = input.format === 'megatron-script' || input.format === 'megatron-yaml';
  const counted = megatron && pp > 1 && p.firstStageLayers === undefined && p.lastStageLayers === undefined ? megatronCountedSplit(L, pp, p.firstStageLess, p.lastStageLess, problems) : undefined;
  const uneven = p.stageLayers ?? (titan && pp > 1 ? titanSplit(L, pp, vpp, firstLess, lastLess, problems)
    : unevenStageLayers(L, pp, p.firstStageLayers ?? counted?.first, p.lastStageLayers ?? counted?.last));
  const parallel: ParallelSpec = {
    dp, tp, pp, cp,
    sp: pick('parallel.sp', p.sp !== undefined && tp > 1 ? p.sp : undefined, sequenceParallel(p.sp, tp, input.format),
      p.sp ? 'sequence parallelism needs TP > 1' : input.format === 'torchtitan' ? 'torchtitan pairs TP with sequence parallelism' : 'no sequence parallelism', 'derived'),
    vpp,
    schedule: pick('parallel.schedule', p.schedule !== undefined && p.schedule === scheduleFor(p.schedule, vpp) ? p.schedule : undefined, scheduleFor(p.schedule, vpp),
      vpp > 1 ? 'interleaved with virtual stages' : '1F1B (Megatron and torchtitan default)', vpp > 1 || p.schedule === 'interleaved' ? 'derived' : 'default'),
    ...(uneven !== undefined ? { stageLayers: pick('parallel.stageLayers', p.stageLayers, uneven, `first/last pipeline stage layers: ${uneven.join(', ')}`, 'derived') } : {}),
    ep: pick('parallel.ep', p.ep, 1, 'no expert parallelism'),
    etp: pick('parallel.etp', p.etp, megatron ? tp : 1, megatron ? 'Megatron: expert tensor parallel = TP' : 'expert tensor parallel 1', megatron ? 'derived' : 'default'),
    sharding,
    order: pick('parallel.order', p.order, ['tp', 'cp', 'ep', 'dp', 'pp'],
      'rank order tp-cp-ep-dp-pp, innermost first (Megatron-LM default; torchtitan and DeepSpeed also keep pipeline stages outermost)'),
    tpCommOverlap: pick('parallel.tpCommOverlap', p.tpCommOverlap, false, 'no TP communication overlap'),
    epDispatcher: pick('parallel.epDispatcher', p.epDispatcher !== undefined && EP_DISPATCHERS.includes(p.epDispatcher) ? p.epDispatcher : undefined, 'alltoall',
      'MoE tokens travel by NCCL all-to-all (torchtitan, DeepSpeed-MoE; Megatron --moe-token-dispatcher-type alltoall)'),
    epCommOverlap: pick('parallel.epCommOverlap', p.epCommOverlap, false, 'MoE dispatch and combine exposed (no --overlap-moe-expert-parallel-comm)'),
  };
  const overhead: OverheadSpec = {
    cudaContextBytes: pick('overhead.cudaContextBytes', o.cudaContextBytes, 1.5 * 2 ** 30,
      'CUDA context, cuBLAS workspace and NCCL communicators ≈ 1.5 GiB (docs/formulas.md#runtime-overheads: 1–2 GB)'),
    allocatorFragmentation: pick('overhead.allocatorFragmentation', o.allocatorFragmentation, 0,
      'reserved memory as PyTorch\'s caching allocator keeps it (docs/engine-memory.md#the-caching-allocator); no flat fraction'),
  };
  src.model = given.model ?? { kind: 'explicit', detail: input.model.name };
  for (const [k, v] of Object.entries(given) as [PlanPath, InputSource][]) if (!(k in src)) src[k] = v;
  const lora = input.lora && input.lora.rank !== undefined
    ? {
      rank: input.lora.rank, targets: input.lora.targets ?? ['q', 'k', 'v', 'o'], baseDtype: input.lora.baseDtype ?? 'bf16',
      ...(input.lora.dropout !== undefined ? { dropout: input.lora.dropout } : {}),
      ...(input.lora.fusedQkv !== undefined ? { fusedQkv: input.lora.fusedQkv } : {}),
      ...(input.lora.baseSavesInputs !== undefined ? { baseSavesInputs: input.lora.baseSavesInputs } : {}),
      ...(input.lora.headQuantized ? { headQuantized: true } : {}),
      ...(input.lora.dequantCast ? { dequantCast: true } : {}),
      ...(input.lora.fullModules?.length ? { fullModules: input.lora.fullModules, fullModulesCopied: input.lora.fullModulesCopied !== false } : {}),
      ...(input.lora.dora ? { dora: true } : {}),
    }
    : undefined;
  const plan: Plan = {
    engine, model: input.model, training, parallel, overhead, cluster,
    ...(lora ? { lora } : {}),
    sources: src,
    stated: input,
  };
  const calibrated = input.calibration ? applyCalibration(plan, input.calibration) : plan;
  return { plan: input.profile ? withProfile(calibrated, input.profile, problems) : calibrated, problems };
}

type Pick = ReturnType<typeof picker>['pick'];

/** torchtitan's virtual stages per rank from `pipeline_parallel_layers_per_stage` (a problem where torchtitan refuses it). */
function titanVpp(L: number, pp: number, lps: number, first: number, last: number, stated: number | undefined, pick: Pick, problems: Problem[]): number {
  const r = torchtitanStagesPerRank(L, pp, lps, first, last);
  if (r.problem) problems.push({ code: 'pipeline-split', severity: 'error', paths: ['parallel.vppLayers', 'parallel.pp'], message: r.problem });
  return pick('parallel.vpp', r.perRank !== undefined ? r.perRank : stated, stated ?? 1,
    `torchtitan: ⌈(L ${L} + ${first} + ${last}) / ${lps} layers per stage⌉ / PP ${pp} stages per rank`, 'derived');
}

/** Layers per PP rank as torchtitan splits them (embedding and head weighted as layers); undefined with a problem where torchtitan refuses. */
function titanSplit(L: number, pp: number, vpp: number, first: number, last: number, problems: Problem[]): number[] | undefined {
  const r = torchtitanStageLayers(L, pp, vpp, first, last);
  if (r.problem) problems.push({ code: 'pipeline-split', severity: 'error', paths: ['parallel.pp', 'parallel.vpp'], message: r.problem });
  return r.layers;
}

/** GPUs per node and nodes for a world size: stated, else whole 8-GPU nodes (a smaller job fills part of one). */
function deriveCluster(c: NonNullable<PlanInput['cluster']>, world: number, gpu: GpuSpec | undefined, pick: Pick): ClusterSpec {
  const host = (c.gpu ?? gpu)?.gpusPerNode;
  let gpusPerNode = pick('cluster.gpusPerNode', c.gpusPerNode, gpusPerNodeDefault(world, host),
    host ? `${host} GPUs per node (${(c.gpu ?? gpu)?.name})` : '8 GPUs per node (HGX/DGX)');
  // With a known world size, a job smaller than a node uses part of it and the node count follows.
  if (c.worldSize !== undefined && world < gpusPerNode) gpusPerNode = world;
  const nodesNeeded = Math.max(1, Math.ceil(world / gpusPerNode));
  const nodes = pick('cluster.nodes', c.worldSize !== undefined && c.nodes !== nodesNeeded ? undefined : c.nodes, nodesNeeded, 'world size / GPUs per node', 'derived');
  const gpuSpec = pick('cluster.gpu', c.gpu ?? gpu, findGpu('h100-sxm') as GpuSpec, 'ShardLens default GPU H100 SXM 80GB', 'assumed');
  return { gpu: gpuSpec, gpusPerNode, nodes };
}

/** Micro batch × accumulation × DP = global batch, solved as DeepSpeed does (docs/framework-facts.md#deepspeed-batch-arithmetic). */
function deriveTraining(input: PlanInput, dp: number, pick: Pick, problems: Problem[]): TrainingSpec {
  const t = input.training ?? {};
  const precision = pick('training.precision', t.precision, TRAINING_DEFAULTS.precision[0], TRAINING_DEFAULTS.precision[1]);
  const perDevice = t.gradAccum === undefined && t.deviceBatch !== undefined && t.microBatch !== undefined ? Math.max(1, Math.round(t.deviceBatch / t.microBatch)) : undefined;
  const world = input.sources?.['cluster.worldSize']?.kind === 'assumed' ? input.cluster?.worldSize : undefined;
  const split = assumedSplit(input.parallel, input.sources);
  const assumed = world || split ? { ...(world ? { gpus: world } : {}), mp: Math.max(1, (world ?? dp) / Math.max(1, dp)), ...(split ? { split } : {}) } : undefined;
  const batch = deriveBatch(t.microBatch, t.gradAccum ?? perDevice, t.globalBatch, dp, problems, TRAINING_DEFAULTS.microBatch[1], assumed);
  return {
    microBatch: pick('training.microBatch', t.microBatch, batch.micro, batch.why.micro, 'derived'),
    globalBatch: pick('training.globalBatch', t.globalBatch, batch.global, batch.why.global, 'derived'),
    gradAccum: pick('training.gradAccum', t.gradAccum, batch.gas, perDevice !== undefined ? `per-GPU batch ${t.deviceBatch} / micro ${t.microBatch}` : batch.why.gas, 'derived'),
    seqLen: pick('training.seqLen', t.seqLen, Math.min(2048, input.model.maxPositions || 2048), TRAINING_DEFAULTS.seqLen[1]),
    precision,
    gradDtype: pick('training.gradDtype', t.gradDtype, gradDtypeOf(precision), `gradients in the compute dtype of ${precision}`, 'derived'),
    fp32GradAccum: pick('training.fp32GradAccum', t.fp32GradAccum, false, TRAINING_DEFAULTS.fp32GradAccum[1]),
    optimizer: pick('training.optimizer', t.optimizer, 'adamw', TRAINING_DEFAULTS.optimizer[1]),
    recompute: pick('training.recompute', t.recompute, 'none', TRAINING_DEFAULTS.recompute[1]),
    ...(t.recomputeLayers !== undefined ? { recomputeLayers: pick('training.recomputeLayers', t.recomputeLayers, 0, '') } : {}),
    ...(t.recomputeModules !== undefined ? { recomputeModules: pick('training.recomputeModules', t.recomputeModules as readonly MegatronRecomputeModule[], [], '') } : {}),
    flashAttention: pick('training.flashAttention', t.flashAttention, true, TRAINING_DEFAULTS.flashAttention[1]),
    compile: pick('training.compile', t.compile, false, TRAINING_DEFAULTS.compile[1]),
    ...optionalTraining(t, pick),
    ...(t.fp8 !== undefined && t.fp8.recipe !== undefined
      ? { fp8: pick('training.fp8', { recipe: t.fp8.recipe, paramGather: t.fp8.paramGather ?? false }, { recipe: 'tensorwise', paramGather: false }, '') }
      : {}),
  };
}

/** The sharding: stage from the style or FSDP strategy, shard group from replicas, overlap and buckets from the engine. */
function deriveSharding(input: PlanInput, dp: number, training: TrainingSpec, pick: Pick, problems: Problem[]): ShardingSpec {
  const p = input.parallel ?? {};
  const s = p.sharding ?? {};
  const style = pick('parallel.sharding.style', s.style, styleDefault(input.format, s.stage),
    input.format === 'nanotron' && (s.stage ?? 0) > 0 ? 'nanotron: zero_stage > 0 uses ZeroDistributedOptimizer (ZeRO-1)' : 'plain data parallel (DDP)', 'derived');
  const stage = pick('parallel.sharding.stage', s.stage, s.fsdpStrategy !== undefined ? stageOfStrategy(s.fsdpStrategy) : stageOfStyle(style),
    s.fsdpStrategy !== undefined ? `stage of FSDP ${s.fsdpStrategy}` : `stage implied by the sharding style (${style})`, 'derived');
  // A shard group larger than DP (a file's shard degree with fewer ranks left) shards over what there is.
  if (s.shardGroupSize !== undefined && s.shardGroupSize > dp) {
    problems.push({ code: 'shard-group-exceeds-dp', severity: 'warning', paths: ['parallel.sharding.shardGroupSize', 'parallel.dp'],
      message: `The shard group (${s.shardGroupSize} ranks) is larger than data parallelism (${dp}); states are sharded over ${dp}.` });
  }
  const group = pick('parallel.sharding.shardGroupSize', s.shardGroupSize !== undefined && s.shardGroupSize <= dp ? s.shardGroupSize : undefined, shardGroupOf(dp, p.dpReplicate, p.shardInstances),
    p.dpReplicate && p.dpReplicate > 1 ? `DP ${dp} / ${p.dpReplicate} replicas (HSDP)` : p.shardInstances && p.shardInstances > 1 ? `DP ${dp} / ${p.shardInstances} distributed-optimizer instances` : 'shard over the whole DP group', 'derived');
  // Replicas with sharded states are HSDP, whatever strategy name the file's FSDP section defaults to.
  const hybrid = group < dp && (style === 'fsdp' || style === 'fsdp2') && stage >= 2;
  const stated = s.fsdpStrategy !== undefined && (!hybrid || s.fsdpStrategy.includes('HYBRID')) ? s.fsdpStrategy : undefined;
  const strategy = stated ?? (hybrid ? hybridStrategy(stage) : undefined);
  const offloadParams = pick('parallel.sharding.offloadParams', s.offloadParams !== undefined && !(style === 'deepspeed' && stage < 3) ? s.offloadParams : undefined, 'none',
    s.offloadParams !== undefined ? 'DeepSpeed ignores offload_param below ZeRO-3' : 'no offload', s.offloadParams !== undefined ? 'derived' : 'default');
  return {
    style,
    stage,
    ...(strategy !== undefined ? { fsdpStrategy: pick('parallel.sharding.fsdpStrategy', stated, strategy, `sharding over ${group} of ${dp} data-parallel ranks is HSDP`, 'derived') } : {}),
    shardGroupSize: group,
    reshardAfterForward: pick('parallel.sharding.reshardAfterForward', s.reshardAfterForward, (style === 'fsdp' || style === 'fsdp2') && stage === 2 ? false : reshardAfterForwardDefault(input.format, p.pp ?? 1),
      (style === 'fsdp' || style === 'fsdp2') && stage === 2 ? 'FSDP ZeRO-2 (SHARD_GRAD_OP) keeps parameters gathered after forward'
        : input.format === 'torchtitan' ? 'torchtitan fsdp_reshard_after_forward "default": reshard unless PP' : 'FSDP reshard_after_forward=True', 'derived'),
    offloadOptimizer: pick('parallel.sharding.offloadOptimizer', s.offloadOptimizer, 'none', 'no offload'),
    offloadParams,
    reduceBucketElems: pick('parallel.sharding.reduceBucketElems', s.reduceBucketElems, reduceBucketDefault(style, training.gradDtype),
      style === 'deepspeed' ? 'DeepSpeed reduce_bucket_size 5e8' : 'DDP bucket_cap_mb 25', 'derived'),
    allgatherBucketElems: pick('parallel.sharding.allgatherBucketElems', s.allgatherBucketElems, DS_DEFAULTS.allgatherBucket, 'DeepSpeed allgather_bucket_size 5e8'),
    prefetchBucketElems: pick('parallel.sharding.prefetchBucketElems', s.prefetchBucketElems, DS_DEFAULTS.prefetchBucket, 'DeepSpeed stage3_prefetch_bucket_size 5e7'),
    maxLiveParams: pick('parallel.sharding.maxLiveParams', s.maxLiveParams, DS_DEFAULTS.maxLiveParams, 'DeepSpeed stage3_max_live_parameters 1e9'),
    overlapComm: pick('parallel.sharding.overlapComm', s.overlapComm, overlapCommDefault(style, stage),
      style === 'deepspeed' ? `DeepSpeed overlap_comm defaults on only for ZeRO-3 (stage ${stage})` : 'DDP buckets and FSDP overlap gradient reduction', 'derived'),
    contiguousGradients: pick('parallel.sharding.contiguousGradients', s.contiguousGradients, true, 'DeepSpeed contiguous_gradients true'),
    ...(s.dsFusedAdam !== undefined ? { dsFusedAdam: pick('parallel.sharding.dsFusedAdam', s.dsFusedAdam, false, '') } : {}),
    ...zeroPlusPlus(s, style, stage, pick, problems),
  };
}

/**
 * DeepSpeed's ZeRO++ switches (Wang et al. 2023; deepspeed/runtime/zero/config.py), kept for ZeRO-3 under DeepSpeed, the
 * only place they act (stage3.py, partition_parameters.py); stated elsewhere they are an info and left out.
 */
function zeroPlusPlus(s: NonNullable<PlanInput['parallel']>['sharding'] & object, style: string, stage: number, pick: Pick, problems: Problem[]): Partial<ShardingSpec> {
  const stated = s.quantizedWeights === true || s.quantizedGradients === true || (s.hpzPartition ?? 1) > 1;
  if (!stated) return {};
  if (style !== 'deepspeed' || stage !== 3) {
    problems.push({ code: 'zeropp-needs-zero3', severity: 'info', paths: ['parallel.sharding.quantizedWeights', 'parallel.sharding.hpzPartition', 'parallel.sharding.quantizedGradients'],
      message: 'ZeRO++ (zero_quantized_weights, zero_hpz_partition_size, zero_quantized_gradients) acts on DeepSpeed\'s ZeRO-3 only; at this stage it changes nothing and is left out.' });
    return {};
  }
  return {
    ...(s.quantizedWeights !== undefined ? { quantizedWeights: pick('parallel.sharding.quantizedWeights', s.quantizedWeights, false, '') } : {}),
    ...(s.hpzPartition !== undefined ? { hpzPartition: pick('parallel.sharding.hpzPartition', s.hpzPartition, 1, '') } : {}),
    ...(s.quantizedGradients !== undefined ? { quantizedGradients: pick('parallel.sharding.quantizedGradients', s.quantizedGradients, false, '') } : {}),
  };
}

/** Deep merge of stated inputs: `over` wins leaf by leaf (arrays and the model, GPU and sources are replaced whole). */
function mergeInput<T>(base: T, over: unknown): T {
  if (over === undefined) return base;
  if (base === null || typeof base !== 'object' || Array.isArray(base) || over === null || typeof over !== 'object' || Array.isArray(over)) return over as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over as Record<string, unknown>)) {
    // An own key set to undefined clears the stated value (it is derived again).
    if (v === undefined) delete out[k];
    else out[k] = k === 'model' || k === 'gpu' || k === 'sources' || k === 'calibration' || k === 'profile' ? v : mergeInput(out[k], v);
  }
  return out as T;
}

/** Stated inputs of a plan assembled by hand (no `stated`): every value it holds, as given. */
function statedOf(plan: Plan): PlanInput {
  return { engine: plan.engine, model: plan.model, training: plan.training, parallel: plan.parallel, cluster: plan.cluster, overhead: plan.overhead, ...(plan.lora ? { lora: plan.lora } : {}), sources: plan.sources };
}

/**
 * The plan with some stated inputs replaced and everything derived again (a what-if on a plan: dashboard variants, the
 * planner's layouts). The cluster stays: unless `over` names a world size, the GPU count is the plan's.
 */
export function rederive(plan: Plan, over: Omit<PlanInput, 'model'> & { readonly model?: ModelSpec }): Plan {
  const base = plan.stated ?? statedOf(plan);
  const world = plan.parallel.dp * plan.parallel.tp * plan.parallel.pp * plan.parallel.cp;
  const sources = { ...base.sources, ...over.sources };
  const input = mergeInput<PlanInput>(base, { ...over, sources, cluster: { worldSize: world, ...over.cluster } });
  return derivePlan(input).plan;
}
