/**
 * torchtitan job TOML in both layouts: [parallelism] + local_batch_size (2025+) and the older [training]/
 * [experimental] keys with batch_size (docs/formats/torchtitan.md; torchtitan/config/job_config.py at 238fa995).
 */
import type { FactSink } from '../common/sink';
import { isEmpty, locOf, readBool, readNum, readOptimizer, readSteps, readStr } from '../common/read';
import { toNumber } from '../common/text';
import { at, type KNode } from '../common/tree';
import type { PlanPath } from '../../shared/plan/paths';
import type { TextRange } from '../../shared/plan/types';

const TT = 'torchtitan default (torchtitan/config/job_config.py)';

/** First of several dotted paths that exists. */
function first(root: KNode, paths: string[]): string | undefined {
  return paths.find((p) => at(root, p) !== undefined);
}

export function readTorchtitan(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const name = readStr(root, 'model.name');
  const flavor = readStr(root, 'model.flavor');
  const fe = at(root, 'model.flavor') ?? at(root, 'model.name');
  if (name && flavor && fe) { s.explicit('model.preset', `${name}:${flavor}`, locOf(fe, 'model.flavor')); s.ref('model', `${name}:${flavor}`, fe.value.range); }
  const hf = at(root, 'model.hf_assets_path');
  if (hf && typeof hf.value.value === 'string') s.ref('model', `${hf.value.value.replace(/\/$/, '')}/config.json`, hf.value.range);

  readNum(s, root, 'training.seq_len', 'training.seqLen', { int: true, min: 1 });
  s.default('training.seqLen', 2048, `${TT}: seq_len 2048`);
  readSteps(s, root, 'training.steps');

  const par = (k: string, old: string[]) => first(root, [`parallelism.${k}`, ...old]);
  const deg = (k: string, old: string[], path: PlanPath) => { const p = par(k, old); return p ? readNum(s, root, p, path, { int: true, min: 1 }) : undefined; };
  // The first layouts put the degrees under [training]; torchtrain (torchtitan's first name) called TP sequence_parallel_degree.
  deg('tensor_parallel_degree', ['training.tensor_parallel_degree', 'training.sequence_parallel_degree'], 'parallel.tp');
  deg('pipeline_parallel_degree', ['experimental.pipeline_parallel_degree', 'training.pipeline_parallel_degree'], 'parallel.pp');
  const cp = deg('context_parallel_degree', ['experimental.context_parallel_degree'], 'parallel.cp') ?? 1;
  deg('expert_parallel_degree', [], 'parallel.ep');
  deg('expert_tensor_parallel_degree', [], 'parallel.etp');
  readEpBackend(s, root);
  const rep = deg('data_parallel_replicate_degree', ['training.data_parallel_replicate_degree'], 'parallel.dpReplicate') ?? 1;
  const shardPath = par('data_parallel_shard_degree', ['training.data_parallel_shard_degree', 'training.data_parallel_degree']);
  const shardE = shardPath ? at(root, shardPath) : undefined;
  const shard = shardE ? toNumber(shardE.value.value) : -1;
  if (shardE && shard !== undefined && shard > 0) s.explicit('parallel.sharding.shardGroupSize', shard, locOf(shardE, shardPath!));
  if (shard !== undefined && shard > 0) s.derived('parallel.dp', rep * shard, 'torchtitan: DP = data_parallel_replicate_degree × data_parallel_shard_degree');
  readBool(s, root, par('enable_async_tensor_parallel', ['experimental.enable_async_tensor_parallel']) ?? 'parallelism.enable_async_tensor_parallel', 'parallel.tpCommOverlap');
  const pp = Number(s.value('parallel.pp') ?? 1);
  readBatch(s, root, pp);
  readPipeline(s, root, pp);

  s.default('parallel.sharding.style', 'fsdp2', `${TT}: FSDP2 fully_shard over the shard dimension`);
  // torchtitan applies fully_shard when FSDP or CP is enabled, over the flattened dp_shard × cp mesh
  // (torchtitan/models/llama3/infra/parallelize.py: `if parallel_dims.fsdp_enabled or parallel_dims.cp_enabled`).
  const unsharded = shard === 1 && cp <= 1;
  s.derived('parallel.sharding.stage', unsharded ? 0 : 3, unsharded ? 'torchtitan: data_parallel_shard_degree 1 and no CP (no sharding)'
    : shard === 1 ? 'torchtitan: FSDP2 shards over dp_shard × cp even with data_parallel_shard_degree 1' : 'torchtitan: FSDP2 shards parameters, gradients and optimizer states');
  const rs = at(root, 'parallelism.fsdp_reshard_after_forward');
  // "default" (reshard unless PP) is derived by derivePlan from the pipeline degree; "always" / "never" are stated.
  const rsv = rs ? String(rs.value.value) : 'default';
  if (rs && (rsv === 'always' || rsv === 'never')) s.explicit('parallel.sharding.reshardAfterForward', rsv === 'always', locOf(rs, 'parallelism.fsdp_reshard_after_forward'));
  // FSDP2 reshard_after_forward=False keeps parameters gathered through the step: ZeRO-2 (SHARD_GRAD_OP).
  if (rs && rsv === 'never' && !unsharded) s.explicit('parallel.sharding.stage', 2, locOf(rs, 'parallelism.fsdp_reshard_after_forward'));
  const off = readBool(s, root, 'training.enable_cpu_offload', 'parallel.sharding.offloadParams', (b) => (b ? 'cpu' : 'none'));
  if (off !== undefined) readBool(s, root, 'training.enable_cpu_offload', 'parallel.sharding.offloadOptimizer', (b) => (b ? 'cpu' : 'none'));

  const mode = at(root, 'activation_checkpoint.mode');
  if (mode && typeof mode.value.value === 'string') {
    const m = mode.value.value;
    const loc = locOf(mode, 'activation_checkpoint.mode');
    if (m === 'memory_budget') readMemoryBudget(s, root, mode.value.range, loc);
    else if (m === 'full' || m === 'none' || m === 'selective') s.explicit('training.recompute', m, loc);
    else s.diag('invalid-value', 'error', `activation_checkpoint.mode should be "selective", "full", "none" or "memory_budget" (got ${JSON.stringify(m)}); torchtitan refuses it. Read as "selective".`, mode.value.range, ['training.recompute']);
  }
  s.default('training.recompute', 'selective', `${TT}: activation_checkpoint.mode "selective"`);
  readSelectiveOption(s, root);
  readFloat8(s, root);
  readNormType(s, root);
  const mpp = at(root, 'training.mixed_precision_param');
  if (mpp && mpp.value.value === 'float32') s.explicit('training.precision', 'fp32', locOf(mpp, 'training.mixed_precision_param'));
  // Without FSDP (data_parallel_shard_degree 1 and no CP) mixed precision is not fully_shard's: torchtitan trains in
  // fp32 when TP or PP is on, and under torch.autocast with fp32 weights otherwise (DDP or one GPU)
  // (torchtitan/distributed/utils.py maybe_enable_amp).
  if (unsharded) {
    const tp = Number(s.value('parallel.tp') ?? 1), pp = Number(s.value('parallel.pp') ?? 1);
    if (tp > 1 || pp > 1) s.derived('training.precision', 'fp32', 'torchtitan: no mixed precision with TP or PP when FSDP is off (maybe_enable_amp)');
    else s.derived('training.regime', 'amp', 'torchtitan: torch.autocast with fp32 weights when FSDP is off (maybe_enable_amp)');
  }
  s.default('training.precision', 'bf16-mixed', `${TT}: mixed_precision_param bfloat16 with fp32 parameters`);
  // FSDP2 reduce-scatters gradients in mixed_precision_reduce (MixedPrecisionPolicy.reduce_dtype; torchtitan's default
  // float32), so the reduce-scatter moves 4 bytes per gradient element unless the file says bfloat16.
  const mpr = at(root, 'training.mixed_precision_reduce');
  const rd = mpr && typeof mpr.value.value === 'string' ? REDUCE_DTYPES[mpr.value.value] : undefined;
  if (mpr && rd) s.explicit('training.gradDtype', rd, locOf(mpr, 'training.mixed_precision_reduce'));
  else if (mpr) s.diag('invalid-value', 'warning', `training.mixed_precision_reduce should be one of ${Object.keys(REDUCE_DTYPES).join(', ')}.`, mpr.value.range, ['training.gradDtype']);
  s.default('training.gradDtype', 'fp32', `${TT}: mixed_precision_reduce float32`);
  readBool(s, root, first(root, ['compile.enable', 'training.compile']) ?? 'compile.enable', 'training.compile');
  s.default('training.compile', false, `${TT}: compile.enable false (eager)`);
  // The loss is compiled when compile.components names "loss" (torchtitan/components/loss.py build_cross_entropy_loss).
  // Without the key it is compiled with the model: components defaults to ["model", "loss"] (config/job_config.py
  // Compile), and before the [compile] section build_loss_fn compiled the loss whenever training.compile was on
  // (PR #1033, April 2025; torchtitan before it, as in its December 2024 benchmarks, compiled the model only).
  const comps = at(root, 'compile.components');
  if (comps && comps.value.kind === 'list' && s.value('training.compile') === true) {
    const names = (comps.value.items ?? []).map((i) => String(i.value));
    s.explicit('training.lossFusion', names.includes('loss') ? 'compiled' : 'none', locOf(comps, 'compile.components'));
  } else if (s.value('training.compile') === true) {
    s.derived('training.lossFusion', 'compiled', `${TT}: compile.components defaults to ["model", "loss"] (the loss compiled with the model since April 2025)`);
  }
  readOptimizer(s, at(root, 'optimizer.name'), 'optimizer.name', readStr(root, 'optimizer.name'));
  s.default('training.optimizer', 'adamw', `${TT}: optimizer AdamW`);
  // optimizer.implementation ("fused", "foreach", "for-loop"; torchtitan ≥ 2025-02) or the older optimizer.fused flag
  // (false: foreach) name the optimizer's kernels; without either the engine's default applies (shared/memory/engine.ts).
  const impl = at(root, 'optimizer.implementation');
  if (impl && typeof impl.value.value === 'string' && OPTIMIZER_IMPLS.includes(impl.value.value)) {
    s.explicit('training.optimizerImpl', impl.value.value, locOf(impl, 'optimizer.implementation'));
  } else if (impl) s.diag('invalid-value', 'warning', `optimizer.implementation should be one of ${OPTIMIZER_IMPLS.join(', ')}.`, impl.value.range, ['training.optimizerImpl']);
  else readBool(s, root, 'optimizer.fused', 'training.optimizerImpl', (b) => (b ? 'fused' : 'foreach'));
}

