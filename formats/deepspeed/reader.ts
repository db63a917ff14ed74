/**
 * DeepSpeed config reader: batch keys, ZeRO, offload, precision, optimizer, AutoTP, pipeline.
 * Validation follows DeepSpeed's pydantic models: unknown keys inside strict sections are errors,
 * deprecated keys warnings naming the replacement, `stage3_*` aliases accepted.
 */
import type { FactSink } from '../common/sink';
import { isAuto, isEmpty, locOf, readNum } from '../common/read';
import { shown, toBool } from '../common/text';
import { at, entry, type KEntry, type KNode } from '../common/tree';
import { canonicalDsKey, dsChildren, dsSourceFile, DS_KEYS, isStrictDsSection, type DsKey } from './keys';
import type { PlanPath } from '../../shared/plan/paths';
import type { FactValue } from '../../shared/plan/facts';

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
      // A key the plan reads (readKey → readNum) gets readNum's error at the same value: once is enough there.
      if (n === undefined) { if (!readByTable(node, key, e)) s.diag('ds-type', isStrictDsSection(section) || spec.plan ? 'error' : 'warning', `${written} must be a number.`, v.range); }
      else if (spec.type === 'integer' && !Number.isInteger(n) && !((NUMBERS_BY_HAND.has(key) || (spec.minimum ?? 0) >= 1) && readByTable(node, key, e))) s.diag('ds-type', 'error', `${written} must be a whole number (got ${shown(n)}).`, v.range);
    } else if (spec.type === 'boolean' && v.kind === 'scalar' && typeof v.value !== 'boolean') {
      s.diag('ds-type', isStrictDsSection(section) ? 'error' : 'warning', `${written} must be true or false.`, v.range);
    } else if (spec.enum && v.kind === 'scalar' && spec.type === 'string' && typeof v.value === 'string' && !spec.enum.map(String).map((x) => x.toLowerCase()).includes(v.value.toLowerCase())) {
      s.diag('ds-enum', 'warning', `${written} should be one of ${spec.enum.join(', ')}.`, v.range);
    }
    if (v.kind === 'map' && dsChildren(key).length > 0) validate(s, v, key, depth + 1);
  }
}

/** Number keys read by hand (readStage, the AutoTP size), also through readNum. */
const NUMBERS_BY_HAND: ReadonlySet<string> = new Set(['zero_optimization.stage', 'tensor_parallel.autotp_size']);

/**
 * Whether readDeepSpeed reads this entry through readKey or by hand through readNum, whose readNum says itself when the value is not a number: a
 * table key (a plan input, not read by hand, not deprecated) written under the first of its names that the section has
 * (find's order: the key, then its aliases).
 */
function readByTable(node: KNode, key: string, e: KEntry): boolean {
  const spec = DS_KEYS[key];
  if (!spec?.plan || (spec.read === 'code' && !NUMBERS_BY_HAND.has(key)) || spec.deprecated) return false;
  const base = key.slice(key.lastIndexOf('.') + 1);
  for (const name of [base, ...(spec.aliases ?? [])]) {
    // A key written twice: the last one is read (entry's rule, as JSON parsers keep the last).
    if (name === e.key) return entry(node, name) === e;
    if (entry(node, name)) return false;
  }
  return false;
}

/** Reads the optimizer type into a plan optimizer kind. */
function optimizerKind(t: string): string | undefined {
  const x = t.toLowerCase().replace(/[^a-z0-9]/g, '');
  if (x === 'adamw' || x === 'fusedadam' || x === 'cpuadam') return 'adamw';
  if (x.includes('adam') || x.includes('lamb')) return 'adam';
  if (x === 'lion') return 'lion';
  if (x === 'muon') return 'muon';
  if (x === 'sgd') return 'sgd-momentum';
  if (x === 'adagrad') return 'sgd-momentum';
  return undefined;
}

/** Value readers named by a key's "read" field in keys.json: offload devices, optimizer names, the accumulation dtype. */
const MAPS: Readonly<Record<string, (v: unknown) => FactValue | undefined>> = {
  device: (v) => { const d = typeof v === 'string' ? v.toLowerCase() : ''; return d === 'cpu' || d === 'nvme' || d === 'none' ? d : undefined; },
  optimizer: (v) => (typeof v === 'string' ? optimizerKind(v) : undefined),
  fp32: (v) => (typeof v === 'string' ? v === 'fp32' : undefined),
};

