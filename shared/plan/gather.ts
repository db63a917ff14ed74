/**
 * Merged facts → the stated inputs of a plan (PlanInput). This step looks things up (the model, the GPU), applies
 * settings and records assumptions for what nothing states; it derives nothing that depends on another input:
 * derivePlan (derive.ts) does that, for files and what-ifs alike.
 */
import { runTimeNote } from './runTime';
import type { ServerCommand, SettingId } from '../protocol/commands';
import { calibrationFor } from './calibration';
import type { PlanInput } from './derive';
import type { ConfigFacts, FactValue } from './facts';
import { bool, fromSetting, num, str, type Facts } from './factAccess';
import { gatherGpu, withNetwork, withNvlinkDomain } from './gatherGpu';
import type { PlanPath } from './paths';
import type { Assumption, ResolveContext } from './resolve';
import type { InputSource, MegatronRecomputeModule, ModelSpec, ParallelAxis, Problem } from './types';
import { parseRecomputeModules } from './recomputeModules';

export { fromSetting, num, str, type Facts } from './factAccess';

/** The modules LoRA trains in full, from a comma list of `embed` and `head` (formats/common/finetune.ts), or undefined. */
const fullModulesOf = (v: string | undefined): readonly ('embed' | 'head')[] | undefined => {
  const out = (v ?? '').split(',').filter((x): x is 'embed' | 'head' => x === 'embed' || x === 'head');
  return out.length ? [...new Set(out)] : undefined;
};
/** A list of non-negative whole numbers (a stage split), or undefined. */
const counts = (f: Facts, p: PlanPath): readonly number[] | undefined => {
  const v = f[p]?.value;
  return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x) && x >= 0) ? v : undefined;
};

const HF = 'HF Trainer default (transformers/training_args.py)';

/** Records what gathering needs to report: sources of stated values, assumptions and problems. */
export class Gathered {
  readonly sources: Partial<Record<PlanPath, InputSource>> = {};
  /**
   * @param runTime the settings the primary file writes with a value only the run gives, by plan path
   *   (unresolvedSettings): a framework default in their place is not what runs, so it is used as an assumption.
   */
  constructor(readonly facts: Facts, readonly assumptions: Assumption[], readonly problems: Problem[], readonly runTime: ReadonlyMap<PlanPath, string> = new Map()) {}

  /**
   * The value of a fact, recording its source when it is used. A fact a loader could only assume (a framework's
   * bundled DeepSpeed file that is not in the workspace) is listed with the assumptions, so the verdict says it rests
   * on it; so is a framework default standing in for a setting the file writes with a run-time value
   * (`--tensor-model-parallel-size $TP` is not "Megatron-LM default 1": the run decides).
   */
  use<T>(path: PlanPath, v: T | undefined): T | undefined {
    const f = this.facts[path];
    if (v !== undefined && f && f.source.kind === 'default' && this.runTime.has(path)) {
      if (!this.assumptions.some((a) => a.path === path)) this.assume(path, String(v), `${runTimeNote(this.runTime, [path])}: assumed ${String(v)}, the ${f.source.detail}`);
      return v;
    }
    if (v !== undefined && f) {
      this.sources[path] = f.source;
      if (f.source.kind === 'assumed' && !this.assumptions.some((a) => a.path === path)) {
        this.assumptions.push({ path, value: String(v), detail: f.source.detail });
      }
    }
    return v;
  }

  num(path: PlanPath): number | undefined { return this.use(path, num(this.facts, path)); }
  str<T extends string>(path: PlanPath): T | undefined { return this.use(path, str(this.facts, path) as T | undefined); }
  bool(path: PlanPath): boolean | undefined { return this.use(path, bool(this.facts, path)); }
  counts(path: PlanPath): readonly number[] | undefined { return this.use(path, counts(this.facts, path)); }

