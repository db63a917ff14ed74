/**
 * Facts from a config file (and the files it references or that reference it) → a Plan.
 * Merges facts by priority, fills DeepSpeed "auto" from the referencing file or HF Trainer defaults,
 * derives the batch identity as DeepSpeed does (runtime/config.py `_set_batch_related_parameters`),
 * and turns everything still unknown into an explicit Assumption. Pure: no I/O, never throws.
 */
import { findGpu } from '../hardware/gpus';
import { findPreset } from '../model/presets';
import { applyCalibration, calibrationFor, type ClusterCorrection } from './calibration';
import { withProfile } from './profilePlan';
import type { ClusterProfile } from '../hardware/profile';
import { makePlan, type PlanInput } from './defaults';
import { factEntries, type ConfigFacts, type Fact, type FactValue } from './facts';
import { hasInlineModel, modelFromFacts } from './resolveModel';
import type { GpuSpec, InputSource, ModelSpec, Plan, Problem } from './types';
import type { PlanPath } from './paths';
import type { ServerCommand, SettingId } from '../protocol/commands';

export interface ResolveSettings {
  /** GPU name from settings (forgiving match). */
  readonly gpu?: string;
  readonly gpusPerNode?: number;
  readonly nodes?: number;
  /** Overrides the world size from the file when > 0. */
  readonly worldSize?: number;
  /** Model to use when the files name none (preset id, HF id). */
  readonly model?: string;
  /** Sequence length when the files do not say. */
  readonly seqLen?: number;
  /** Micro batch when the files do not say. */
  readonly microBatch?: number;
  readonly cudaContextBytes?: number;
  readonly allocatorFragmentation?: number;
  /** Per-cluster corrections from "Calibrate" (`shardlens.calibration`), applied when the plan's GPU matches. */
  readonly calibration?: Readonly<Record<string, ClusterCorrection>>;
  /** A measured cluster profile (`shardlens profile`, `--profile`, `shardlens.profile`): its curves replace the catalog's. */
  readonly profile?: ClusterProfile;
  /** The `shardlens.profile` setting: a profile file, relative to the workspace root; the loader reads it into `profile`. */
  readonly profileFile?: string;
}

export interface ModelLookup {
  readonly model: ModelSpec;
  readonly source: InputSource;
}

/** A reference whose config.json exists but is not a usable model config: said as an error, never replaced by a guess. */
export interface ModelLookupInvalid {
  readonly invalid: string;
}

export interface ResolveContext {
  readonly settings?: ResolveSettings;
  /** Model for a reference as written (HF id, path to a config.json, "llama3:8B"); the server reads files. Pure. */
  readonly lookupModel?: (ref: string, fromUri: string) => ModelLookup | ModelLookupInvalid | undefined;
  readonly lookupGpu?: (name: string) => GpuSpec | undefined;
}

/** A value nothing said; the user should confirm it (setting or code-lens command). */
export interface Assumption {
  readonly path: PlanPath;
  readonly value: string;
  readonly detail: string;
  /** The setting that replaces the assumption. */
  readonly setting?: SettingId;
  /** The command that changes it. */
  readonly command?: ServerCommand;
}

export interface ResolvedPlan {
  readonly plan?: Plan;
  readonly problems: Problem[];
  readonly assumptions: Assumption[];
  /** The winning fact per path after merging. */
  readonly factsUsed: Record<string, Fact>;
}

const HF = 'HF Trainer default (transformers/training_args.py)';
/** Model assumed when no file names one (shown as an assumption the user can change). */
const ASSUMED_MODEL = 'Llama-3.1-8B';

