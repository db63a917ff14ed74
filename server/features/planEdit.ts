/**
 * Changed copies of a plan for "what if" figures: set one dotted path immutably, and the neighbouring changes that
 * keep the run the same size (doubling TP halves DP; halving the micro batch doubles accumulation).
 */
import type { Plan } from '../../shared/plan/types';
import type { PlanPath } from '../../shared/plan/paths';

type Json = Record<string, unknown>;

/** A copy of `obj` with the dotted `path` set to `value`; other branches are shared. */
export function setPath<T extends object>(obj: T, path: string, value: unknown): T {
  const [head, ...rest] = path.split('.');
  if (!head) return obj;
  const o = obj as unknown as Json;
  const next = rest.length ? setPath((o[head] ?? {}) as Json, rest.join('.'), value) : value;
  return { ...o, [head]: next } as unknown as T;
}

/** Reads a dotted path. */
export function getPath(obj: object, path: string): unknown {
  let cur: unknown = obj;
  for (const k of path.split('.')) cur = cur !== null && typeof cur === 'object' ? (cur as Json)[k] : undefined;
  return cur;
}

/** One alternative value of a key, with the plan it gives. */
export interface Variant {
  /** E.g. "stage 2 → 3". */
  readonly label: string;
  readonly path: PlanPath;
  readonly value: number | string;
  readonly plan: Plan;
}

function stageVariant(plan: Plan, to: number): Variant {
  const from = plan.parallel.sharding.stage;
  return {
    label: `stage ${from} → ${to}`, path: 'parallel.sharding.stage', value: to,
    plan: setPath(plan, 'parallel.sharding.stage', to),
  };
}

/** Moves a factor of 2 between DP and a model-parallel axis so the GPU count stays. */
function axisVariant(plan: Plan, axis: 'tp' | 'pp', to: number): Variant | undefined {
  const from = plan.parallel[axis];
  const dp = (plan.parallel.dp * from) / to;
  if (!Number.isInteger(dp) || dp < 1) return undefined;
  let p = setPath(plan, `parallel.${axis}`, to);
  p = setPath(p, 'parallel.dp', dp);
  p = setPath(p, 'parallel.sharding.shardGroupSize', Math.max(1, Math.round((plan.parallel.sharding.shardGroupSize * from) / to)));
  p = setPath(p, 'training.gradAccum', Math.max(1, Math.round((plan.training.gradAccum * from) / to)));
  return { label: `${axis.toUpperCase()} ${from} → ${to}`, path: `parallel.${axis}`, value: to, plan: p };
}

function microVariant(plan: Plan, to: number): Variant | undefined {
  const { microBatch: b, gradAccum: m } = plan.training;
  const accum = (b * m) / to;
  if (!Number.isInteger(accum) || accum < 1 || to < 1) return undefined;
  let p = setPath(plan, 'training.microBatch', to);
  p = setPath(p, 'training.gradAccum', accum);
  return { label: `micro batch ${b} → ${to} (accumulation ${m} → ${accum})`, path: 'training.microBatch', value: to, plan: p };
}

const RECOMPUTE = ['none', 'selective', 'full'] as const;

/** Sensible alternatives for the key at `path` (next and previous setting), each a whole plan. */
export function variantsFor(plan: Plan, path: PlanPath): Variant[] {
  const out: (Variant | undefined)[] = [];
  const cur = getPath(plan, path);
  if (typeof cur === 'number' && !(Number.isInteger(cur) && cur >= 0 && cur < 1e9)) return [];
  switch (path) {
    case 'parallel.sharding.stage': {
      const s = plan.parallel.sharding.stage;
      if (s < 3) out.push(stageVariant(plan, s + 1));
      if (s > 0) out.push(stageVariant(plan, s - 1));
      break;
    }
    case 'parallel.tp':
    case 'parallel.pp': {
      const axis = path === 'parallel.tp' ? 'tp' : 'pp';
      out.push(axisVariant(plan, axis, plan.parallel[axis] * 2));
      if (plan.parallel[axis] % 2 === 0) out.push(axisVariant(plan, axis, plan.parallel[axis] / 2));
      break;
    }
    case 'training.microBatch': {
      const b = plan.training.microBatch;
      if (b % 2 === 0) out.push(microVariant(plan, b / 2));
      out.push(microVariant(plan, b * 2));
      break;
    }
    case 'training.recompute': {
      const i = RECOMPUTE.indexOf(plan.training.recompute);
      for (const j of [i + 1, i - 1]) {
        const to = RECOMPUTE[j];
        if (to) out.push({ label: `recompute ${plan.training.recompute} → ${to}`, path, value: to, plan: setPath(plan, path, to) });
      }
      break;
    }
    case 'parallel.sharding.offloadOptimizer':
    case 'parallel.sharding.offloadParams': {
      const to = cur === 'none' ? 'cpu' : 'none';
      out.push({ label: `offload ${String(cur)} → ${to}`, path, value: to, plan: setPath(plan, path, to) });
      break;
    }
    case 'training.seqLen': {
      const s = plan.training.seqLen;
      out.push({ label: `sequence ${s} → ${s * 2}`, path, value: s * 2, plan: setPath(plan, path, s * 2) });
      break;
    }
  }
  return out.filter((v): v is Variant => v !== undefined);
}
