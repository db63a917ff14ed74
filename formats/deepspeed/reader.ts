/**
 * DeepSpeed config reader: batch keys, ZeRO, offload, precision, optimizer, AutoTP, pipeline.
 * Validation follows DeepSpeed's pydantic models: unknown keys inside strict sections are errors,
 * deprecated keys warnings naming the replacement, `stage3_*` aliases accepted.
 */
import type { FactSink } from '../common/sink';
import { isAuto, isEmpty, locOf, readNum } from '../common/read';
import { shown, toBool } from '../common/text';
import { at, entry, type KNode } from '../common/tree';
import { canonicalDsKey, dsChildren, dsSourceFile, DS_KEYS, isStrictDsSection } from './keys';
import type { PlanPath } from '../../shared/plan/paths';

const DS = 'DeepSpeed default';

/** Checks every key against the table: unknown, deprecated, wrong type, "auto" where nothing fills it. */
function validate(s: FactSink, node: KNode, section: string, depth: number): void {
  if (node.kind !== 'map' || depth > 4) return;
  for (const e of node.entries ?? []) {
    const written = section ? `${section}.${e.key}` : e.key;
    const key = canonicalDsKey(written);
    const spec = DS_KEYS[key];
    if (!spec) {
      if (e.key.startsWith('_')) continue;
      const trimmed = e.key.trim();
      const hint = trimmed !== e.key && DS_KEYS[section ? `${section}.${trimmed}` : trimmed] ? ` Did you mean "${trimmed}" (the key has stray spaces)?` : '';
      if (isStrictDsSection(section)) {
        s.diag('ds-unknown-key', 'error', `DeepSpeed rejects unknown key "${e.key}" in "${section}" (extra fields are forbidden).${hint}`, e.keyRange);
      } else if (section === '') {
        s.diag('ds-unknown-key', hint ? 'warning' : 'info', `DeepSpeed ignores unknown top-level key "${e.key}".${hint}`, e.keyRange);
      }
      continue;
    }
    if (spec.deprecated) {
      s.diag('ds-deprecated-key', 'warning', `"${written}" is deprecated; use "${spec.deprecated}".`, e.keyRange);
    }
    const v = e.value;
    if (isAuto(e)) {
      if (!spec.auto) {
        s.diag('ds-auto-unresolved', spec.plan ? 'warning' : 'info', `"auto" for ${written} is not filled by the HF Trainer or Accelerate; unless your launcher fills it, DeepSpeed rejects it.`, v.range);
      }
      continue;
    }
    if (isEmpty(e)) continue;
    if ((spec.type === 'integer' || spec.type === 'number') && v.kind === 'scalar') {
      const n = typeof v.value === 'number' ? v.value : undefined;
      // A number the estimate needs that is not one ("NaN", "four"): DeepSpeed's config validation rejects it, and an
      // estimate from a default would be shown with confidence, so it is an error.
      if (n === undefined) s.diag('ds-type', isStrictDsSection(section) || spec.plan ? 'error' : 'warning', `${written} must be a number.`, v.range);
      else if (spec.type === 'integer' && !Number.isInteger(n)) s.diag('ds-type', 'error', `${written} must be a whole number (got ${shown(n)}).`, v.range);
    } else if (spec.type === 'boolean' && v.kind === 'scalar' && typeof v.value !== 'boolean') {
      s.diag('ds-type', isStrictDsSection(section) ? 'error' : 'warning', `${written} must be true or false.`, v.range);
    } else if (spec.enum && v.kind === 'scalar' && spec.type === 'string' && typeof v.value === 'string' && !spec.enum.map(String).map((x) => x.toLowerCase()).includes(v.value.toLowerCase())) {
      s.diag('ds-enum', 'warning', `${written} should be one of ${spec.enum.join(', ')}.`, v.range);
    }
    if (v.kind === 'map' && dsChildren(key).length > 0) validate(s, v, key, depth + 1);
  }
}