/** The entry of a table key in the tree, under its name or an alias (`stage3_` prefixes may be left out). */
function find(root: KNode, key: string, spec: DsKey): { e: KEntry; written: string } | undefined {
  const parent = key.includes('.') ? key.slice(0, key.lastIndexOf('.') + 1) : '';
  for (const name of [key, ...(spec.aliases ?? []).map((a) => parent + a)]) {
    const e = at(root, name);
    if (e) return { e, written: name };
  }
  return undefined;
}

/** Reads one table key into its plan path: numbers (with "auto" where someone fills it), booleans, mapped strings. */
function readKey(s: FactSink, root: KNode, key: string, spec: DsKey & { plan: PlanPath }, L: (k: string) => string): void {
  const hit = find(root, key, spec);
  if (!hit || isEmpty(hit.e)) return;
  const { e, written } = hit;
  const loc = locOf(e, L(written));
  if (spec.type === 'integer' || spec.type === 'number') {
    // Counts (minimum 1) must be whole numbers; sizes in elements are rounded as DeepSpeed's int() does.
    const whole = (spec.minimum ?? 0) >= 1;
    const map = whole ? undefined : (n: number) => Math.round(n);
    readNum(s, root, written, spec.plan, { auto: !!spec.auto, int: whole, ...(spec.minimum !== undefined ? { min: spec.minimum } : {}), ...(map ? { map } : {}) });
    if (s.facts[spec.plan]?.key === written && L(written) !== written) s.explicit(spec.plan, s.facts[spec.plan]!.value, loc);
  } else if (spec.type === 'boolean') {
    const b = e.value.kind === 'scalar' ? toBool(e.value.value) : undefined;
    if (b !== undefined) s.explicit(spec.plan, b, loc);
  } else {
    const v = e.value.kind === 'scalar' ? (spec.read ? MAPS[spec.read]?.(e.value.value) : e.value.value) : undefined;
    if (v !== undefined && v !== null) s.explicit(spec.plan, v as FactValue, loc);
  }
}

/** The table keys the loop reads (a plan input, not deprecated, not read by hand), found once. */
const TABLE_KEYS: readonly (readonly [string, DsKey & { plan: PlanPath }])[] = Object.entries(DS_KEYS)
  .filter((e): e is [string, DsKey & { plan: PlanPath }] => !!e[1].plan && e[1].read !== 'code' && !e[1].deprecated);

/** DeepSpeed's defaults from the table, with their source, for every key the file leaves out. */
const TABLE_DEFAULTS: readonly (readonly [PlanPath, FactValue, string])[] = TABLE_KEYS
  .filter(([, spec]) => spec.default !== null && spec.default !== undefined)
  .map(([key, spec]) => [spec.plan, spec.default as FactValue, `${DS}: ${key} ${JSON.stringify(spec.default)} (${dsSourceFile(key)})`]);

/**
 * Reads a DeepSpeed config tree into facts, driven by the key table (formats/deepspeed/keys.json: each key's plan path,
 * type, minimum, "auto" filler and default); `label` prefixes key names (e.g. "deepspeed." for inline dicts). The keys
 * marked "read": "code" (ZeRO stage with its legacy boolean form, precision, AutoTP) are read below.
 */