/** torchtitan's optimizer implementations (torchtitan/components/optimizer.py). */
const OPTIMIZER_IMPLS: readonly string[] = ['fused', 'foreach', 'for-loop'];

/** torchtitan mixed_precision_reduce values → gradient (reduce) dtypes. */
const REDUCE_DTYPES: Readonly<Record<string, 'fp32' | 'bf16'>> = { float32: 'fp32', bfloat16: 'bf16' };

/** torchao float8 recipe names (torchtitan `recipe_name`) → Fp8Spec recipes. */
const RECIPES: Readonly<Record<string, string>> = { tensorwise: 'tensorwise', rowwise: 'rowwise', rowwise_with_gw_hp: 'rowwise', mxfp8: 'mxfp8' };

/** torchtitan's `model.norm_type` values (torchtitan/models/norms.py build_norm). */
const NORM_TYPES: readonly string[] = ['rmsnorm', 'fused_rmsnorm', 'compiled_rmsnorm', 'layernorm', 'np_layernorm'];

/**
 * `model.norm_type` (torchtitan before 2025-04, torchtitan/models/norms.py): "rmsnorm" was torchtitan's own RMSNorm,
 * `x.float()` normalised then `type_as(x)` (eight kernels per norm in eager mode, its fp32 input saved); the Triton
 * "fused_rmsnorm" and the compiled variant are one kernel each. A file that does not say runs today's torch.nn.RMSNorm.
 */
