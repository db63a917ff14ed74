/**
 * "What if this key changed": the next and previous settings of a plan input, each as the facts it replaces. The
 * resolver puts them in place of the file's facts and derives the plan again (resolvePlan's `overrides`), so a what-if
 * equals editing the file and reading it again; hovers, quick fixes and the what-if property test share this list.
 */
import type { FactValue } from './facts';
import type { PlanPath } from './paths';
import type { FsdpStrategy, Plan, RecomputeKind, ShardingSpec } from './types';

/** One alternative value of a key and the facts it replaces. */
export interface WhatIf {
  /** E.g. "ZeRO stage 2 → 3" or "micro batch 2 → 1 (accumulation 4 → 8)". */
  readonly label: string;
  /** The key's plan path. */
  readonly path: PlanPath;
  readonly value: FactValue;
  /**
   * Facts to put in place of the file's, by plan path (the key itself and any key that must change with it); undefined
   * removes a fact (a switch turned off whose facts the reader then does not state).
   */
  readonly overrides: Readonly<Partial<Record<PlanPath, FactValue | undefined>>>;
}

/**
 * On/off switches whose other setting is always worth showing, with the words a label uses: torch.compile (fused
 * kernels, fewer saved tensors), activation offloading (checkpointed inputs in CPU memory), the optimizer step in
 * the backward (one weight's gradient at a time) and the gradient sync in every micro-batch (the shard, not the whole
 * unsharded gradient, carried between micro-batches under FSDP).
 */
const SWITCHES: Readonly<Partial<Record<PlanPath, { readonly name: string; readonly get: (p: Plan) => boolean }>>> = {
  'training.compile': { name: 'torch.compile', get: (p) => p.training.compile === true },
  'training.activationOffload': { name: 'activation offloading', get: (p) => p.training.activationOffload === true },
  'training.optimizerInBackward': { name: 'optimizer in the backward', get: (p) => p.training.optimizerInBackward === true },
  'training.syncEveryMicroBatch': { name: 'gradient sync in every micro-batch', get: (p) => p.training.syncEveryMicroBatch !== false },
};

/** The on/off switches' paths (quick fixes offer turning them on). */
export const SWITCH_PATHS: readonly PlanPath[] = Object.keys(SWITCHES) as PlanPath[];

/** Paths with what-ifs. */
export const WHAT_IF_PATHS: readonly PlanPath[] = [
  'parallel.sharding.stage', 'parallel.tp', 'parallel.pp', 'training.microBatch', 'training.recompute',
  'parallel.sharding.offloadOptimizer', 'parallel.sharding.offloadParams', 'training.seqLen', 'training.optimizerImpl', 'lora.rank', 'lora.dora',
  'model.mtpLayers', 'training.lossFusion', 'training.ligerKernels', ...SWITCH_PATHS,
];

/** True when a value was stated by a file or a setting (not defaulted or derived by ShardLens). */
function stated(plan: Plan, path: PlanPath): boolean {
  const k = plan.sources[path]?.kind;
  return k === 'explicit' || k === 'referenced' || k === 'setting';
}

/** The FSDP strategy for a ZeRO-equivalent stage, keeping hybrid sharding hybrid; undefined for FSDP "ZeRO-1". */
function fsdpStrategyFor(s: ShardingSpec, stage: number): FsdpStrategy | undefined {
  const hybrid = s.fsdpStrategy === 'HYBRID_SHARD' || s.fsdpStrategy === '_HYBRID_SHARD_ZERO2';
  if (stage === 3) return hybrid ? 'HYBRID_SHARD' : 'FULL_SHARD';
  if (stage === 2) return hybrid ? '_HYBRID_SHARD_ZERO2' : 'SHARD_GRAD_OP';
  return stage === 0 ? 'NO_SHARD' : undefined;
}

/** The ZeRO-stage change as the sharding framework spells it, or undefined when it cannot express the stage. */
function stageWhatIf(plan: Plan, to: number): WhatIf | undefined {
  const s = plan.parallel.sharding;
  const overrides: Partial<Record<PlanPath, FactValue>> = { 'parallel.sharding.stage': to };
  if (s.style === 'fsdp' || s.style === 'fsdp2') {
    const strategy = fsdpStrategyFor(s, to);
    if (!strategy) return undefined;
    if (stated(plan, 'parallel.sharding.fsdpStrategy')) overrides['parallel.sharding.fsdpStrategy'] = strategy;
  } else if (s.style === 'megatron-distopt' || (s.style === 'ddp' && plan.engine === 'megatron')) {
    // Megatron shards only optimizer states (the distributed optimizer, ZeRO-1).
    if (to > 1) return undefined;
    overrides['parallel.sharding.style'] = to === 1 ? 'megatron-distopt' : 'ddp';
  }
  return { label: `ZeRO stage ${s.stage} → ${to}`, path: 'parallel.sharding.stage', value: to, overrides };
}

/** Doubles or halves a model-parallel degree; DP and accumulation follow from the world size and the global batch. */
function degreeWhatIf(plan: Plan, axis: 'tp' | 'pp', to: number): WhatIf | undefined {
  const from = plan.parallel[axis];
  if (!Number.isInteger(to) || to < 1) return undefined;
  const path: PlanPath = axis === 'tp' ? 'parallel.tp' : 'parallel.pp';
  return { label: `${axis.toUpperCase()} ${from} → ${to}`, path, value: to, overrides: { [path]: to } };
}

/**
 * Halves or doubles the micro batch; where the file states the accumulation (and not the global batch) it changes
 * the other way, so the global batch stays.
 */