/** Reads the optimizer type into a plan optimizer kind. */
function optimizerKind(t: string): string | undefined {
  const x = t.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (x === 'adamw' || x === 'fusedadam' || x === 'cpuadam') return 'adamw';
  if (x.includes('adam') || x.includes('lamb')) return 'adam';
  if (x === 'lion') return 'lion';
  if (x === 'sgd') return 'sgd-momentum';
  if (x === 'adagrad') return 'sgd-momentum';
  return undefined;
}

/** Reads a DeepSpeed config tree into facts; `label` prefixes key names (e.g. "deepspeed." for inline dicts). */
export function readDeepSpeed(s: FactSink, root: KNode | undefined, label = ''): void {
  if (!root || root.kind !== 'map') return;
  validate(s, root, '', 0);
  const L = (k: string) => label + k;
  readNum(s, root, 'train_batch_size', 'training.globalBatch', { auto: true, int: true, min: 1 });
  readNum(s, root, 'train_micro_batch_size_per_gpu', 'training.microBatch', { auto: true, int: true, min: 1 });
  readNum(s, root, 'gradient_accumulation_steps', 'training.gradAccum', { auto: true, int: true, min: 1 });
  readNum(s, root, 'sequence_parallel_size', 'parallel.cp', { int: true, min: 1 });

  s.derived('parallel.sharding.style', 'deepspeed', 'DeepSpeed ZeRO');
  const z = entry(root, 'zero_optimization');
  let stage: number | undefined;
  if (z && z.value.kind === 'scalar' && typeof z.value.value === 'boolean') {
    stage = z.value.value ? 1 : 0;
    s.explicit('parallel.sharding.stage', stage, locOf(z, L('zero_optimization')));
    s.diag('ds-deprecated-key', 'warning', '"zero_optimization": true is the legacy form of {"stage": 1}.', z.value.range, ['parallel.sharding.stage']);
  } else if (z && z.value.kind === 'map') {
    const zn = z.value;
    stage = readNum(s, zn, 'stage', 'parallel.sharding.stage', { int: true });
    if (stage !== undefined && (stage < 0 || stage > 3)) {
      s.diag('ds-enum', 'error', `zero_optimization.stage must be 0, 1, 2 or 3 (got ${shown(stage)}).`, at(zn, 'stage')?.value.range, ['parallel.sharding.stage']);
      delete s.facts['parallel.sharding.stage'];
      stage = undefined;
    }
    const num = (k: string, p: PlanPath) => {
      const e = at(zn, k) ?? at(zn, k.replace(/^stage3_/, ''));
      if (!e) return;
      const written = e === at(zn, k) ? k : k.replace(/^stage3_/, '');
      if (isAuto(e)) s.explicit(p, 'auto', locOf(e, L(`zero_optimization.${written}`)));
      else if (e.value.kind === 'scalar' && typeof e.value.value === 'number' && e.value.value >= 0) s.explicit(p, Math.round(e.value.value), locOf(e, L(`zero_optimization.${written}`)));
    };
    num('reduce_bucket_size', 'parallel.sharding.reduceBucketElems');
    num('allgather_bucket_size', 'parallel.sharding.allgatherBucketElems');
    num('stage3_prefetch_bucket_size', 'parallel.sharding.prefetchBucketElems');
    num('stage3_max_live_parameters', 'parallel.sharding.maxLiveParams');
    const ov = at(zn, 'overlap_comm');
    const ovb = ov && ov.value.kind === 'scalar' ? toBool(ov.value.value) : undefined;
    if (ov && ovb !== undefined) s.explicit('parallel.sharding.overlapComm', ovb, locOf(ov, L('zero_optimization.overlap_comm')));
    for (const [sub, p, legacy] of [['offload_optimizer', 'parallel.sharding.offloadOptimizer', 'cpu_offload'], ['offload_param', 'parallel.sharding.offloadParams', 'cpu_offload_param']] as const) {
      const dev = at(zn, `${sub}.device`);
      if (dev && dev.value.kind === 'scalar' && typeof dev.value.value === 'string') {
        const d = dev.value.value.toLowerCase();
        if (d === 'cpu' || d === 'nvme' || d === 'none') s.explicit(p, d, locOf(dev, L(`zero_optimization.${sub}.device`)));
      } else {
        const lg = at(zn, legacy);
        if (lg && lg.value.kind === 'scalar' && lg.value.value === true) s.explicit(p, 'cpu', locOf(lg, L(`zero_optimization.${legacy}`)));
      }
    }
    const op = at(zn, 'offload_param.device');
    if (op && stage !== undefined && stage < 3 && op.value.value !== 'none') {
      s.diag('ds-offload-param-stage', 'warning', `offload_param only works with ZeRO stage 3 (stage is ${stage}); DeepSpeed ignores it.`, op.value.range, ['parallel.sharding.offloadParams', 'parallel.sharding.stage']);
    }
  }
  const st = stage ?? 0;
  const zsrc = `${DS} (${dsSourceFile('zero_optimization')})`;
  s.default('parallel.sharding.stage', 0, `${DS}: stage 0 (${dsSourceFile('zero_optimization')})`);
  s.default('parallel.sharding.overlapComm', st === 3, `${DS}: overlap_comm is ${st === 3 ? 'on for stage 3' : 'off below stage 3'} (${dsSourceFile('zero_optimization')})`);
  s.default('parallel.sharding.reduceBucketElems', 5e8, zsrc);
  s.default('parallel.sharding.allgatherBucketElems', 5e8, zsrc);
  s.default('parallel.sharding.prefetchBucketElems', 5e7, zsrc);
  s.default('parallel.sharding.maxLiveParams', 1e9, zsrc);
  s.default('parallel.sharding.offloadOptimizer', 'none', `${DS} (${dsSourceFile('zero_optimization.offload')})`);
  s.default('parallel.sharding.offloadParams', 'none', `${DS} (${dsSourceFile('zero_optimization.offload')})`);

  readPrecision(s, root, L);
  const ot = at(root, 'optimizer.type');
  if (ot && ot.value.kind === 'scalar' && typeof ot.value.value === 'string') {
    const k = optimizerKind(ot.value.value);
    if (k) s.explicit('training.optimizer', k, locOf(ot, L('optimizer.type')));
  }
  const ga = at(root, 'data_types.grad_accum_dtype');
  if (ga && ga.value.kind === 'scalar' && typeof ga.value.value === 'string') s.explicit('training.fp32GradAccum', ga.value.value === 'fp32', locOf(ga, L('data_types.grad_accum_dtype')));
  const tp = readNum(s, root, 'tensor_parallel.autotp_size', 'parallel.tp', { int: true, min: 0 });
  if (tp === 0) delete s.facts['parallel.tp'];
  const pps = at(root, 'pipeline.stages');
  if (pps && pps.value.kind === 'scalar' && typeof pps.value.value === 'number') readNum(s, root, 'pipeline.stages', 'parallel.pp', { int: true, min: 1 });
  if (entry(root, 'pipeline')) s.default('parallel.schedule', '1f1b', `${DS}: the pipeline engine always runs 1F1B (deepspeed/runtime/pipe/schedule.py)`);
}