function readNormType(s: FactSink, root: KNode): void {
  const e = at(root, 'model.norm_type');
  if (!e) return;
  const v = typeof e.value.value === 'string' ? e.value.value.toLowerCase() : '';
  if (!NORM_TYPES.includes(v)) {
    s.diag('invalid-value', 'warning', `model.norm_type should be one of ${NORM_TYPES.join(', ')}.`, e.value.range, ['training.normUpcast']);
    return;
  }
  s.explicit('training.normUpcast', v === 'rmsnorm', locOf(e, 'model.norm_type'));
}

/**
 * Float8 training: `model.converters = ["float8"]` (or `["quantize.linear.float8"]`, older `training.enable_float8_linear`)
 * turns on torchao float8 linears; `[quantize.linear.float8]` (older `[float8]`) names the recipe and whether FSDP
 * all-gathers weights in float8 (torchtitan/components/quantization/float8.py).
 */
function readFloat8(s: FactSink, root: KNode): void {
  const conv = at(root, 'model.converters');
  const convs = conv?.value.kind === 'list' ? (conv.value.items ?? []).map((i) => String(i.value)) : conv ? String(conv.value.value).split(',') : [];
  const f8Path = first(root, ['float8.enable_float8_linear', 'training.enable_float8_linear']) ?? 'training.enable_float8_linear';
  const f8 = at(root, f8Path);
  const mx = convs.some((c) => c.includes('mx'));
  if (conv && convs.some((c) => c.includes('float8') || c.includes('mx'))) s.explicit('training.precision', 'fp8-mixed', locOf(conv, 'model.converters'));
  else if (f8 && f8.value.value === true) s.explicit('training.precision', 'fp8-mixed', locOf(f8, f8Path));
  if (s.value('training.precision') !== 'fp8-mixed') return;
  const sect = first(root, ['quantize.linear.float8', 'float8']) ?? 'quantize.linear.float8';
  const name = at(root, `${sect}.recipe_name`);
  const recipe = name && typeof name.value.value === 'string' ? RECIPES[name.value.value.toLowerCase()] : undefined;
  if (name && recipe) s.explicit('training.fp8.recipe', recipe, locOf(name, `${sect}.recipe_name`));
  else if (name) s.diag('invalid-value', 'warning', `${sect}.recipe_name should be one of ${Object.keys(RECIPES).join(', ')}.`, name.value.range, ['training.fp8.recipe']);
  s.default('training.fp8.recipe', mx ? 'mxfp8' : 'tensorwise', `${TT}: torchao float8 tensorwise scaling`);
  readBool(s, root, `${sect}.enable_fsdp_float8_all_gather`, 'training.fp8.paramGather');
  s.default('training.fp8.paramGather', false, `${TT}: enable_fsdp_float8_all_gather false`);
}

