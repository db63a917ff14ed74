/**
 * "Say what was read": the resolved inputs of a plan (training, model, cluster), each with the source the hover
 * shows for it, so `shardlens estimate --json`, the `shardlens/analysis` result and the CLI's text block report
 * exactly which micro batch, sequence length, model and cluster an estimate used and where each came from.
 */
import type { Fact } from './facts';
import type { PlanPath } from './paths';
import { modelImplOf, precisionRegimeOf } from '../memory/engine';
import { DEFAULT_RECOMPUTE_MODULES } from './recomputeModules';
import { nvlinkDomainOf } from '../comm/links';
import type { InputSource, Plan } from './types';

/** One resolved input: its value and where it came from (file and key, default, derivation or assumption). */
export interface ReadInput<T> {
  readonly value: T;
  readonly source: InputSource;
}

/** Training inputs of the estimate. */
export interface TrainingInputs {
  readonly microBatch: ReadInput<number>;
  readonly gradAccum: ReadInput<number>;
  readonly globalBatch: ReadInput<number>;
  readonly seqLen: ReadInput<number>;
  readonly precision: ReadInput<string>;
  /** How the precision is kept in memory (master weights, fp32 grads): shared/memory/engine.ts `precisionRegimeOf`. */
  readonly regime: ReadInput<string>;
  readonly recompute: ReadInput<string>;
  /** Megatron's selective recomputation: the modules it reruns (shared/plan/recomputeModules.ts); only then. */
  readonly recomputes?: ReadInput<string>;
  readonly optimizer: ReadInput<string>;
}

/** Model inputs of the estimate. */
export interface ModelInputs {
  readonly name: ReadInput<string>;
  readonly layers: ReadInput<number>;
  readonly hiddenSize: ReadInput<number>;
  readonly heads: ReadInput<number>;
  readonly kvHeads: ReadInput<number>;
  readonly ffnSize: ReadInput<number>;
  readonly vocabSize: ReadInput<number>;
  /** Routed experts per MoE layer; 0 for a dense model. */
  readonly experts: ReadInput<number>;
  /** Multi-token-prediction modules (shared/model/mtp.ts); present only when the model builds some. */
  readonly mtpLayers?: ReadInput<number>;
}

/** Cluster inputs of the estimate. */
export interface ClusterInputs {
  readonly gpu: ReadInput<string>;
  readonly nodes: ReadInput<number>;
  readonly gpusPerNode: ReadInput<number>;
  readonly worldSize: ReadInput<number>;
  /** GPUs joined by NVLink across nodes, when more than a node (GB200 NVL72, `shardlens.cluster.nvlinkDomain`). */
  readonly nvlinkDomain?: ReadInput<number>;
}

/** LoRA inputs, present only when the plan trains adapters. */
export interface LoraInputs {
  readonly rank: ReadInput<number>;
  readonly targets: ReadInput<string>;
  readonly baseDtype: ReadInput<string>;
  /**
   * A quantized base: whether its frozen linears keep their inputs for the backward (bitsandbytes' 8-bit linear does,
   * its 4-bit one up to 0.43.1: the workspace's pin decides, server/formats/workspacePins.ts).
   */
  readonly keepsInputs?: ReadInput<boolean>;
}

/** Everything an estimate read, grouped as in the CLI's text block. */
export interface ResolvedInputs {
  readonly training: TrainingInputs;
  readonly model: ModelInputs;
  readonly cluster: ClusterInputs;
  readonly lora?: LoraInputs;
}

const UNRECORDED: InputSource = { kind: 'default', detail: 'ShardLens default' };

/**
 * The inputs of a plan with their sources: the plan's own record first, then the winning fact (model fields are
 * recorded once as "model" when they come from a preset or a config.json), then the model's source.
 */
