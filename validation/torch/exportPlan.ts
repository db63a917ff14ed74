/**
 * Exports a resolved Plan as the JSON the probe reads, and gives back the Plan the core should estimate so that
 * measured and estimated describe the same (possibly scaled) model, batch and data-parallel layout.
 */
import type { Plan, ShardingSpec } from '../../shared/plan/types';
import { probeModelOf, scaleProbeModel } from './scale';
import type { ProbeMode, ProbePlan } from './types';

export interface ExportOptions {
  /** Ranks the probe will run (default: the plan's data-parallel size). */
  readonly ranks?: number;
  /** Overrides the mode derived from the plan. */
  readonly mode?: ProbeMode;
  /** Largest Ψ built at full size; bigger models are scaled (default 20 M, enough for CPU ranks). */
  readonly maxParameters?: number;
  /** Longest sequence and micro batch the probe runs (defaults 256 and 4). */
  readonly maxSeqLen?: number;
  readonly maxMicroBatch?: number;
  /** Training steps (≥ 2; step 0 is a warm-up). Default 3. */
  readonly steps?: number;
  /** Run with DeepSpeed (mode 'deepspeed') when the plan is a DeepSpeed plan; set when `import deepspeed` works. */
  readonly deepspeedAvailable?: boolean;
  readonly deepspeedConfig?: Readonly<Record<string, unknown>>;
  /** 'strict' refuses plans with tp/pp/cp/ep > 1; 'data-parallel-only' drops them and says so. */
  readonly layout?: 'strict' | 'data-parallel-only';
  readonly device?: 'auto' | 'cpu';
}

export interface ExportProblem { readonly code: 'layout-mismatch' | 'unsupported-plan'; readonly message: string }

export interface ExportedProbePlan {
  readonly probePlan: ProbePlan;
  /** The plan to estimate for comparison: scaled model, probe batch, dp = ranks, other degrees 1, mode's sharding. */
  readonly comparablePlan: Plan;
  readonly notes: readonly string[];
}

/** The torch mode closest to the plan's sharding: DeepSpeed and Megatron map to their torch equivalents. */
export function modeForPlan(plan: Plan, deepspeedAvailable = false): ProbeMode {
  const s = plan.parallel.sharding;
  if (s.style === 'fsdp' || s.style === 'fsdp2') {
    switch (s.fsdpStrategy) {
      case 'FULL_SHARD': return 'fsdp-full-shard';
      case 'SHARD_GRAD_OP': return 'fsdp-shard-grad-op';
      case 'NO_SHARD': return 'fsdp-no-shard';
      case 'HYBRID_SHARD': case '_HYBRID_SHARD_ZERO2': return 'fsdp-hybrid-shard';
      default: break;
    }
  }
  if (s.style === 'deepspeed' && deepspeedAvailable) return 'deepspeed';
  return (['ddp', 'zero1', 'fsdp-shard-grad-op', 'fsdp-full-shard'] as const)[s.stage];
}

/** ZeRO stage each torch mode shards to (ZeroRedundancyOptimizer = 1, SHARD_GRAD_OP = 2, FULL_SHARD = 3). */
export function stageOfMode(mode: ProbeMode, deepspeedStage: 0 | 1 | 2 | 3 = 0): 0 | 1 | 2 | 3 {
  const table: Record<Exclude<ProbeMode, 'deepspeed'>, 0 | 1 | 2 | 3> = {
    ddp: 0, zero1: 1, 'fsdp-no-shard': 0, 'fsdp-shard-grad-op': 2, 'fsdp-full-shard': 3, 'fsdp-hybrid-shard': 3,
  };
  return mode === 'deepspeed' ? deepspeedStage : table[mode];
}

function shardingFor(mode: ProbeMode, plan: Plan, ranks: number): ShardingSpec {
  const s = plan.parallel.sharding;
  const stage = stageOfMode(mode, plan.parallel.sharding.stage);
  const style = mode === 'deepspeed' ? 'deepspeed' : mode.startsWith('fsdp') ? 'fsdp' : 'ddp';
  const base = { ...s, style, stage, shardGroupSize: ranks, offloadOptimizer: 'none', offloadParams: 'none' } as const;
  if (!mode.startsWith('fsdp')) return { ...base, fsdpStrategy: undefined };
  const strategy = ({ 'fsdp-full-shard': 'FULL_SHARD', 'fsdp-shard-grad-op': 'SHARD_GRAD_OP', 'fsdp-no-shard': 'NO_SHARD',
    'fsdp-hybrid-shard': 'HYBRID_SHARD' } as const)[mode as 'fsdp-full-shard'];
  return { ...base, fsdpStrategy: strategy };
}

/** DDP's bucket_cap_mb from a DDP plan's bucket (elements × gradient bytes); torch's default 25 for other styles. */
function ddpBucketCapMb(plan: Plan): number {
  const s = plan.parallel.sharding;
  if (s.style !== 'ddp' || !(s.reduceBucketElems > 0)) return 25;
  const gradBytes = plan.training.gradDtype === 'fp32' ? 4 : 2;
  return Math.max(1, Math.round((s.reduceBucketElems * gradBytes) / 2 ** 20));
}