/** The local batch's key in either layout: `local_batch_size` (2025+) or `batch_size` (before). */
function localBatchPath(root: KNode): string {
  return first(root, ['training.local_batch_size', 'training.batch_size']) ?? 'training.local_batch_size';
}

/**
 * Batch terms. Without PP the local batch is the micro-batch and `global_batch_size` adds gradient accumulation. With
 * PP the local batch is cut into pipeline micro-batches: of `pipeline_parallel_microbatch_size` sequences (default 1,
 * torchtitan ≥ 2025-04, torchtitan/distributed/pipeline_parallel.py at 238fa995 `build_pipeline_schedule`), or into
 * `pipeline_parallel_microbatches` of them (earlier; default the PP degree, torchtitan/parallelisms/pipelining_utils.py
 * at 9dec370). Either must divide the local batch, or torchtitan raises. With a global batch the accumulation steps ×
 * micro-batches per step follow from it; each accumulation step is one pipeline flush, modelled as one longer schedule.
 */
function readBatch(s: FactSink, root: KNode, pp: number): void {
  const lb = localBatchPath(root);
  const gb = at(root, 'training.global_batch_size');
  const hasGlobal = !!gb && toNumber(gb.value.value) !== -1;
  if (hasGlobal) readNum(s, root, 'training.global_batch_size', 'training.globalBatch', { int: true, min: 1 });
  if (pp <= 1) {
    readNum(s, root, lb, 'training.microBatch', { int: true, min: 1 });
    s.default('training.microBatch', 8, `${TT}: local_batch_size 8`);
    return;
  }
  // The local batch holds the step's pipeline micro-batches; with a global batch the identity derives them instead.
  const local = hasGlobal ? localBatchValue(s, root, lb) : readNum(s, root, lb, 'training.deviceBatch', { int: true, min: 1 });
  if (!hasGlobal && local === undefined && !at(root, lb)) s.default('training.deviceBatch', 8, `${TT}: local_batch_size 8`);
  const localN = local ?? (at(root, lb) ? undefined : 8);
  const sizePath = 'parallelism.pipeline_parallel_microbatch_size';
  const countPath = first(root, ['parallelism.pipeline_parallel_microbatches', 'experimental.pipeline_parallel_microbatches']);
  const sizeE = at(root, sizePath);
  if (sizeE && !isEmpty(sizeE)) {
    const m = readNum(s, root, sizePath, 'training.microBatch', { int: true, min: 1 });
    if (m !== undefined && localN !== undefined && localN % m !== 0) {
      s.diag('invalid-value', 'error', `${lb} ${localN} is not divisible by pipeline_parallel_microbatch_size ${m} (torchtitan refuses it).`, sizeE.value.range, ['training.microBatch']);
    }
    return;
  }
  const countE = countPath ? at(root, countPath) : undefined;
  if (countPath && countE && !isEmpty(countE)) {
    const n = toNumber(countE.value.value);
    if (n === undefined || !Number.isInteger(n) || n < 1) {
      s.diag('invalid-value', 'error', `${countPath} must be a positive whole number of micro-batches.`, countE.value.range, ['training.microBatch']);
      return;
    }
    if (localN === undefined) return;
    if (localN % n !== 0) {
      s.diag('invalid-value', 'error', `${lb} ${localN} is not divisible into ${n} pipeline micro-batches (torchtitan refuses it).`, countE.value.range, ['training.microBatch']);
      return;
    }
    s.derived('training.microBatch', localN / n, `torchtitan: ${lb} ${localN} / ${n} pipeline micro-batches`, locOf(countE, countPath));
    return;
  }
  if (lb === 'training.batch_size') {
    // Before 2025-04 the count defaulted to the PP degree (torchtitan/parallelisms/pipelining_utils.py at 9dec370).
    if (localN !== undefined && localN % pp === 0) s.default('training.microBatch', localN / pp, `torchtitan before 2025-04: ${localN} sequences in ${pp} pipeline micro-batches (pipeline_parallel_microbatches defaults to the PP degree)`);
    else if (localN !== undefined) {
      const e = at(root, lb);
      if (e) s.diag('invalid-value', 'error', `batch_size ${localN} is not divisible into ${pp} pipeline micro-batches (the PP degree, torchtitan's default count); set experimental.pipeline_parallel_microbatches.`, e.value.range, ['training.microBatch']);
    }
    return;
  }
  s.default('training.microBatch', 1, `${TT}: pipeline_parallel_microbatch_size 1`);
}

