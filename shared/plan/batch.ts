/**
 * The batch identity, micro batch × accumulation × DP = global batch, solved from whichever terms a plan states
 * (docs/framework-facts.md#deepspeed-batch-arithmetic), and what DP rests on when the files leave part of it to an
 * assumption.
 */
import type { PlanPath } from './paths';
import type { InputSource, Problem } from './types';

export interface Batch { micro: number; gas: number; global: number; why: { micro: string; gas: string; global: string } }

/**
 * What DP rests on when it is not all stated: an assumed GPU count (`gpus`, with the model-parallel product `mp`) and
 * model-parallel degrees the files leave to something ShardLens does not read (`split`: "TP 1, PP 1 and CP 1").
 */
export interface AssumedDivisors { readonly gpus?: number; readonly mp: number; readonly split?: string }

/** "the assumed 8 GPUs and the assumed TP 1 and CP 1: set what you run". */
function assumedDivisorsText(a: AssumedDivisors): string {
  const parts = [a.gpus !== undefined ? `the assumed ${a.gpus} GPUs` : '', a.split ? `the assumed ${a.split}` : ''].filter(Boolean);
  return `${parts.join(' and ')}: set ${a.gpus !== undefined && !a.split ? 'the GPU count' : 'what'} you run`;
}

/**
 * The batch identity with whichever terms are stated; problems when the stated terms disagree or do not divide.
 * `microDefault` says why the micro batch is 1 when nothing gives it.
 */
export function deriveBatch(m: number | undefined, g: number | undefined, B: number | undefined, dp: number, problems: Problem[], microDefault: string, assumedWorld?: AssumedDivisors): Batch {
  const why = { micro: microDefault, gas: 'no gradient accumulation given: 1', global: '' };
  // DP from an assumed GPU count or assumed model-parallel degrees: the file may be meant for others, so a mismatch is
  // a warning that says what it rests on.
  const onAssumed = assumedWorld ? ` with ${assumedDivisorsText(assumedWorld)}` : '';
  if (m !== undefined && g !== undefined && B !== undefined) {
    if (m * g * dp !== B) {
      // With an assumed GPU count the file's own batch may be right: it then states the DP it is meant for.
      const implied = B / (m * g);
      const runs = assumedWorld?.gpus !== undefined && Number.isInteger(implied) && implied >= 1
        ? ` with the assumed ${assumedWorld.gpus} GPUs; the file's batch is for DP ${implied} (${implied * assumedWorld.mp} GPUs): set the GPU count if that is what you run`
        : onAssumed;
      problems.push({ code: 'batch-identity', severity: runs ? 'warning' : 'error', paths: ['training.globalBatch', 'training.microBatch', 'training.gradAccum', 'parallel.dp'],
        message: `Batch identity broken: global ${B} ≠ micro ${m} × accumulation ${g} × DP ${dp} = ${m * g * dp}${runs}.` });
    }
    return { micro: m, gas: g, global: B, why };
  }
  if (B !== undefined && m !== undefined) {
    const q = B / (m * dp);
    if (!Number.isInteger(q) || q < 1) problems.push({ code: 'batch-identity', severity: onAssumed ? 'warning' : 'error', paths: ['training.globalBatch', 'training.microBatch', 'parallel.dp'], message: `Global batch ${B} is not a multiple of micro ${m} × DP ${dp} = ${m * dp}${onAssumed}.` });
    return { micro: m, gas: Math.max(1, Math.floor(q)), global: B, why: { ...why, gas: `global ${B} / (micro ${m} × DP ${dp})` } };
  }
  if (B !== undefined && g !== undefined) {
    const q = B / (g * dp);
    if (!Number.isInteger(q) || q < 1) problems.push({ code: 'batch-identity', severity: onAssumed ? 'warning' : 'error', paths: ['training.globalBatch', 'training.gradAccum', 'parallel.dp'], message: `Global batch ${B} is not a multiple of accumulation ${g} × DP ${dp} = ${g * dp}${onAssumed}.` });
    return { micro: Math.max(1, Math.floor(q)), gas: g, global: B, why: { ...why, micro: `global ${B} / (DP ${dp} × accumulation ${g})` } };
  }
  if (B !== undefined) {
    const q = B / dp;
    if (!Number.isInteger(q) || q < 1) problems.push({ code: 'batch-identity', severity: onAssumed ? 'warning' : 'error', paths: ['training.globalBatch', 'parallel.dp'], message: `Global batch ${B} is not divisible by DP ${dp}${onAssumed}.` });
    return { micro: Math.max(1, Math.floor(q)), gas: 1, global: B, why: { ...why, micro: `global ${B} / DP ${dp} (accumulation 1)`, gas: 'only the global batch is set: accumulation 1' } };
  }
  const micro = m ?? 1;
  const gas = g ?? 1;
  return { micro, gas, global: micro * gas * dp, why: { ...why, global: `micro ${micro} × accumulation ${gas} × DP ${dp}` } };
}

/** The model-parallel degrees a reader could only assume (a Megatron-Bridge recipe's), as "TP 1, PP 1 and CP 1". */
export function assumedSplit(p: Partial<Record<'tp' | 'pp' | 'cp', number>> | undefined, sources: Readonly<Partial<Record<PlanPath, InputSource>>> | undefined): string | undefined {
  const named = ([['parallel.tp', 'TP', p?.tp], ['parallel.pp', 'PP', p?.pp], ['parallel.cp', 'CP', p?.cp]] as const)
    .filter(([path]) => sources?.[path]?.kind === 'assumed').map(([, label, v]) => `${label} ${v ?? 1}`);
  return named.length ? named.length === 1 ? named[0] : `${named.slice(0, -1).join(', ')} and ${named[named.length - 1]}` : undefined;
}