export function readDeepSpeed(s: FactSink, root: KNode | undefined, label = ''): void {
  if (!root || root.kind !== 'map') return;
  validate(s, root, '', 0);
  const L = (k: string) => label + k;
  s.derived('parallel.sharding.style', 'deepspeed', 'DeepSpeed ZeRO');
  const zero = entry(root, 'zero_optimization');
  const zeroMap = zero?.value.kind === 'map';
  for (const [key, spec] of TABLE_KEYS) {
    if (!zeroMap && key.startsWith('zero_optimization.')) continue;
    readKey(s, root, key, spec, L);
  }
  const stage = readStage(s, zero, L);
  readLegacyOffload(s, zero);
  const op = zero?.value.kind === 'map' ? at(zero.value, 'offload_param.device') : undefined;
  if (op && stage !== undefined && stage < 3 && op.value.value !== 'none') {
    s.diag('ds-offload-param-stage', 'warning', `offload_param only works with ZeRO stage 3 (stage is ${stage}); DeepSpeed ignores it.`, op.value.range, ['parallel.sharding.offloadParams', 'parallel.sharding.stage']);
  }
  readPrecision(s, root, L);
  readFusedAdam(s, root, L);
  const tp = readNum(s, root, 'tensor_parallel.autotp_size', 'parallel.tp', { int: true, min: 0 });
  if (tp === 0) delete s.facts['parallel.tp'];
  if (entry(root, 'pipeline')) s.default('parallel.schedule', '1f1b', `${DS}: the pipeline engine always runs 1F1B (deepspeed/runtime/pipe/schedule.py)`);
  // DeepSpeed's defaults, from the table, for every key the file leaves out.
  for (const [plan, value, detail] of TABLE_DEFAULTS) s.default(plan, value, detail);
  s.default('parallel.sharding.stage', 0, `${DS}: stage 0 (${dsSourceFile('zero_optimization')})`);
}

/**
 * Whether DeepSpeed builds FusedAdam: an `optimizer` block of type Adam or AdamW without `params.torch_adam: true`
 * (runtime/engine.py `_configure_basic_optimizer`; offloaded optimizers take DeepSpeedCPUAdam instead). Without ZeRO
 * this picks FP16_Optimizer over FP16_UnfusedOptimizer (`_configure_fp16_optimizer`: `isinstance(optimizer, FusedAdam)`).
 */
function readFusedAdam(s: FactSink, root: KNode, L: (k: string) => string): void {
  const t = at(root, 'optimizer.type');
  const name = t?.value.kind === 'scalar' && typeof t.value.value === 'string' ? t.value.value.toLowerCase() : '';
  if (!t || (name !== 'adam' && name !== 'adamw')) return;
  const torchAdam = at(root, 'optimizer.params.torch_adam');
  const torch = torchAdam?.value.kind === 'scalar' && toBool(torchAdam.value.value) === true;
  s.explicit('parallel.sharding.dsFusedAdam', !torch, locOf(t, L('optimizer.type')));
}

/** zero_optimization.stage (0–3), or the legacy `"zero_optimization": true` meaning stage 1. */
function readStage(s: FactSink, z: KEntry | undefined, L: (k: string) => string): number | undefined {
  if (z && z.value.kind === 'scalar' && typeof z.value.value === 'boolean') {
    const stage = z.value.value ? 1 : 0;
    s.explicit('parallel.sharding.stage', stage, locOf(z, L('zero_optimization')));
    s.diag('ds-deprecated-key', 'warning', '"zero_optimization": true is the legacy form of {"stage": 1}.', z.value.range, ['parallel.sharding.stage']);
    return stage;
  }
  if (!z || z.value.kind !== 'map') return undefined;
  const stage = readNum(s, z.value, 'stage', 'parallel.sharding.stage', { int: true, label: L('zero_optimization.stage') });
  if (stage === undefined || (stage >= 0 && stage <= 3)) return stage;
  s.diag('ds-enum', 'error', `zero_optimization.stage must be 0, 1, 2 or 3 (got ${shown(stage)}).`, at(z.value, 'stage')?.value.range, ['parallel.sharding.stage']);
  delete s.facts['parallel.sharding.stage'];
  return undefined;
}

/** The pre-offload_optimizer keys: `cpu_offload` / `cpu_offload_param` true mean CPU offload. */
function readLegacyOffload(s: FactSink, z: KEntry | undefined): void {
  if (!z || z.value.kind !== 'map') return;
  for (const [p, legacy] of [['parallel.sharding.offloadOptimizer', 'cpu_offload'], ['parallel.sharding.offloadParams', 'cpu_offload_param']] as const) {
    const lg = at(z.value, legacy);
    if (!s.has(p) && lg && lg.value.kind === 'scalar' && lg.value.value === true) s.explicit(p, 'cpu', locOf(lg, `zero_optimization.${legacy}`));
  }
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