/** fp16 / bf16 / bfloat16 → training.precision, flagging both on at once. */
function readPrecision(s: FactSink, root: KNode, L: (k: string) => string): void {
  const on: { name: string; e: NonNullable<ReturnType<typeof at>> }[] = [];
  for (const name of ['fp16', 'bf16', 'bfloat16']) {
    const e = at(root, `${name}.enabled`);
    if (!e) continue;
    if (isAuto(e)) { if (!s.has('training.precision')) s.explicit('training.precision', 'auto', locOf(e, L(`${name}.enabled`))); continue; }
    if (e.value.kind === 'scalar' && toBool(e.value.value) === true) on.push({ name, e });
  }
  if (on.length > 1 && on.some((x) => x.name === 'fp16') && on.some((x) => x.name !== 'fp16')) {
    for (const x of on) s.diag('ds-fp16-bf16', 'error', 'fp16 and bf16 are both enabled; DeepSpeed allows only one.', x.e.value.range, ['training.precision']);
  }
  const first = on[0];
  if (first) s.explicit('training.precision', first.name === 'fp16' ? 'fp16-mixed' : 'bf16-mixed', locOf(first.e, L(`${first.name}.enabled`)));
  s.default('training.precision', 'fp32', `${DS}: fp16 and bf16 off (${dsSourceFile('bf16')})`);
}