/** The local batch as a number without recording it (its value is checked as readNum would). */
function localBatchValue(s: FactSink, root: KNode, lb: string): number | undefined {
  const e = at(root, lb);
  if (!e || isEmpty(e)) return undefined;
  const n = toNumber(e.value.value);
  if (n === undefined || !Number.isInteger(n) || n < 1) {
    s.diag('invalid-value', 'error', `${lb} must be a positive whole number (got ${String(e.value.value)}).`, e.value.range, ['training.microBatch']);
    return undefined;
  }
  return n;
}

/** torch.distributed.pipelining schedules that run several stages per rank (PipelineScheduleMulti). */
const MULTI_STAGE = ['interleaved1f1b', 'interleaved_1f1b', 'loopedbfs', 'interleavedzerobubble'];

/**
 * Schedule and stages per rank. Multi-stage schedules get 2 stages per rank unless `pipeline_parallel_layers_per_stage`
 * (→ ⌈(L + 2) / it⌉ stages, resolved with the model) or the older `pipeline_parallel_split_points` (stages = points + 1)
 * say otherwise (torchtitan/distributed/pipeline_parallel.py at 238fa995; pipelining_utils.py
 * `generate_split_points` at 9dec370). The V schedules (ZBVZeroBubble, DualPipeV) are timed as zero-bubble 1F1B.
 */
