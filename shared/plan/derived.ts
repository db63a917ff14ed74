/**
 * Values derived from other plan inputs, one function each. `derivePlan` (derive.ts) calls them for every plan, and the
 * planner calls the sharding ones for each layout family, so a file, a what-if and a planner layout derive alike.
 */
import type { FormatId } from './facts';
import type { EngineId, FsdpStrategy, PipelineSchedule, Precision, Dtype, ShardingStyle } from './types';

/** The engine a sharding style implies when nothing else names one. */
export function engineForStyle(style: ShardingStyle): EngineId {
  switch (style) {
    case 'deepspeed': return 'deepspeed';
    case 'megatron-distopt': return 'megatron';
    case 'fsdp': return 'fsdp1';
    case 'fsdp2': return 'fsdp2';
    default: return 'ddp';
  }
}

/** The engine a config format runs on when it fixes one (Megatron-LM and NeMo scripts, nanotron). */
export function engineForFormat(format: FormatId | undefined): EngineId | undefined {
  if (format === 'megatron-script' || format === 'megatron-yaml') return 'megatron';
  if (format === 'nanotron') return 'nanotron';
  return undefined;
}

/**
 * Formats whose trainers run transformers' modeling code, under FSDP, DeepSpeed or DDP: Accelerate, the HF Trainer and
 * TRL, Axolotl, LLaMA-Factory, verl, NeMo-RL's DTensor policy, ROLL and EasyR1 all load `AutoModelForCausalLM`.
 * torchtitan, torchtune, Lingua and picotron train their own model code; a DeepSpeed JSON does not say whose.
 */
const HF_MODEL_FORMATS: ReadonlySet<FormatId> = new Set<FormatId>(['accelerate', 'hf-trainer', 'axolotl', 'llamafactory', 'verl', 'nemo-rl', 'roll', 'easyr1']);

/**
 * The model implementation a plan runs when the file's format decides it: 'hf' for the formats above on any engine but
 * Megatron (LLaMA-Factory's and verl's Megatron backends build Megatron models).
 */
export function modelImplForFormat(format: FormatId | undefined, engine: EngineId): 'hf' | undefined {
  return engine !== 'megatron' && engine !== 'nanotron' && format !== undefined && HF_MODEL_FORMATS.has(format) ? 'hf' : undefined;
}

/**
 * Gradient reduction overlaps with backward unless the sharding says otherwise: DeepSpeed turns `overlap_comm` on only
 * for ZeRO-3 (deepspeed/runtime/zero/config.py: `overlap_comm` None means stage 3); DDP buckets and FSDP overlap.
 * Megatron's default (no `--overlap-grad-reduce`) is stated by its reader.
 */
export function overlapCommDefault(style: ShardingStyle, stage: number): boolean {
  return style === 'deepspeed' ? stage === 3 : true;
}

/** ZeRO-equivalent stage of an FSDP strategy (FULL_SHARD/HYBRID_SHARD 3, SHARD_GRAD_OP 2, NO_SHARD 0). */
export function stageOfStrategy(s: FsdpStrategy): 0 | 2 | 3 {
  return ({ FULL_SHARD: 3, HYBRID_SHARD: 3, SHARD_GRAD_OP: 2, _HYBRID_SHARD_ZERO2: 2, NO_SHARD: 0 } as const)[s] ?? 3;
}

/** The stage a sharding style implies when the file sets none (Megatron distributed optimizer 1, FSDP 3, else 0). */
export function stageOfStyle(style: ShardingStyle): 0 | 1 | 3 {
  return style === 'megatron-distopt' ? 1 : style === 'fsdp' || style === 'fsdp2' ? 3 : 0;
}

/**
 * The sharding style when the file names none: nanotron shards optimizer states with its ZeroDistributedOptimizer
 * (ZeRO-1, the DeepSpeed layout) when `optimizer.zero_stage` > 0; everything else defaults to DDP.
 */
export function styleDefault(format: FormatId | undefined, stage: number | undefined): ShardingStyle {
  return format === 'nanotron' && (stage ?? 0) > 0 ? 'deepspeed' : 'ddp';
}

/** HSDP when states are sharded (stage ≥ 2) over fewer ranks than DP: the FSDP strategy that names it. */
export function hybridStrategy(stage: number): FsdpStrategy {
  return stage >= 3 ? 'HYBRID_SHARD' : '_HYBRID_SHARD_ZERO2';
}

/**
 * Sequence parallelism in effect: asked for (or the engine's default: torchtitan always pairs TP with SP,
 * torchtitan/models/llama3/infra/parallelize.py) and only with TP > 1 (Megatron turns it off at TP = 1, arguments.py).
 */
export function sequenceParallel(asked: boolean | undefined, tp: number, format: FormatId | undefined): boolean {
  return (asked ?? format === 'torchtitan') && tp > 1;
}

/** Virtual pipeline stages from Megatron's layers per virtual stage: VPP = (L / PP) / layers per virtual stage. */
export function vppOfLayers(layers: number, pp: number, layersPerVirtualStage: number): number {
  return Math.max(1, Math.round(layers / pp / layersPerVirtualStage));
}