/** Merges facts: explicit/derived beat defaults; the primary file beats related ones; "auto" counts as unset. */
function merge(primary: ConfigFacts, related: readonly ConfigFacts[], problems: Problem[]): Record<string, Fact> {
  const out: Record<string, Fact> = {};
  const files = [primary, ...related];
  const rank = (f: Fact) => (f.source.kind === 'default' ? 1 : 0);
  for (const pass of [0, 1]) {
    for (const file of files) {
      for (const [path, fact] of factEntries(file.facts)) {
        if (rank(fact) !== pass) continue;
        const cur = out[path];
        const isAuto = fact.value === 'auto';
        const fromRelated = file !== primary;
        const f: Fact = fromRelated && fact.source.kind === 'explicit' ? { ...fact, source: { ...fact.source, kind: 'referenced' } } : fact;
        if (!cur) { out[path] = f; continue; }
        if (cur.value === 'auto' && !isAuto) {
          out[path] = { ...f, keyRange: cur.keyRange, key: cur.key, source: { ...f.source, detail: `"auto" in ${cur.source.detail} ← ${f.source.detail}` } };
          continue;
        }
        if (pass === 0 && !isAuto && cur.value !== f.value && cur.source.kind === 'explicit' && f.source.kind === 'referenced' && /^training\.(microBatch|gradAccum)$/.test(path)) {
          problems.push({ code: 'hf-ds-mismatch', severity: 'warning', paths: [path],
            message: `${cur.source.detail} is ${cur.value} but ${f.source.detail} says ${f.value}; the HF Trainer stops with a mismatch error. Use "auto".` });
        }
      }
    }
  }
  return out;
}

const num = (f: Record<string, Fact>, p: string): number | undefined => {
  const v = f[p]?.value;
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
};
const str = (f: Record<string, Fact>, p: string): string | undefined => {
  const v = f[p]?.value;
  return typeof v === 'string' && v !== 'auto' ? v : undefined;
};
const bool = (f: Record<string, Fact>, p: string): boolean | undefined => {
  const v = f[p]?.value;
  return typeof v === 'boolean' ? v : undefined;
};