function readPipeline(s: FactSink, root: KNode, pp: number): void {
  const schedPath = first(root, ['parallelism.pipeline_parallel_schedule', 'experimental.pipeline_parallel_schedule']) ?? 'parallelism.pipeline_parallel_schedule';
  const sched = at(root, schedPath);
  const name = sched && typeof sched.value.value === 'string' ? sched.value.value.toLowerCase() : '1f1b';
  const multi = MULTI_STAGE.includes(name);
  if (sched && typeof sched.value.value === 'string') {
    s.explicit('parallel.schedule', multi ? 'interleaved' : name === 'gpipe' ? 'gpipe' : name.includes('zb') || name.includes('dualpipe') ? 'zb-h1' : '1f1b', locOf(sched, schedPath));
  }
  s.default('parallel.schedule', '1f1b', `${TT}: pipeline_parallel_schedule 1F1B`);
  for (const [key, path] of [['first', 'parallel.firstStageLess'], ['last', 'parallel.lastStageLess']] as const) {
    readNum(s, root, `parallelism.pipeline_parallel_${key}_stage_less_layers`, path, { int: true, min: 0 });
  }
  if (pp <= 1) return;
  const lpsPath = 'parallelism.pipeline_parallel_layers_per_stage';
  if (readNum(s, root, lpsPath, 'parallel.vppLayers', { int: true, min: 1 }) !== undefined) return;
  const pointsPath = first(root, ['parallelism.pipeline_parallel_split_points', 'experimental.pipeline_parallel_split_points']);
  const points = pointsPath ? at(root, pointsPath) : undefined;
  if (pointsPath && points && points.value.kind === 'list' && (points.value.items ?? []).length > 0) {
    const stages = (points.value.items ?? []).length + 1;
    if (stages % pp === 0) s.explicit('parallel.vpp', stages / pp, locOf(points, pointsPath));
    else s.diag('invalid-value', 'error', `${stages} pipeline stages (${stages - 1} split points + 1) do not divide over PP ${pp} (torchtitan refuses it).`, points.value.range, ['parallel.vpp']);
    return;
  }
  if (pointsPath && points && !isEmpty(points) && points.value.kind !== 'list') {
    s.diag('invalid-value', 'warning', `${pointsPath} should be a list of module names (e.g. ["layers.8", "layers.16"]); it is not read.`, points.value.range, ['parallel.vpp']);
  }
  if (multi) s.default('parallel.vpp', 2, `${TT}: ${String(sched?.value.value)} runs 2 stages per PP rank without pipeline_parallel_layers_per_stage`);
}

/**
 * torchtitan's memory_budget mode (torchtitan/distributed/activation_checkpoint.py MemoryBudgetAC): torch.compile's
 * partitioner keeps the activation memory at full recomputation's plus memory_budget × (its default's − full's)
 * (`torch._functorch.config.activation_memory_budget`: 0.0 full recomputation, 1.0 compile's default; PyTorch blog
 * "Activation checkpointing techniques"), recomputing the cheapest ops first. Modelled with the per-layer policy: a
 * fraction 1 − b of the blocks checkpointed whole (every 1/(1 − b)-th block), the activation memory the budget
 * targets; the recompute time is an upper bound. torchtitan refuses the mode without the model compiled.
 */