/** Without the user's JSON: the plan's ZeRO stage and precision, everything else DeepSpeed's defaults. */
function minimalDeepSpeedConfig(plan: Plan): Record<string, unknown> {
  const p = plan.training.precision;
  return {
    zero_optimization: { stage: plan.parallel.sharding.stage },
    ...(p === 'bf16-mixed' || p === 'bf16' ? { bf16: { enabled: true } } : p === 'fp16-mixed' ? { fp16: { enabled: true } } : {}),
  };
}

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 1;

/** Builds the probe's plan; bad input becomes an ExportProblem, never an exception. */
export function exportProbePlan(plan: Plan, o: ExportOptions = {}): ExportedProbePlan | ExportProblem {
  const p = plan.parallel;
  const ranks = o.ranks ?? p.dp;
  if (!isCount(ranks)) return { code: 'layout-mismatch', message: `ranks must be a positive integer (got ${String(ranks)})` };
  if (plan.model.moe) return { code: 'unsupported-plan', message: 'the probe builds dense models only; mixture-of-experts layers are not reproduced' };
  const others = ([['tp', p.tp], ['pp', p.pp], ['cp', p.cp], ['ep', p.ep]] as const).filter(([, v]) => v !== 1);
  const notes: string[] = [];
  if (others.length) {
    const list = others.map(([k, v]) => `${k}=${v}`).join(', ');
    if (o.layout !== 'data-parallel-only') {
      return { code: 'layout-mismatch', message: `the probe runs data parallelism only and the plan has ${list}; run with the data-parallel-only layout to probe each rank as holding the whole model` };
    }
    notes.push(`Data parallelism only: ${list} not reproduced; every rank holds the whole model.`);
  }
  const mode = o.mode ?? modeForPlan(plan, o.deepspeedAvailable);
  if (plan.lora) notes.push('LoRA adapters not reproduced: the probe trains every parameter.');
  if (plan.training.recompute !== 'none') notes.push('Activation recomputation not reproduced: the probe keeps every activation.');
  if (plan.training.flashAttention) notes.push('Flash attention only where torch ≥ 2.0 offers scaled_dot_product_attention; older torch materialises the scores.');
  const seqLen = Math.min(plan.training.seqLen, o.maxSeqLen ?? 256);
  const microBatch = Math.min(plan.training.microBatch, o.maxMicroBatch ?? 4);
  if (!isCount(seqLen) || !isCount(microBatch)) return { code: 'unsupported-plan', message: 'sequence length and micro batch must be positive integers' };
  const batchChanges = [
    ...(microBatch !== plan.training.microBatch ? [`micro batch ${plan.training.microBatch} → ${microBatch}`] : []),
    ...(seqLen !== plan.training.seqLen ? [`sequence ${plan.training.seqLen} → ${seqLen}`] : []),
  ];
  if (batchChanges.length) notes.push(`Batch scaled: ${batchChanges.join(', ')}.`);
  const { model, scaling } = scaleProbeModel(probeModelOf(plan.model), o.maxParameters ?? 20e6, seqLen);
  const training = { microBatch, seqLen, precision: plan.training.precision, optimizer: plan.training.optimizer };
  const sharding = shardingFor(mode, plan, ranks);
  const probePlan: ProbePlan = {
    kind: 'shardlens-probe-plan', schemaVersion: 1, name: plan.model.name, model, scaling, training,
    parallel: {
      dp: ranks, tp: 1, pp: 1, cp: 1, ep: 1, mode, zeroStage: sharding.stage,
      bucketCapMb: ddpBucketCapMb(plan),
      gradientAsBucketView: false,
    },
    steps: Math.max(2, Math.floor(o.steps ?? 3)), device: o.device ?? 'auto',
    ...(mode === 'deepspeed' ? { deepspeedConfig: o.deepspeedConfig ?? minimalDeepSpeedConfig(plan) } : {}),
  };
  return { probePlan, comparablePlan: comparablePlanFor(plan, probePlan), notes };
}

/** Type guard for the error branch of exportProbePlan. */
export function isExportProblem(x: ExportedProbePlan | ExportProblem): x is ExportProblem {
  return 'code' in x;
}

/**
 * The plan the core should estimate for what the probe ran: its model and batch as built, dp = its ranks, the other
 * degrees 1 and the mode's sharding. Works from an exported plan or from the `plan` echoed in a report.
 */
export function comparablePlanFor(plan: Plan, ran: Pick<ProbePlan, 'model' | 'training' | 'parallel'>): Plan {
  const ranks = ran.parallel.dp;
  const { microBatch, seqLen } = ran.training;
  return {
    ...plan,
    model: { ...plan.model, ...ran.model, vocabPadMultiple: 0, moe: undefined },
    training: {
      ...plan.training, microBatch, seqLen, precision: ran.training.precision, optimizer: ran.training.optimizer,
      gradAccum: 1, globalBatch: microBatch * ranks, recompute: 'none', recomputeLayers: undefined, flashAttention: false,
    },
    parallel: { ...plan.parallel, dp: ranks, tp: 1, pp: 1, cp: 1, ep: 1, etp: 1, vpp: 1, stageLayers: undefined, sp: false, sharding: shardingFor(ran.parallel.mode, plan, ranks) },
    lora: undefined,
  };
}