function microWhatIf(plan: Plan, to: number): WhatIf | undefined {
  const { microBatch: b, gradAccum: m } = plan.training;
  if (!Number.isInteger(to) || to < 1) return undefined;
  if (stated(plan, 'training.gradAccum') && !stated(plan, 'training.globalBatch')) {
    const accum = (b * m) / to;
    if (!Number.isInteger(accum) || accum < 1) return undefined;
    return { label: `micro batch ${b} → ${to} (accumulation ${m} → ${accum})`, path: 'training.microBatch', value: to,
      overrides: { 'training.microBatch': to, 'training.gradAccum': accum } };
  }
  return { label: `micro batch ${b} → ${to}`, path: 'training.microBatch', value: to, overrides: { 'training.microBatch': to } };
}

const RECOMPUTE: readonly RecomputeKind[] = ['none', 'selective', 'full'];

function single(path: PlanPath, label: string, value: FactValue): WhatIf {
  return { label, path, value, overrides: { [path]: value } };
}

/** Sensible alternatives for the key at `path` (next and previous setting). */
export function whatIfsFor(plan: Plan, path: PlanPath): WhatIf[] {
  const out: (WhatIf | undefined)[] = [];
  const t = plan.training;
  const s = plan.parallel.sharding;
  switch (path) {
    case 'parallel.sharding.stage':
      if (s.stage < 3) out.push(stageWhatIf(plan, s.stage + 1));
      if (s.stage > 0) out.push(stageWhatIf(plan, s.stage - 1));
      break;
    case 'parallel.tp':
    case 'parallel.pp': {
      const axis = path === 'parallel.tp' ? 'tp' : 'pp';
      // A stage split the file writes out (Megatron's --pipeline-model-parallel-layout) pins PP: another PP needs
      // another layout, which Megatron would otherwise reject, so there is nothing to show for it.
      if (axis === 'pp' && stated(plan, 'parallel.stageLayers')) break;
      out.push(degreeWhatIf(plan, axis, plan.parallel[axis] * 2));
      if (plan.parallel[axis] % 2 === 0) out.push(degreeWhatIf(plan, axis, plan.parallel[axis] / 2));
      break;
    }
    case 'training.microBatch':
      if (t.microBatch % 2 === 0) out.push(microWhatIf(plan, t.microBatch / 2));
      out.push(microWhatIf(plan, t.microBatch * 2));
      break;
    case 'training.recompute': {
      const i = RECOMPUTE.indexOf(t.recompute);
      for (const to of [RECOMPUTE[i + 1], RECOMPUTE[i - 1]]) if (to) out.push(single(path, `recompute ${t.recompute} → ${to}`, to));
      break;
    }
    case 'parallel.sharding.offloadOptimizer':
    case 'parallel.sharding.offloadParams': {
      const cur = path === 'parallel.sharding.offloadOptimizer' ? s.offloadOptimizer : s.offloadParams;
      const to = cur === 'none' ? 'cpu' : 'none';
      out.push(single(path, `offload ${cur} → ${to}`, to));
      break;
    }
    case 'training.seqLen':
      out.push(single(path, `sequence ${t.seqLen} → ${t.seqLen * 2}`, t.seqLen * 2));
      break;
    case 'training.optimizerImpl': {
      // torch's Adam and AdamW: the fused kernel against the foreach lists (one more state-sized list at the step).
      if (t.optimizer !== 'adam' && t.optimizer !== 'adamw') break;
      const cur = t.optimizerImpl ?? 'fused';
      const to = cur === 'fused' ? 'foreach' : 'fused';
      out.push(single(path, `optimizer step ${cur} → ${to}`, to));
      break;
    }
    case 'lora.rank': {
      // Half and double the rank: the adapters' weights, states and saved outputs, and their kernels.
      const r = plan.lora?.rank;
      if (!r || !Number.isInteger(r) || r < 1) break;
      if (r % 2 === 0) out.push(single(path, `LoRA rank ${r} → ${r / 2}`, r / 2));
      out.push(single(path, `LoRA rank ${r} → ${r * 2}`, r * 2));
      break;
    }
    case 'model.mtpLayers': {
      // Training without the prediction modules: the last stage's layer, embedding copy, extra logits and their time.
      const d = plan.model.mtpLayers ?? 0;
      if (d > 0) out.push(single(path, `multi-token prediction ${d} → 0 modules`, 0));
      break;
    }
    case 'training.lossFusion':
    case 'training.ligerKernels': {
      // Liger-Kernel off where a key turned it on (the HF Trainer's use_liger_kernel, LLaMA-Factory's
      // enable_liger_kernel): its fused loss and its kernels go together. Offered once, at the fused loss when it is on.
      const fused = t.lossFusion === 'liger', kernels = !!t.ligerKernels;
      if (path === 'training.lossFusion' ? !fused : fused || !kernels) break;
      out.push({
        label: 'Liger-Kernel on → off', path, value: false,
        overrides: { ...(fused ? { 'training.lossFusion': undefined } : {}), ...(kernels ? { 'training.ligerKernels': undefined } : {}) },
      });
      break;
    }
    case 'lora.dora':
      // DoRA against plain LoRA on the same adapters: the magnitudes, DoRA's saved outputs and transient, and its weight
      // pass and output ops in every forward (shared/time/adapters.ts).
      if (plan.lora) out.push(single(path, plan.lora.dora ? 'DoRA → plain LoRA' : 'LoRA → DoRA', !plan.lora.dora));
      break;
    default: {
      const sw = SWITCHES[path];
      if (!sw) break;
      const on = sw.get(plan);
      out.push(single(path, `${sw.name} ${on ? 'on' : 'off'} → ${on ? 'off' : 'on'}`, !on));
    }
  }
  return out.filter((v): v is WhatIf => v !== undefined);
}