/**
 * Layer-equivalents torchtitan gives the embedding and the norm + output head in its pipeline split unless
 * `pipeline_parallel_first_stage_less_layers` / `..._last_stage_less_layers` say otherwise (torchtitan
 * torchtitan/config/job_config.py at 238fa995: 1 each).
 */
export const TORCHTITAN_STAGE_WEIGHT = 1;

/**
 * torchtitan's pipeline stages from `pipeline_parallel_layers_per_stage`: ⌈(L + first + last) / layers per stage⌉ stages,
 * where first and last are the layer-equivalents given to the embedding and the output head
 * (`pipeline_parallel_first_stage_less_layers`, `..._last_stage_less_layers`, default 1 each; torchtitan
 * torchtitan/distributed/pipeline_parallel.py at 238fa995, `pipeline_llm`). Returns the stages per PP rank, or a reason
 * when torchtitan would refuse the layout (the stage count must divide over the PP ranks).
 */
export function torchtitanStagesPerRank(layers: number, pp: number, layersPerStage: number, first: number, last: number): { perRank?: number; problem?: string } {
  const stages = Math.ceil((layers + first + last) / Math.max(1, layersPerStage));
  if (stages % pp !== 0) return { problem: `pipeline_parallel_layers_per_stage ${layersPerStage} gives ${stages} stages for (${layers} layers + ${first} + ${last}), not divisible by PP ${pp} (torchtitan refuses it).` };
  return { perRank: stages / pp };
}

/**
 * The whole layers per stage that make torchtitan build exactly `stages` stages from `effective` = L + first + last
 * layer-equivalents (⌈effective / it⌉ = stages), or undefined where none does.
 */
export function layersPerStageFor(effective: number, stages: number): number | undefined {
  for (let lps = Math.max(1, Math.ceil(effective / stages)); (stages - 1) * lps < effective; lps++) {
    if (Math.ceil(effective / lps) === stages) return lps;
  }
  return undefined;
}

/**
 * Layers of each of torchtitan's `stages` pipeline stages (torchtitan/distributed/pipeline_parallel.py at 238fa995,
 * `generate_llm_fqn_per_model_part`): L + first + last "effective layers" are dealt over the stages, ⌊E / stages⌋
 * each and one more to the first E mod stages; stage 0 gives `first` of its share to the embedding and the last stage
 * `last` of its share to the norm and output head. Undefined (with the reason) where torchtitan raises: more stages
 * than effective layers, or first/last larger than a stage's share.
 */
export function torchtitanVirtualStageLayers(layers: number, stages: number, first: number, last: number): { layers?: number[]; problem?: string } {
  const eff = layers + first + last;
  const per = Math.floor(eff / stages);
  if (stages > eff || per === 0) return { problem: `${stages} pipeline stages for ${eff} effective layers (${layers} + ${first} + ${last}): torchtitan refuses empty stages.` };
  if (first > per || last > per) return { problem: `first/last stage weights (${first}, ${last}) exceed the ${per} layers per stage (torchtitan refuses it).` };
  const extra = eff % stages;
  const out: number[] = [];
  let placed = 0;
  for (let i = 0; i < stages; i++) {
    const share = per + (i < extra ? 1 : 0) - (i === 0 ? first : 0) - (i === stages - 1 ? last : 0);
    const n = Math.max(0, Math.min(share, layers - placed));
    out.push(n);
    placed += n;
  }
  return { layers: out };
}

/**
 * Layers per PP rank as torchtitan splits the model over pp·vpp stages (torchtitanVirtualStageLayers): a rank holds
 * stages r, r + pp, … (the looped placement of `stage_ids_this_rank`).
 */
export function torchtitanStageLayers(layers: number, pp: number, vpp: number, first: number, last: number): { layers?: number[]; problem?: string } {
  const r = torchtitanVirtualStageLayers(layers, pp * Math.max(1, vpp), first, last);
  if (!r.layers) return r;
  const perRank = Array.from({ length: pp }, () => 0);
  r.layers.forEach((n, i) => { perRank[i % pp] += n; });
  return { layers: perRank };
}

/** The schedule in effect: interleaved exactly when there are virtual stages (Megatron, torchtitan). */
export function scheduleFor(asked: PipelineSchedule | undefined, vpp: number): PipelineSchedule {
  if (vpp > 1) return 'interleaved';
  return asked === undefined || asked === 'interleaved' ? '1f1b' : asked;
}

/**
 * FSDP reshards parameters after forward unless told otherwise; torchtitan's "default" policy keeps them gathered
 * with pipeline parallelism (torchtitan/distributed/utils.py: reshard unless PP is enabled).
 */
export function reshardAfterForwardDefault(format: FormatId | undefined, pp: number): boolean {
  return format === 'torchtitan' ? pp === 1 : true;
}