function readMemoryBudget(s: FactSink, root: KNode | undefined, modeRange: TextRange, modeLoc: ReturnType<typeof locOf>): void {
  const e = at(root, 'activation_checkpoint.memory_budget');
  const raw = e && !isEmpty(e) ? e.value.value : undefined;
  const b = raw === undefined ? 0.5 : typeof raw === 'number' ? raw : Number.NaN;
  const range = e && !isEmpty(e) ? e.value.range : modeRange;
  const loc = e && !isEmpty(e) ? locOf(e, 'activation_checkpoint.memory_budget') : modeLoc;
  const enable = at(root, 'compile.enable')?.value.value;
  const comps = at(root, 'compile.components');
  const model = !comps || comps.value.kind !== 'list' || (comps.value.items ?? []).some((x) => x.value === 'model');
  if (enable !== true || !model) {
    s.diag('invalid-value', 'error', 'activation_checkpoint.mode "memory_budget" needs the model compiled: set compile.enable = true with "model" in compile.components (torchtitan refuses to start otherwise).', modeRange, ['training.compile']);
  }
  if (!(b >= 0 && b <= 1)) {
    s.diag('invalid-value', 'error', `activation_checkpoint.memory_budget should be a number from 0 (full recomputation) to 1 (none), not ${JSON.stringify(raw)}; read as selective recomputation.`, range, ['training.recompute']);
    return;
  }
  if (b === 0 || b === 1) {
    s.explicit('training.recompute', b === 0 ? 'full' : 'none', loc);
    return;
  }
  const every = 1 / (1 - b);
  s.explicit('training.recompute', 'selective', loc);
  s.explicit('training.recomputePolicy', 'torchtitan-layer', loc);
  s.explicit('training.recomputeEvery', every, loc);
  s.diag('torchtitan-memory-budget', 'info', `memory_budget ${b}: modelled as ${Math.round((1 - b) * 100)} % of the blocks recomputed whole (every ${Number(every.toFixed(2))}-th), the activation memory torch.compile's partitioner targets; the recompute time is an upper bound (the partitioner recomputes the cheapest ops first).`, range, ['training.recompute']);
}

/**
 * torchtitan's selective policy (torchtitan/distributed/activation_checkpoint.py, `selective_ac_option`): "op" saves the
 * outputs of the policy's ops (every second matmul, SDPA) and recomputes the rest; a positive integer N checkpoints
 * every N-th block whole; the default is "2". Read only under mode "selective" (the option is ignored otherwise).
 */
function readSelectiveOption(s: FactSink, root: KNode | undefined): void {
  if (s.value('training.recompute') !== 'selective' || s.has('training.recomputePolicy')) return;
  const e = at(root, 'activation_checkpoint.selective_ac_option');
  if (!e || isEmpty(e)) {
    s.default('training.recomputePolicy', 'torchtitan-layer', `${TT}: activation_checkpoint.selective_ac_option "2" (every second block)`);
    s.default('training.recomputeEvery', 2, `${TT}: activation_checkpoint.selective_ac_option "2"`);
    return;
  }
  const raw = e.value.kind === 'scalar' ? String(e.value.value).trim() : '';
  const loc = locOf(e, 'activation_checkpoint.selective_ac_option');
  if (raw === 'op') { s.explicit('training.recomputePolicy', 'torchtitan-op', loc); return; }
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1)) {
    s.diag('invalid-value', 'error', `activation_checkpoint.selective_ac_option should be "op" or a positive whole number of blocks (got ${e.value.kind === 'map' ? 'a table' : e.value.kind === 'list' ? 'a list' : raw ? JSON.stringify(raw) : 'an empty value'}).`, e.value.range, ['training.recomputePolicy']);
    return;
  }
  s.explicit('training.recomputePolicy', 'torchtitan-layer', loc);
  s.explicit('training.recomputeEvery', n, loc);
}


/**
 * parallelism.expert_parallel_comm_backend: "standard" (PyTorch all-to-all over NCCL), "deepep" or "hybridep"
 * (torchtitan/distributed/deepep; the MoE models' parallelize.py).
 */
function readEpBackend(s: FactSink, root: KNode): void {
  const e = at(root, 'parallelism.expert_parallel_comm_backend');
  if (!e) return;
  const v = e.value.value;
  const to = typeof v === 'string' ? ({ standard: 'alltoall', deepep: 'deepep', hybridep: 'hybridep' } as Record<string, string>)[v] : undefined;
  if (to) s.explicit('parallel.epDispatcher', to, locOf(e, 'parallelism.expert_parallel_comm_backend'));
  else s.diag('invalid-value', 'warning', 'parallelism.expert_parallel_comm_backend should be one of standard, deepep, hybridep.', e.value.range, ['parallel.epDispatcher']);
}