  assume(path: PlanPath, value: FactValue, detail: string, setting?: SettingId, command?: ServerCommand): void {
    this.assumptions.push({ path, value: String(value), detail, ...(setting ? { setting } : {}), ...(command ? { command } : {}) });
    this.sources[path] = { kind: 'assumed', detail };
  }
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/**
 * The world size assumed when nothing gives it: whole nodes of `unit` GPUs, at least one, holding the file's model
 * parallel group TP·PP·CP and its expert group, which Megatron and torchtitan place inside DP·CP·TP of each pipeline
 * stage (EP·ETP divides DP·CP·TP): the smallest multiple of PP · lcm(TP·CP, EP·ETP) that fills whole nodes.
 */
function assumedWorld(f: Facts, unit: number): { world: number; holds: (w: number) => boolean } {
  const n = (p: PlanPath) => { const v = num(f, p); return v !== undefined && Number.isInteger(v) && v >= 1 && v <= 1e6 ? v : 1; };
  const inner = n('parallel.tp') * n('parallel.cp'), expert = n('parallel.ep') * n('parallel.etp');
  const need = n('parallel.pp') * ((inner / gcd(inner, expert)) * expert);
  const holds = (w: number) => w % need === 0;
  const nodes = Math.max(1, Math.ceil(need / unit)) * unit;
  if (nodes % need === 0 || need > 1e6) return { world: nodes, holds };
  const both = (need / gcd(need, unit)) * unit;
  return { world: both <= 64 * nodes ? both : nodes, holds };
}

/** World size, GPUs per node and nodes: settings.worldSize, the file, DP × TP·PP·CP from the file, settings, assumption. */
function gatherCluster(g: Gathered, ctx: ResolveContext): { worldSize: number; gpusPerNode: number; nodes: number | undefined } {
  const S = ctx.settings ?? {};
  // The file's own GPU counts, written with values only the run gives (`--nproc_per_node=$gpu_count`).
  const atRun = runTimeNote(g.runTime, ['cluster.worldSize', 'cluster.nodes', 'cluster.gpusPerNode']);
  const f = g.facts;
  let gpn = g.num('cluster.gpusPerNode');
  // A node count that is only a script's fallback for an unset scheduler variable (`${SLURM_NNODES:-1}`) is weighed
  // below with the layout it has to hold, as an assumption.
  const fallback = f['cluster.nodes']?.source.kind === 'assumed' ? f['cluster.nodes'] : undefined;
  let nodes = fallback ? undefined : g.num('cluster.nodes');
  let world = g.num('cluster.worldSize');
  if ((S.worldSize ?? 0) > 0) { world = S.worldSize!; g.sources['cluster.worldSize'] = fromSetting('shardlens.worldSize'); }
  const mp0 = (num(f, 'parallel.tp') ?? 1) * (num(f, 'parallel.pp') ?? 1) * (num(f, 'parallel.cp') ?? 1);
  const dpFact = num(f, 'parallel.dp');
  if (!world && gpn && nodes) world = gpn * nodes;
  if (!world && dpFact) { world = dpFact * mp0; g.sources['cluster.worldSize'] = { kind: 'derived', detail: `DP ${dpFact} × TP·PP·CP ${mp0} from the file` }; }
  if (!gpn && (S.gpusPerNode ?? 0) > 0) { gpn = S.gpusPerNode!; g.sources['cluster.gpusPerNode'] = fromSetting('shardlens.cluster.gpusPerNode'); }
  if (!nodes && (S.nodes ?? 0) > 0) { nodes = S.nodes!; g.sources['cluster.nodes'] = fromSetting('shardlens.cluster.nodes'); }
  if (!world && gpn && nodes) { world = gpn * nodes; g.sources['cluster.worldSize'] = { kind: 'setting', detail: 'shardlens.cluster.nodes × shardlens.cluster.gpusPerNode' }; }
  // A node count the file states, with neither GPUs per node nor a world size: nodes of the HGX/DGX's 8 GPUs (torchrun's
  // --nproc_per_node and llamafactory-cli's NPROC_PER_NODE default to every GPU of the node), where that holds the
  // file's layout; before, the one-node world was assumed and split over the nodes (2 nodes of 4 GPUs).
  if (!world && !gpn && nodes && assumedWorld(f, 8).holds(nodes * 8)) {
    gpn = 8;
    g.assume('cluster.gpusPerNode', gpn, `assumed 8 GPUs per node (HGX/DGX) on the file's ${nodes} node${nodes > 1 ? 's' : ''}`, 'shardlens.cluster.gpusPerNode', 'shardlens.selectCluster');
    world = nodes * gpn;
    g.sources['cluster.worldSize'] = { kind: 'derived', detail: `${nodes} node${nodes > 1 ? 's' : ''} × 8 GPUs per node (assumed)` };
  }
  if (!world) {
    const unit = gpn ?? 8;
    const a = assumedWorld(f, unit);
    const fallen = fallback && typeof fallback.value === 'number' ? fallback.value * unit : undefined;
    const nodesOf = (w: number) => `${w / unit} node${w > unit ? 's' : ''} of ${unit}`;
    if (fallback && fallen && a.holds(fallen)) {
      world = fallen;
      g.assume('cluster.worldSize', world, `${fallback.source.detail}: assumed ${world} GPUs (${nodesOf(world)})`, 'shardlens.worldSize', 'shardlens.selectCluster');
    } else {
      world = a.world;
      const held = world > unit ? ', the fewest whole nodes that hold the file\'s TP·PP·CP and EP groups' : '';
      const why = fallback ? `${fallback.source.detail}; too few for the file's layout` : atRun ?? 'no world size in the file, the launcher or settings';
      g.assume('cluster.worldSize', world, `${why}: assumed ${world} GPUs (${nodesOf(world)}${held})`, 'shardlens.worldSize', 'shardlens.selectCluster');
    }
  }
  // A file that gives all processes and the node count (accelerate num_processes and num_machines) gives GPUs per node.
  if (!gpn && nodes && world % nodes === 0 && world >= nodes && g.sources['cluster.nodes']) {
    gpn = world / nodes;
    g.sources['cluster.gpusPerNode'] = { kind: 'derived', detail: `world size ${world} / ${nodes} nodes` };
  }
  if (!gpn) {
    gpn = Math.min(8, world);
    const perNode = runTimeNote(g.runTime, ['cluster.gpusPerNode']);
    const why = gpn === 8 ? `assumed ${gpn} GPUs per node (HGX/DGX)` : gpn === 1 ? 'assumed one GPU on its node' : `assumed the ${gpn} GPUs on one node`;
    if (!g.sources['cluster.gpusPerNode']) g.assume('cluster.gpusPerNode', gpn, perNode ? `${perNode}: ${why}` : why, 'shardlens.cluster.gpusPerNode', 'shardlens.selectCluster');
  }
  return { worldSize: world, gpusPerNode: gpn, nodes };
}

/**
 * Stated batch terms; DeepSpeed "auto" with nothing to fill it becomes the HF Trainer default, and a term written with a
 * value set only when the run starts is assumed, never "not given" (the file gives it, ShardLens cannot read it):
 * - a run-time micro batch is 1 sequence per GPU unless the global batch and the accumulation both fix it, and the
 *   accumulation then follows from the global batch (`--micro-batch-size $MBS --global-batch-size 1024` is 1 × 128
 *   steps on 8 ranks, not 128 sequences per GPU);
 * - a run-time accumulation is 1 unless the micro and global batches fix it;
 * - a run-time global batch with no accumulation stated is one micro-batch per step.
 */
function gatherBatch(g: Gathered, microSetting: number | undefined): { microBatch?: number; gradAccum?: number; globalBatch?: number } {
  const get = (p: PlanPath): number | undefined => {
    const v = num(g.facts, p);
    return v !== undefined && v >= 1 ? g.use(p, Math.round(v)) : undefined;
  };
  let m = get('training.microBatch');
  let gas = get('training.gradAccum');
  const B = get('training.globalBatch');
  const auto = (p: PlanPath) => g.facts[p]?.value === 'auto';
  const unresolved = g.runTime;
  const atRun = (...p: PlanPath[]) => runTimeNote(unresolved, p);
  // The micro batch is open when nothing fixes it: no global batch, or a run-time micro batch the accumulation cannot give.
  const microOpen = () => m === undefined && (B === undefined || (unresolved.has('training.microBatch') && gas === undefined));
  if (microOpen() && microSetting && microSetting >= 1) {
    m = microSetting;
    g.sources['training.microBatch'] = fromSetting('shardlens.microBatch');
  }
  if (m === undefined && auto('training.microBatch')) { m = 8; g.assume('training.microBatch', 8, `train_micro_batch_size_per_gpu "auto" with no referencing file: ${HF} per_device_train_batch_size 8`, 'shardlens.microBatch'); }
  if (gas === undefined && auto('training.gradAccum')) { gas = 1; g.assume('training.gradAccum', 1, `gradient_accumulation_steps "auto" with no referencing file: ${HF} gradient_accumulation_steps 1`); }
  if (microOpen()) {
    m = 1;
    const why = unresolved.has('training.microBatch')
      ? `${atRun('training.microBatch')}: assumed 1 sequence per GPU${B !== undefined ? `, so the accumulation follows from the global batch of ${B}` : ''}`
      : unresolved.has('training.globalBatch') && gas !== undefined
        ? `no micro batch in the file, and ${atRun('training.globalBatch')}: assumed 1 sequence per GPU, so the global batch is ${gas} × the data-parallel ranks`
        : 'no micro batch in the file: assumed 1 sequence per GPU';
    g.assume('training.microBatch', 1, why, 'shardlens.microBatch');
  }
  // Accumulation is implied when the micro and global batches are both known; otherwise the run's value is unknown.
  if (gas === undefined && !(m !== undefined && B !== undefined)) {
    const note = atRun('training.gradAccum', 'training.globalBatch');
    if (note) {
      gas = 1;
      const then = B !== undefined
        ? `so the micro batch is the global batch of ${B} over the data-parallel ranks`
        : 'so the global batch is one micro-batch per data-parallel rank and the step time is for one micro-batch per step';
      g.assume('training.gradAccum', 1, `${note}: assumed accumulation 1, ${then}`);
    }
  }
  return { ...(m !== undefined ? { microBatch: m } : {}), ...(gas !== undefined ? { gradAccum: gas } : {}), ...(B !== undefined ? { globalBatch: B } : {}) };
}

/** A DeepSpeed bucket size: stated, or "auto" filled as the HF integration does (integrations/deepspeed.py). */
function bucket(g: Gathered, p: PlanPath, hidden: number, auto: number, why: string): number | undefined {
  const f = g.facts[p];
  if (f?.value === 'auto') {
    g.sources[p] = { kind: 'derived', detail: `"auto" (${f.source.detail}) = ${why} with hidden size ${hidden} (HF integrations/deepspeed.py)` };
    return Math.round(auto);
  }
  return g.num(p);
}

/** The stated inputs of a plan from merged facts, the model (already found) and the context. */
export function gatherInput(g: Gathered, primary: ConfigFacts, model: ModelSpec, seqLen: number, ctx: ResolveContext): PlanInput {
  const S = ctx.settings ?? {};
  const f = g.facts;
  const cluster = gatherCluster(g, ctx);
  const gpu = gatherGpu(g, ctx);
  const hidden = model.hiddenSize;
  let precision = g.str<NonNullable<NonNullable<PlanInput['training']>['precision']>>('training.precision');
  if (f['training.precision']?.value === 'auto') {
    precision = 'fp32';
    g.assume('training.precision', 'fp32', `fp16/bf16 "auto" with no referencing file: ${HF} has bf16 and fp16 off`);
  }
  const stage = g.num('parallel.sharding.stage');
  const loraOn = bool(f, 'lora.enabled') ?? num(f, 'lora.rank') !== undefined;
  // LoRA switched on with no rank or targets from the file or its trainer's defaults: PEFT LoraConfig's r = 8, on the
  // attention projections, said as assumptions the verdict lists.
  const loraRank = num(f, 'lora.rank') ?? 8;
  const loraTargets = str(f, 'lora.targets') ?? 'q,k,v,o';
  if (loraOn && num(f, 'lora.rank') === undefined) g.assume('lora.rank', loraRank, 'no LoRA rank in the files: assumed 8 (PEFT LoraConfig r default)');
  if (loraOn && str(f, 'lora.targets') === undefined) g.assume('lora.targets', loraTargets, 'no LoRA target modules in the files: assumed the attention projections q, k, v, o');
  const recipe = g.str<'tensorwise'>('training.fp8.recipe');
  const input: PlanInput = {
    // A launch script that runs torchtitan's trainer trains as torchtitan does (its engine, pipeline split and defaults).
    format: primary.format === 'megatron-script' && g.str('launch.dialect') === 'torchtitan' ? 'torchtitan' : primary.format,
    engine: g.str('engine'),
    model,
    training: {
      ...gatherBatch(g, S.microBatch), deviceBatch: g.num('training.deviceBatch'), ...stepsOf(g), seqLen, precision,
      gradDtype: g.str('training.gradDtype'), fp32GradAccum: g.bool('training.fp32GradAccum'), optimizer: g.str('training.optimizer'),
      recompute: g.str('training.recompute'), recomputeLayers: g.num('training.recomputeLayers'),
      ...recomputeModulesFact(g.str<string>('training.recomputeModules')),
      flashAttention: g.bool('training.flashAttention'), compile: g.bool('training.compile'),
      // How the engine keeps memory when a file says (else shared/memory/engine.ts decides from the engine).
      ...optionalFacts(g),
      ...sampleTokensOf(g, S.sampleTokens),
      ...(precision === 'fp8-mixed' && recipe ? { fp8: { recipe, paramGather: g.bool('training.fp8.paramGather') ?? false } } : {}),
    },
    parallel: {
      dp: g.num('parallel.dp'), tp: degree(g, 'parallel.tp'), pp: degree(g, 'parallel.pp'), cp: degree(g, 'parallel.cp'),
      sp: g.bool('parallel.sp'), vpp: g.num('parallel.vpp'), schedule: g.str('parallel.schedule'), ep: g.num('parallel.ep'), etp: g.num('parallel.etp'),
      tpCommOverlap: g.bool('parallel.tpCommOverlap'), epDispatcher: g.str('parallel.epDispatcher'), epCommOverlap: g.bool('parallel.epCommOverlap'), stageLayers: g.counts('parallel.stageLayers'),
      order: rankOrder(g.str('parallel.order')),
      dpReplicate: g.num('parallel.dpReplicate'), shardInstances: g.num('parallel.sharding.instances'), vppLayers: g.num('parallel.vppLayers'),
      firstStageLayers: g.num('parallel.firstStageLayers'), lastStageLayers: g.num('parallel.lastStageLayers'),
      firstStageLess: g.num('parallel.firstStageLess'), lastStageLess: g.num('parallel.lastStageLess'),
      sharding: {
        style: g.str('parallel.sharding.style'),
        stage: stage !== undefined ? (Math.max(0, Math.min(3, Math.round(stage))) as 0 | 1 | 2 | 3) : undefined,
        fsdpStrategy: g.str('parallel.sharding.fsdpStrategy'), shardGroupSize: g.num('parallel.sharding.shardGroupSize'),
        reshardAfterForward: g.bool('parallel.sharding.reshardAfterForward'),
        offloadOptimizer: g.str('parallel.sharding.offloadOptimizer'), offloadParams: g.str('parallel.sharding.offloadParams'),
        reduceBucketElems: bucket(g, 'parallel.sharding.reduceBucketElems', hidden, hidden * hidden, 'hidden²'),
        allgatherBucketElems: bucket(g, 'parallel.sharding.allgatherBucketElems', hidden, hidden * hidden, 'hidden²'),
        prefetchBucketElems: bucket(g, 'parallel.sharding.prefetchBucketElems', hidden, 0.9 * hidden * hidden, '0.9·hidden²'),
        maxLiveParams: bucket(g, 'parallel.sharding.maxLiveParams', hidden, 1e9, 'DeepSpeed default 1e9'),
        overlapComm: g.bool('parallel.sharding.overlapComm'),
        contiguousGradients: g.bool('parallel.sharding.contiguousGradients'),
        dsFusedAdam: g.bool('parallel.sharding.dsFusedAdam'),
        quantizedWeights: g.bool('parallel.sharding.quantizedWeights'), hpzPartition: g.num('parallel.sharding.hpzPartition'),
        quantizedGradients: g.bool('parallel.sharding.quantizedGradients'),
      },
    },
    cluster: { ...cluster, ...(gpu ? { gpu: withNvlinkDomain(g, withNetwork(g, gpu, S.networkGbps, cluster.gpusPerNode), S.nvlinkDomain) } : {}) },
    overhead: { cudaContextBytes: S.cudaContextBytes, allocatorFragmentation: S.allocatorFragmentation },
    ...(loraOn ? { lora: {
      rank: loraRank,
      targets: loraTargets.split(',') as never,
      baseDtype: (str(f, 'lora.baseDtype') ?? 'bf16') as never,
      dropout: num(f, 'lora.dropout'), fusedQkv: bool(f, 'lora.fusedQkv'), baseSavesInputs: g.bool('lora.baseSavesInputs'),
      headQuantized: g.bool('lora.headQuantized'), dequantCast: g.bool('lora.dequantCast'),
      fullModules: fullModulesOf(str(f, 'lora.fullModules')), fullModulesCopied: bool(f, 'lora.fullModulesCopied'), dora: bool(f, 'lora.dora'),
    } } : {}),
    sources: g.sources,
  };
  const clean = dropUndefined(input);
  const calibration = gpu ? calibrationFor({ cluster: { gpu } }, S.calibration) : undefined;
  return { ...clean, ...(calibration ? { calibration } : {}), ...(S.profile ? { profile: S.profile } : {}) };
}

/** A rank order written as the axes from innermost to outermost ("tp-cp-ep-dp-pp"): each axis once, else unstated. */
function rankOrder(v: string | undefined): ParallelAxis[] | undefined {
  const axes = (v ?? '').split('-');
  const all: readonly ParallelAxis[] = ['tp', 'cp', 'ep', 'pp', 'dp'];
  return axes.length === all.length && all.every((a) => axes.includes(a)) ? (axes as ParallelAxis[]) : undefined;
}

/** A parallel degree as stated: a whole number ≥ 1, else unstated. */
function degree(g: Gathered, p: PlanPath): number | undefined {
  const v = g.num(p);
  return v !== undefined && v >= 1 ? Math.round(v) : undefined;
}

/** Removes undefined leaves so derivePlan's defaults apply (the model and sources are kept whole). */
function dropUndefined<T>(v: T): T {
  if (Array.isArray(v) || v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) out[k] = k === 'model' || k === 'sources' || k === 'gpu' || k === 'profile' ? x : dropUndefined(x);
  return out as T;
}

/**
 * The run's planned optimizer steps when a file states a whole number of them (HF's max_steps −1 means "use epochs"),
 * or the sequences it plans (Megatron `--train-samples`).
 */
function stepsOf(g: Gathered): { steps?: number; samples?: number } {
  const whole = (p: PlanPath) => { const v = num(g.facts, p); return v !== undefined && Number.isInteger(v) && v >= 1 && v <= 1e15 ? g.use(p, v) : undefined; };
  const steps = whole('training.steps');
  if (steps !== undefined) return { steps };
  const samples = whole('training.samples');
  return samples !== undefined ? { samples } : {};
}

/**
 * The setting `shardlens.sampleTokens` where the file packs samples that attend only within themselves (the dataset
 * decides their lengths, so only the user can say it); ignored where nothing is packed that way.
 */
function sampleTokensOf(g: Gathered, setting: number | undefined): { sampleTokens?: number } {
  if (!(setting !== undefined && setting > 0) || g.str('training.packing') !== 'varlen') return {};
  g.sources['training.sampleTokens'] = fromSetting('shardlens.sampleTokens');
  return { sampleTokens: setting };
}

/** Megatron's selective recomputation modules, as the comma list its readers write (shared/plan/recomputeModules.ts). */
function recomputeModulesFact(text: string | undefined): { recomputeModules?: MegatronRecomputeModule[] } {
  return text === undefined ? {} : { recomputeModules: parseRecomputeModules(text).modules };
}

function optionalFacts(g: { str<T extends string>(p: PlanPath): T | undefined; num(p: PlanPath): number | undefined; bool(p: PlanPath): boolean | undefined }): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const k of ['optimizerInBackward', 'syncEveryMicroBatch', 'pagedOptimizer', 'previousOutputHeld', 'activationOffload', 'normUpcast'] as const) {
    const b = g.bool(`training.${k}`);
    if (b !== undefined) out[k] = b;
  }
  for (const k of ['regime', 'recomputePolicy', 'modelImpl', 'optimizerImpl', 'lossFusion', 'cudaGraph', 'expertsImpl', 'packing', 'ligerKernels'] as const) {
    const v = g.str<string>(`training.${k}`);
    if (v !== undefined) out[k] = v;
  }
  // torchtitan's per-layer policy: every N-th block checkpointed (selective_ac_option "N", or a memory budget's 1/(1 − b)).
  const every = g.num('training.recomputeEvery');
  if (every !== undefined && Number.isFinite(every) && every >= 1) out.recomputeEvery = every;
  return out;
}