/**
 * Reshard after forward for a ZeRO-equivalent stage: FSDP ZeRO-2 (SHARD_GRAD_OP, FSDP2 `reshard_after_forward=False`)
 * keeps parameters gathered; ZeRO-3 reshards unless the file states otherwise, where a stated "never" was the ZeRO-2
 * spelling and becomes "always" (the torchtitan rewriter writes the same).
 */
export function reshardFor(style: ShardingStyle, stage: number, stated: boolean | undefined, format: FormatId | undefined, pp: number): boolean {
  if ((style === 'fsdp' || style === 'fsdp2') && stage === 2) return false;
  if (stated === false) return stage >= 3;
  return stated ?? reshardAfterForwardDefault(format, pp);
}

/** Data-parallel size from the world size: world / (TP · PP · CP), rounded down; ≥ 1. */
export function dpOfWorld(world: number, tp: number, pp: number, cp: number): number {
  return Math.max(1, Math.floor(world / Math.max(1, tp * pp * cp)));
}

/** Ranks the sharded states are split over: explicit, DP / replicas (HSDP), DP / optimizer instances, else DP. */
export function shardGroupOf(dp: number, replicas: number | undefined, instances: number | undefined): number {
  for (const n of [replicas, instances]) if (n && n > 1 && dp % n === 0) return dp / n;
  return dp;
}

/** Layers per pipeline stage from Megatron's first/last stage counts, the rest spread evenly; undefined if not whole. */
/**
 * Megatron's split with the embedding and the loss counted as layers (--account-for-embedding-in-pipeline-split,
 * --account-for-loss-in-pipeline-split): (L + e + l)/PP per stage, the first less e and the last less l
 * (megatron/core/transformer/transformer_block.py get_num_layers_to_build; Llama 3 405B: 126 layers on PP 16 as
 * 7 + 14·8 + 7). Undefined when it does not divide (Megatron stops).
 */
export function countedStageLayers(layers: number, pp: number, e: number, l: number): { first?: number; last?: number } | undefined {
  const per = (layers + e + l) / pp;
  if (!Number.isInteger(per) || per - Math.max(e, l) < 0) return undefined;
  return { ...(e ? { first: per - e } : {}), ...(l ? { last: per - l } : {}) };
}

export function unevenStageLayers(layers: number, pp: number, first: number | undefined, last: number | undefined): number[] | undefined {
  if (pp < 2 || (first === undefined && last === undefined)) return undefined;
  const middle = pp - (first !== undefined ? 1 : 0) - (last !== undefined ? 1 : 0);
  const rest = layers - (first ?? 0) - (last ?? 0);
  if (rest < 0 || (middle > 0 && rest % middle !== 0) || (middle === 0 && rest !== 0)) return undefined;
  const each = middle > 0 ? rest / middle : 0;
  const out = Array.from({ length: pp }, () => each);
  if (first !== undefined) out[0] = first;
  if (last !== undefined) out[pp - 1] = last;
  return out;
}

/** Gradients are produced in the compute dtype: fp32 for fp32 training, fp16 for fp16 mixed, else bf16. */
export function gradDtypeOf(precision: Precision): Dtype {
  return precision === 'fp32' ? 'fp32' : precision === 'fp16-mixed' ? 'fp16' : 'bf16';
}

/**
 * DeepSpeed's ZeRO defaults in elements (deepspeed/runtime/zero/config.py), the same numbers as the `default` fields of
 * formats/deepspeed/keys.json (a key-table test keeps them equal): used when a plan states none.
 */
export const DS_DEFAULTS = { reduceBucket: 5e8, allgatherBucket: 5e8, prefetchBucket: 5e7, maxLiveParams: 1e9 } as const;
export const DS_BUCKET_ELEMS = DS_DEFAULTS.reduceBucket;
/** PyTorch DDP bucket_cap_mb = 25 MiB (torch/nn/parallel/distributed.py). */
const DDP_BUCKET_BYTES = 25 * 2 ** 20;

/** The gradient-reduction bucket in elements: DeepSpeed 5e8, else DDP's 25 MiB in the gradient dtype. */
export function reduceBucketDefault(style: ShardingStyle, gradDtype: Dtype): number {
  return style === 'deepspeed' ? DS_BUCKET_ELEMS : Math.round(DDP_BUCKET_BYTES / (gradDtype === 'fp32' ? 4 : 2));
}

/** Greatest common divisor of two positive integers (1 for anything else). */
function gcd(a: number, b: number): number {
  if (!Number.isInteger(a) || !Number.isInteger(b) || a <= 0 || b <= 0) return 1;
  while (b) [a, b] = [b, a % b];
  return a;
}

/**
 * GPUs per node when nothing says: the GPU's own host size (GpuSpec.gpusPerNode: 4 on a GB200 compute tray), else 8
 * (HGX/DGX); a smaller world fills one node; other sizes gcd(world, node).
 */
export function gpusPerNodeDefault(world: number, node = 8): number {
  const n = Number.isInteger(node) && node > 0 ? node : 8;
  return world <= n ? Math.max(1, world) : world % n === 0 ? n : gcd(world, n);
}