export function readInputs(plan: Plan, facts: Readonly<Partial<Record<PlanPath, Fact>>> = {}): ResolvedInputs {
  // A fact counts only when the plan used its value (a model preset can replace a file's partial model).
  const src = (path: PlanPath, value: unknown, fallback?: PlanPath): InputSource =>
    plan.sources[path] ?? (facts[path] && facts[path]!.value === value ? facts[path]!.source : undefined)
    ?? (fallback ? plan.sources[fallback] : undefined) ?? UNRECORDED;
  const at = <T>(path: PlanPath, value: T, fallback?: PlanPath): ReadInput<T> => ({ value, source: src(path, value, fallback) });
  const { training: t, model: m, cluster: c } = plan;
  return {
    training: {
      microBatch: at('training.microBatch', t.microBatch),
      gradAccum: at('training.gradAccum', t.gradAccum),
      globalBatch: at('training.globalBatch', t.globalBatch),
      seqLen: at('training.seqLen', t.seqLen),
      precision: at('training.precision', t.precision),
      regime: plan.training.regime ? at('training.regime', plan.training.regime)
        : { value: precisionRegimeOf(plan), source: { kind: 'derived', detail: `${t.precision} on the ${plan.engine} engine (${src('engine', plan.engine).detail})` } },
      recompute: at('training.recompute', t.recompute),
      ...(t.recompute === 'selective' && modelImplOf(plan) === 'megatron' ? { recomputes: recomputesInput(plan, facts) } : {}),
      optimizer: at('training.optimizer', t.optimizer),
    },
    model: {
      name: at('model.name', m.name, 'model'),
      layers: at('model.layers', m.layers, 'model'),
      hiddenSize: at('model.hiddenSize', m.hiddenSize, 'model'),
      heads: at('model.heads', m.heads, 'model'),
      kvHeads: at('model.kvHeads', m.kvHeads, 'model'),
      ffnSize: at('model.ffnSize', m.ffnSize, 'model'),
      vocabSize: at('model.vocabSize', m.vocabSize, 'model'),
      experts: m.moe ? at('model.moe.experts', m.moe.experts, 'model') : { value: 0, source: { kind: 'derived', detail: 'dense model (no MoE layers)' } },
      ...(m.mtpLayers ? { mtpLayers: at('model.mtpLayers', m.mtpLayers, 'model') } : {}),
    },
    cluster: {
      gpu: at('cluster.gpu', c.gpu.name),
      nodes: at('cluster.nodes', c.nodes),
      gpusPerNode: at('cluster.gpusPerNode', c.gpusPerNode),
      // The cluster's GPUs (nodes × GPUs per node), which differ from DP·TP·PP·CP when the file is inconsistent.
      worldSize: at('cluster.worldSize', c.nodes * c.gpusPerNode),
      ...(nvlinkDomainOf(c) > c.gpusPerNode ? {
        nvlinkDomain: {
          value: nvlinkDomainOf(c),
          source: plan.sources['cluster.nvlinkDomain'] ?? { kind: 'default', detail: `GPU catalog: ${c.gpu.name} (NVLink across nodes)` },
        },
      } : {}),
    },
    ...(plan.lora ? { lora: loraInputs(plan.lora, at) } : {}),
  };
}

/** The LoRA group of readInputs. */
function loraInputs(l: NonNullable<Plan['lora']>, at: <T>(path: PlanPath, value: T) => ReadInput<T>): LoraInputs {
  const quantized = l.baseDtype === 'nf4' || l.baseDtype === 'int8';
  return {
    rank: at('lora.rank', l.rank),
    targets: at('lora.targets', l.targets.join(',')),
    baseDtype: at('lora.baseDtype', l.baseDtype),
    ...(quantized ? { keepsInputs: at('lora.baseSavesInputs', l.baseSavesInputs === true) } : {}),
  };
}

/** The modules Megatron's selective recomputation reruns, with where the list came from (its default: core attention). */
function recomputesInput(plan: Plan, facts: Readonly<Partial<Record<PlanPath, Fact>>>): ReadInput<string> {
  const list = plan.training.recomputeModules;
  if (!list) return { value: DEFAULT_RECOMPUTE_MODULES.join(', '), source: { kind: 'default', detail: "Megatron's default recompute_modules" } };
  const source = plan.sources['training.recomputeModules'] ?? facts['training.recomputeModules']?.source ?? UNRECORDED;
  return { value: list.length ? list.join(', ') : 'none', source };
}

/** "explicit: run.sh: --micro-batch-size" style text of a source, as the hover prints it. */
export function sourceText(s: InputSource): string {
  return `${s.kind}: ${s.detail}`;
}

/** The inputs as aligned text lines (the CLI's "Read" block): label, value, source ("〃" repeats the line above). */
export function inputLines(inputs: ResolvedInputs): string[] {
  const lines: string[] = [];
  for (const [group, entries] of Object.entries(inputs) as [string, Record<string, ReadInput<unknown>>][]) {
    lines.push(`${group}:`);
    let previous = '';
    for (const [name, r] of Object.entries(entries)) {
      const text = sourceText(r.source);
      lines.push(`  ${name.padEnd(12)} ${String(r.value).padEnd(22)} ${text === previous ? '〃' : text}`);
      previous = text;
    }
  }
  return lines;
}