/** Spellings of a model reference to try against the presets ("llama3:8B", "llama3_3_70b", "qlora_llama3_1_8b", "org/Model"). */
export function presetCandidates(ref: string): string[] {
  const base = ref.replace(/^.*\//, '').replace(/^q?lora_/, '');
  const dotted = base.replace(/^([a-z]+)(\d)_(\d)_/i, '$1$2.$3-');
  const titan = ref.includes(':') ? [`torchtitan-${ref.replace(':', '-')}`] : [];
  const plainName = base.replace(/-(instruct|chat|base|hf)(-\d+)?$/i, '').replace(/-\d{4}$/, '');
  return [...new Set([...titan, ref, base, ref.replace(':', '-'), base.replace(':', '-'), dotted, dotted.replace(/_/g, '-'), base.replace(/_/g, '-'), plainName])];
}

/** Finds the model: inline facts, then references and model.preset through the lookup, then bundled presets, then settings. */
function findModel(facts: Record<string, Fact>, files: readonly ConfigFacts[], ctx: ResolveContext, sources: Record<string, InputSource>, seqLen?: number, invalid: string[] = []): ModelSpec | undefined {
  if (hasInlineModel(facts)) {
    const m = modelFromFacts(facts, sources, seqLen);
    if (m) { sources.model = facts['model.hiddenSize']?.source ?? { kind: 'explicit', detail: 'inline model' }; return m; }
  }
  const refs: { ref: string; uri: string }[] = [];
  for (const f of files) for (const r of f.references) if (r.kind === 'model') refs.push({ ref: r.target, uri: f.uri });
  const preset = str(facts, 'model.preset');
  if (preset) refs.push({ ref: preset, uri: files[0]?.uri ?? '' });
  if (ctx.settings?.model) refs.push({ ref: ctx.settings.model, uri: '' });
  for (const { ref, uri } of refs) {
    const hit = ctx.lookupModel?.(ref, uri);
    if (hit && 'invalid' in hit) { invalid.push(hit.invalid); continue; }
    if (hit) { sources.model = hit.source; return hit.model; }
    for (const cand of presetCandidates(ref)) {
      const p = findPreset(cand);
      if (p) { sources.model = { kind: 'preset', detail: `bundled preset ${p.name} (for "${ref}"; ${p.source})` }; return p.model; }
    }
  }
  return undefined;
}

/** Resolves facts into a Plan plus problems and assumptions. */
export function resolvePlan(primary: ConfigFacts, related: readonly ConfigFacts[], ctx: ResolveContext = {}): ResolvedPlan {
  const problems: Problem[] = [];
  const assumptions: Assumption[] = [];
  try {
    return resolveInner(primary, related, ctx, problems, assumptions);
  } catch (e) {
    problems.push({ code: 'resolve-failed', severity: 'error', message: `ShardLens could not combine the inputs: ${String(e).slice(0, 200)}`, paths: [] });
    return { problems, assumptions, factsUsed: {} };
  }
}

function resolveInner(primary: ConfigFacts, related: readonly ConfigFacts[], ctx: ResolveContext, problems: Problem[], assumptions: Assumption[]): ResolvedPlan {
  const facts = merge(primary, related, problems);
  const sources: Record<string, InputSource> = {};
  const S = ctx.settings ?? {};
  const assume = (path: PlanPath, value: FactValue, detail: string, setting?: SettingId, command?: ServerCommand): void => {
    assumptions.push({ path, value: String(value), detail, ...(setting ? { setting } : {}), ...(command ? { command } : {}) });
    sources[path] = { kind: 'assumed', detail };
  };
  const use = (path: string): void => { const f = facts[path]; if (f) sources[path] = f.source; };

  // Cluster: settings.worldSize overrides; then the file (launcher, num_processes); then what the file's degrees imply
  // (DP × TP × PP × CP); then settings' nodes × GPUs per node; then an assumption.
  let gpn = num(facts, 'cluster.gpusPerNode');
  let nodes = num(facts, 'cluster.nodes');
  let world = num(facts, 'cluster.worldSize');
  if (world) use('cluster.worldSize');
  if (gpn) use('cluster.gpusPerNode');
  if (nodes) use('cluster.nodes');
  if ((S.worldSize ?? 0) > 0) { world = S.worldSize!; sources['cluster.worldSize'] = { kind: 'setting', detail: 'shardlens.worldSize' }; }
  const mp0 = (num(facts, 'parallel.tp') ?? 1) * (num(facts, 'parallel.pp') ?? 1) * (num(facts, 'parallel.cp') ?? 1);
  const dpFact = num(facts, 'parallel.dp');
  if (!world && gpn && nodes) world = gpn * nodes;
  if (!world && dpFact) { world = dpFact * mp0; sources['cluster.worldSize'] = { kind: 'derived', detail: `DP ${dpFact} × TP·PP·CP ${mp0} from the file` }; }
  if (!gpn && (S.gpusPerNode ?? 0) > 0) { gpn = S.gpusPerNode!; sources['cluster.gpusPerNode'] = { kind: 'setting', detail: 'shardlens.cluster.gpusPerNode' }; }
  if (!nodes && (S.nodes ?? 0) > 0) { nodes = S.nodes!; sources['cluster.nodes'] = { kind: 'setting', detail: 'shardlens.cluster.nodes' }; }
  if (!world && gpn && nodes) { world = gpn * nodes; sources['cluster.worldSize'] = { kind: 'setting', detail: 'shardlens.cluster.nodes × shardlens.cluster.gpusPerNode' }; }
  if (!world) {
    const unit = gpn ?? 8;
    world = Math.max(unit, Math.ceil(mp0 / unit) * unit);
    assume('cluster.worldSize', world, `no world size in the file, the launcher or settings: assumed ${world} GPUs (${world / unit} node${world > unit ? 's' : ''} of ${unit})`, 'shardlens.worldSize', 'shardlens.selectCluster');
  }
  // A file that gives all processes and the node count (accelerate num_processes and num_machines) gives GPUs per node.
  if (!gpn && nodes && world % nodes === 0 && world >= nodes && sources['cluster.nodes']) {
    gpn = world / nodes;
    sources['cluster.gpusPerNode'] = { kind: 'derived', detail: `world size ${world} / ${nodes} nodes` };
  }
  if (!gpn) { gpn = Math.min(8, world); if (!sources['cluster.gpusPerNode']) assume('cluster.gpusPerNode', gpn, `assumed ${gpn} GPUs per node (HGX/DGX)`, 'shardlens.cluster.gpusPerNode', 'shardlens.selectCluster'); }
  // A job smaller than a node uses part of it; otherwise whole nodes.
  if (world < gpn) gpn = world;
  nodes = Math.max(1, Math.ceil(world / gpn));
  // The GPU setting, when set, wins over the file (it is what "Select GPU / Cluster" writes).
  const gpuName = (S.gpu || undefined) ?? str(facts, 'cluster.gpuName');
  const lookupGpu = (n: string) => ctx.lookupGpu?.(n) ?? findGpu(n);
  let gpu = gpuName ? lookupGpu(gpuName) : undefined;
  if (gpuName && !gpu) problems.push({ code: 'unknown-gpu', severity: 'warning', message: `Unknown GPU "${gpuName}"; using H100 SXM.`, paths: ['cluster.gpu'] });
  if (gpu) sources['cluster.gpu'] = S.gpu ? { kind: 'setting', detail: 'shardlens.cluster.gpu' } : facts['cluster.gpuName']?.source ?? { kind: 'setting', detail: 'shardlens.cluster.gpu' };
  else { gpu = lookupGpu('h100-sxm'); assume('cluster.gpu', gpu?.name ?? 'H100 SXM', 'no GPU type in the file or settings: assumed H100 SXM 80GB', 'shardlens.cluster.gpu', 'shardlens.selectCluster'); }

  // Degrees and DP.
  const deg = (p: string) => { const v = num(facts, p); if (v !== undefined) use(p); return v && v >= 1 ? Math.round(v) : 1; };
  const tp = deg('parallel.tp');
  const pp = deg('parallel.pp');
  const cp = deg('parallel.cp');
  const mp = tp * pp * cp;
  let dp = num(facts, 'parallel.dp');
  if (dp) {
    use('parallel.dp');
    if (dp * mp !== world && !sources['cluster.worldSize']?.kind.startsWith('assumed')) {
      problems.push({ code: 'world-size-mismatch', severity: 'error', paths: ['parallel.dp', 'parallel.tp', 'parallel.pp', 'parallel.cp', 'cluster.worldSize'],
        message: `DP ${dp} × TP ${tp} × PP ${pp} × CP ${cp} = ${dp * mp} GPUs, but the world size is ${world}.` });
    }
  } else {
    if (world % mp !== 0) problems.push({ code: 'world-not-divisible', severity: 'error', paths: ['cluster.worldSize', 'parallel.tp', 'parallel.pp', 'parallel.cp'], message: `World size ${world} is not divisible by TP·PP·CP = ${mp}.` });
    dp = Math.max(1, Math.floor(world / mp));
    sources['parallel.dp'] = { kind: 'derived', detail: `world size ${world} / (TP ${tp} · PP ${pp} · CP ${cp})` };
  }

  // Sequence length before the model (the model may default its positions to it).
  let seqLen = num(facts, 'training.seqLen');
  if (seqLen) use('training.seqLen');

  const files = [primary, ...related];
  const invalid: string[] = [];
  let model = findModel(facts, files, ctx, sources, seqLen, invalid);
  for (const message of invalid) problems.push({ code: 'model-config-invalid', severity: 'error', paths: ['model'], message });
  if (!model && invalid.length) return { problems, assumptions, factsUsed: facts };
  if (!model) {
    const named = str(facts, 'model.preset') ?? files.flatMap((f) => f.references).find((r) => r.kind === 'model')?.target;
    const fallback = findPreset(ASSUMED_MODEL);
    problems.push({ code: 'model-unknown', severity: named ? 'warning' : 'info', paths: ['model'],
      message: named ? `Model "${named}" was not found (no config.json in the workspace and no bundled preset); the estimate uses ${fallback?.name ?? ASSUMED_MODEL} until you set shardlens.model or add its config.json.`
        : `The file does not say which model is trained; the estimate uses ${fallback?.name ?? ASSUMED_MODEL} until you pick one (shardlens.model).` });
    if (!fallback) return { problems, assumptions, factsUsed: facts };
    model = fallback.model;
    assume('model', fallback.name, named ? `"${named}" is not bundled and has no config.json in the workspace: assumed ${fallback.name}` : `no model named by the file: assumed ${fallback.name}`, 'shardlens.model', 'shardlens.selectModel');
  }
  if (!seqLen && (S.seqLen ?? 0) > 0) { seqLen = S.seqLen!; sources['training.seqLen'] = { kind: 'setting', detail: 'shardlens.seqLen' }; }
  if (!seqLen) {
    seqLen = Math.min(model.maxPositions || 2048, 2048);
    assume('training.seqLen', seqLen, `no sequence length in the file: assumed ${seqLen} tokens`, 'shardlens.seqLen');
  }
  const batch = resolveBatch(facts, dp, sources, assume, problems, S.microBatch);
  const hidden = model.hiddenSize;
  const bucket = (p: string, auto: number, why: string): number | undefined => {
    const f = facts[p];
    if (f?.value === 'auto') { sources[p] = { kind: 'derived', detail: `"auto" (${f.source.detail}) = ${why} with hidden size ${hidden} (HF integrations/deepspeed.py)` }; return Math.round(auto); }
    const v = num(facts, p);
    if (v !== undefined) use(p);
    return v;
  };
  let precision = str(facts, 'training.precision');
  if (facts['training.precision']?.value === 'auto') {
    precision = 'fp32';
    assume('training.precision', 'fp32', `fp16/bf16 "auto" with no referencing file: ${HF} has bf16 and fp16 off`);
  } else if (precision) use('training.precision');
  const stage = num(facts, 'parallel.sharding.stage');
  for (const p of ['training.gradDtype', 'training.fp32GradAccum', 'training.optimizer', 'training.recompute', 'training.recomputeLayers', 'training.flashAttention', 'training.compile',
    'training.fp8.recipe', 'training.fp8.paramGather',
    'parallel.sp', 'parallel.vpp', 'parallel.schedule', 'parallel.ep', 'parallel.etp', 'parallel.tpCommOverlap', 'parallel.sharding.style', 'parallel.sharding.stage',
    'parallel.sharding.fsdpStrategy', 'parallel.sharding.shardGroupSize', 'parallel.sharding.reshardAfterForward', 'parallel.sharding.offloadOptimizer',
    'parallel.sharding.offloadParams', 'parallel.sharding.overlapComm']) use(p);
  const loraOn = bool(facts, 'lora.enabled') ?? num(facts, 'lora.rank') !== undefined;
  const engine = str(facts, 'engine') ?? (primary.format.startsWith('megatron') ? 'megatron' : primary.format === 'nanotron' ? 'nanotron' : undefined);
  if (facts.engine) use('engine');
  else if (engine) sources.engine = { kind: 'derived', detail: `${primary.format} files run on the ${engine} engine` };
  const partial: PlanInput = {
    engine: engine as never,
    model,
    training: {
      microBatch: batch.micro, gradAccum: batch.gas, globalBatch: batch.global, seqLen,
      precision: precision as never,
      gradDtype: str(facts, 'training.gradDtype') as never,
      fp32GradAccum: bool(facts, 'training.fp32GradAccum'),
      optimizer: str(facts, 'training.optimizer') as never,
      recompute: str(facts, 'training.recompute') as never,
      recomputeLayers: num(facts, 'training.recomputeLayers'),
      flashAttention: bool(facts, 'training.flashAttention'),
      compile: bool(facts, 'training.compile'),
      ...(precision === 'fp8-mixed' && str(facts, 'training.fp8.recipe')
        ? { fp8: { recipe: str(facts, 'training.fp8.recipe') as never, paramGather: bool(facts, 'training.fp8.paramGather') ?? false } } : {}),
    },
    parallel: {
      dp, tp, pp, cp,
      sp: bool(facts, 'parallel.sp'),
      vpp: num(facts, 'parallel.vpp'),
      schedule: str(facts, 'parallel.schedule') as never,
      ep: num(facts, 'parallel.ep'),
      etp: num(facts, 'parallel.etp') ?? (primary.format.startsWith('megatron') ? tp : undefined),
      stageLayers: unevenStages(facts, model.layers, pp, sources),
      tpCommOverlap: bool(facts, 'parallel.tpCommOverlap'),
      sharding: {
        style: str(facts, 'parallel.sharding.style') as never,
        stage: stage !== undefined ? (Math.max(0, Math.min(3, Math.round(stage))) as 0 | 1 | 2 | 3) : undefined,
        fsdpStrategy: str(facts, 'parallel.sharding.fsdpStrategy') as never,
        shardGroupSize: shardGroup(facts, dp, sources),
        reshardAfterForward: bool(facts, 'parallel.sharding.reshardAfterForward'),
        offloadOptimizer: str(facts, 'parallel.sharding.offloadOptimizer') as never,
        offloadParams: str(facts, 'parallel.sharding.offloadParams') as never,
        reduceBucketElems: bucket('parallel.sharding.reduceBucketElems', hidden * hidden, 'hidden²'),
        allgatherBucketElems: bucket('parallel.sharding.allgatherBucketElems', hidden * hidden, 'hidden²'),
        prefetchBucketElems: bucket('parallel.sharding.prefetchBucketElems', 0.9 * hidden * hidden, '0.9·hidden²'),
        maxLiveParams: bucket('parallel.sharding.maxLiveParams', 1e9, 'DeepSpeed default 1e9'),
        overlapComm: bool(facts, 'parallel.sharding.overlapComm'),
      },
    },
    cluster: { gpusPerNode: gpn, nodes },
    overhead: { cudaContextBytes: S.cudaContextBytes, allocatorFragmentation: S.allocatorFragmentation },
    ...(loraOn ? { lora: {
      rank: num(facts, 'lora.rank') ?? 8,
      targets: (str(facts, 'lora.targets') ?? 'q,k,v,o').split(',') as never,
      baseDtype: (str(facts, 'lora.baseDtype') ?? 'bf16') as never,
    } } : {}),
    sources,
  };
  const made = makePlan(dropUndefined(partial), gpu);
  const correction = calibrationFor(made, S.calibration);
  const calibrated = correction ? applyCalibration(made, correction) : made;
  const plan = S.profile ? withProfile(calibrated, S.profile, problems) : calibrated;
  return { plan, problems, assumptions, factsUsed: facts };
}

/** Batch identity micro × GAS × DP = global, solved as DeepSpeed does (config-formats.md §1.2). */
function resolveBatch(facts: Record<string, Fact>, dp: number, sources: Record<string, InputSource>, assume: (p: PlanPath, v: FactValue, d: string, s?: SettingId, c?: ServerCommand) => void, problems: Problem[], microSetting?: number): { micro: number; gas: number; global: number } {
  const get = (p: string): number | undefined => {
    const f = facts[p];
    if (!f) return undefined;
    if (f.value === 'auto') return undefined;
    const v = num(facts, p);
    if (v !== undefined && v >= 1) { sources[p] = f.source; return Math.round(v); }
    return undefined;
  };
  let m = get('training.microBatch');
  let g = get('training.gradAccum');
  const B = get('training.globalBatch');
  const auto = (p: string) => facts[p]?.value === 'auto';
  const fromSetting = (): number | undefined => {
    if (!microSetting || microSetting < 1 || B !== undefined) return undefined;
    sources['training.microBatch'] = { kind: 'setting', detail: 'shardlens.microBatch' };
    return microSetting;
  };
  if (m === undefined) m = fromSetting();
  if (m === undefined && auto('training.microBatch')) { m = 8; assume('training.microBatch', 8, `train_micro_batch_size_per_gpu "auto" with no referencing file: ${HF} per_device_train_batch_size 8`, 'shardlens.microBatch'); }
  if (g === undefined && auto('training.gradAccum')) { g = 1; assume('training.gradAccum', 1, `gradient_accumulation_steps "auto" with no referencing file: ${HF} gradient_accumulation_steps 1`); }
  const derived = (p: string, v: number, why: string) => { sources[p] = { kind: 'derived', detail: why }; return v; };
  if (m !== undefined && g !== undefined && B !== undefined) {
    if (m * g * dp !== B) problems.push({ code: 'batch-identity', severity: 'error', paths: ['training.globalBatch', 'training.microBatch', 'training.gradAccum', 'parallel.dp'],
      message: `Batch identity broken: global ${B} ≠ micro ${m} × accumulation ${g} × DP ${dp} = ${m * g * dp}.` });
    return { micro: m, gas: g, global: B };
  }
  if (B !== undefined && m !== undefined) {
    const q = B / (m * dp);
    if (!Number.isInteger(q) || q < 1) problems.push({ code: 'batch-identity', severity: 'error', paths: ['training.globalBatch', 'training.microBatch', 'parallel.dp'], message: `Global batch ${B} is not a multiple of micro ${m} × DP ${dp} = ${m * dp}.` });
    return { micro: m, gas: derived('training.gradAccum', Math.max(1, Math.floor(q)), `global ${B} / (micro ${m} × DP ${dp})`), global: B };
  }
  if (B !== undefined && g !== undefined) {
    const q = B / (g * dp);
    if (!Number.isInteger(q) || q < 1) problems.push({ code: 'batch-identity', severity: 'error', paths: ['training.globalBatch', 'training.gradAccum', 'parallel.dp'], message: `Global batch ${B} is not a multiple of accumulation ${g} × DP ${dp} = ${g * dp}.` });
    return { micro: derived('training.microBatch', Math.max(1, Math.floor(q)), `global ${B} / (DP ${dp} × accumulation ${g})`), gas: g, global: B };
  }
  if (B !== undefined) {
    const q = B / dp;
    if (!Number.isInteger(q) || q < 1) problems.push({ code: 'batch-identity', severity: 'error', paths: ['training.globalBatch', 'parallel.dp'], message: `Global batch ${B} is not divisible by DP ${dp}.` });
    return { micro: derived('training.microBatch', Math.max(1, Math.floor(q)), `global ${B} / DP ${dp} (accumulation 1)`), gas: derived('training.gradAccum', 1, 'only the global batch is set: accumulation 1'), global: B };
  }
  if (m === undefined) { m = 1; assume('training.microBatch', 1, 'no micro batch in the file: assumed 1 sequence per GPU', 'shardlens.microBatch'); }
  if (g === undefined) g = derived('training.gradAccum', 1, 'no gradient accumulation given: 1');
  return { micro: m, gas: g, global: derived('training.globalBatch', m * g * dp, `micro ${m} × accumulation ${g} × DP ${dp}`) };
}

/** Ranks the states are sharded over: explicit (HSDP shard / FSDP dim), DP / replicas, or DP / optimizer instances. */
function shardGroup(facts: Record<string, Fact>, dp: number, sources: Record<string, InputSource>): number | undefined {
  const explicit = num(facts, 'parallel.sharding.shardGroupSize');
  if (explicit) { sources['parallel.sharding.shardGroupSize'] = facts['parallel.sharding.shardGroupSize']!.source; return explicit; }
  for (const [p, why] of [['parallel.dpReplicate', 'DP / replicas (HSDP)'], ['parallel.sharding.instances', 'DP / distributed-optimizer instances']] as const) {
    const n = num(facts, p);
    if (n && n > 1 && dp % n === 0) { sources['parallel.sharding.shardGroupSize'] = { kind: 'derived', detail: `${why}: ${dp} / ${n}` }; return dp / n; }
  }
  return undefined;
}

/** Uneven pipeline split from Megatron's first/last stage layer counts; the rest are spread evenly. */
function unevenStages(facts: Record<string, Fact>, layers: number, pp: number, sources: Record<string, InputSource>): number[] | undefined {
  const first = num(facts, 'parallel.firstStageLayers');
  const last = num(facts, 'parallel.lastStageLayers');
  if (pp < 2 || (first === undefined && last === undefined)) return undefined;
  const middle = pp - (first !== undefined ? 1 : 0) - (last !== undefined ? 1 : 0);
  const rest = layers - (first ?? 0) - (last ?? 0);
  if (rest < 0 || (middle > 0 && rest % middle !== 0) || (middle === 0 && rest !== 0)) return undefined;
  const each = middle > 0 ? rest / middle : 0;
  const out = Array.from({ length: pp }, () => each);
  if (first !== undefined) out[0] = first;
  if (last !== undefined) out[pp - 1] = last;
  sources['parallel.stageLayers'] = { kind: 'derived', detail: `--decoder-first/last-pipeline-num-layers: ${out.join(', ')}` };
  return out;
}

/** Removes undefined leaves so makePlan's defaults apply. */
function dropUndefined<T>(v: T): T {
  if (Array.isArray(v) || v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) out[k] = k === 'model' || k === 'sources' ? x : dropUndefined(x);
  return out as T;
}
