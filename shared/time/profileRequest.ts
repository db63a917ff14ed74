/**
 * What `shardlens profile` measures for a set of plans: the GEMM shapes their layers run (forward, input-gradient and
 * weight-gradient GEMMs of QKV, output projection, MLP and LM head at the plans' tokens and TP splits), the attention
 * shapes (sequence chunk, head dim, mask), the HBM copy bandwidth, and every collective they issue (kind, group size,
 * members per node) over message sizes around the plans' own. Pure: the CLI writes it for probe/profile_sweep.py.
 */
import type { Plan } from '../plan/types';
import { collectivesPerStep } from './collectives';
import { posInt, tokensPerRank } from './shape';
import { mlaProjections } from '../model/mla';
import { projectionWidths } from './projections';

export interface ProfileRequest {
  readonly kind: 'shardlens-profile-request';
  readonly device: 'auto' | 'cpu';
  readonly reps: number;
  readonly memoryBytes: number;
  readonly gemm: readonly { readonly dtype: 'bf16' | 'fp8'; readonly m: number; readonly n: number; readonly k: number }[];
  readonly attention: readonly { readonly seq: number; readonly headDim: number; readonly causal: boolean; readonly heads: number }[];
  readonly collectives: readonly { readonly kind: string; readonly groupSize: number; readonly perNode: number; readonly bytes: readonly number[] }[];
}

export interface ProfileRequestOptions {
  /** CPU plumbing runs (CI): every shape and message shrunk to a few hundred elements; the numbers mean nothing. */
  readonly quick?: boolean;
  readonly device?: 'auto' | 'cpu';
  /** Ranks the sweep runs on: collectives of larger groups cannot be measured there and are left out. */
  readonly ranks?: number;
  readonly gpusPerNode?: number;
}

const MAX_BYTES = 2 ** 30;

/** The linear GEMMs (M, N, K) of one layer of a plan on one rank, forward and both gradients, plus the LM head. */
function planGemms(plan: Plan): [number, number, number][] {
  const m = plan.model;
  const tp = posInt(plan.parallel.tp);
  const T = tokensPerRank(plan);
  const q = Math.ceil(m.heads / tp) * m.headDim;
  const kv = (m.kvHeads % tp === 0 ? m.kvHeads / tp : 1) * m.headDim;
  const ffn = m.ffnSize / tp;
  const widths = projectionWidths(plan, q / m.headDim, kv / m.headDim, m.headDim, ffn);
  // Multi-head latent attention: its five projections (shared/model/mla.ts), the TP-split ones over the rank's heads.
  const attention: [number, number][] = m.mla
    ? mlaProjections(m.mla, m.hiddenSize, m.heads).map((p): [number, number] => p.tp === 'column' ? [Math.ceil(p.out / tp), p.in] : p.tp === 'row' ? [p.out, Math.ceil(p.in / tp)] : [p.out, p.in])
    : [...widths.qkv.map((n): [number, number] => [n, m.hiddenSize]), [m.hiddenSize, q]];
  const linears: [number, number][] = [
    ...attention,
    ...widths.mlpIn.map((n): [number, number] => [n, m.hiddenSize]), [m.hiddenSize, ffn], [m.vocabSize / tp, m.hiddenSize],
  ];
  const out: [number, number, number][] = [];
  for (const [n, k] of linears) out.push([T, n, k], [T, k, n], [n, k, T]);
  return out;
}

/** Message sizes around a plan's own: S/16, S and 4·S (capped at 1 GiB), for the latency and bandwidth of the curve. */
function messageSizes(bytes: number): number[] {
  return [bytes / 16, bytes, 4 * bytes].map((b) => Math.max(1024, Math.min(MAX_BYTES, Math.round(b))));
}

/** The request for a set of plans; duplicate shapes and group layouts are measured once. */
export function profileRequest(plans: readonly Plan[], o: ProfileRequestOptions = {}): ProfileRequest {
  const shrink = (x: number) => (o.quick ? Math.max(16, Math.min(256, Math.round(x / 16) * 16)) : Math.max(1, Math.round(x)));
  const gemm = new Map<string, ProfileRequest['gemm'][number]>();
  const attention = new Map<string, ProfileRequest['attention'][number]>();
  const colls = new Map<string, { kind: string; groupSize: number; perNode: number; bytes: Set<number> }>();
  const ranks = o.ranks ?? Number.MAX_SAFE_INTEGER;
  const gpn = o.gpusPerNode ?? Number.MAX_SAFE_INTEGER;
  for (const plan of plans) {
    const fp8 = plan.training.precision === 'fp8-mixed';
    for (const [m, n, k] of planGemms(plan)) {
      for (const dtype of fp8 ? (['bf16', 'fp8'] as const) : (['bf16'] as const)) {
        const g = { dtype, m: shrink(m), n: shrink(n), k: shrink(k) };
        gemm.set(`${g.dtype}:${g.m}:${g.n}:${g.k}`, g);
      }
    }
    const cp = posInt(plan.parallel.cp);
    const seq = cp > 1 ? posInt(plan.training.seqLen) / (2 * cp) : posInt(plan.training.seqLen);
    const heads = Math.max(1, Math.ceil(plan.model.heads / posInt(plan.parallel.tp)));
    const a = { seq: o.quick ? Math.min(256, seq) : seq, headDim: plan.model.headDim, causal: cp === 1, heads: o.quick ? Math.min(2, heads) : heads };
    attention.set(`${a.seq}:${a.headDim}:${a.causal}:${a.heads}`, a);
    for (const c of collectivesPerStep(plan)) {
      if (c.kind === 'send-recv' || c.groupSize < 2 || c.groupSize > ranks || c.perNode > gpn) continue;
      const key = `${c.kind}:${c.groupSize}:${c.perNode}`;
      const entry = colls.get(key) ?? { kind: c.kind, groupSize: c.groupSize, perNode: c.perNode, bytes: new Set<number>() };
      for (const b of messageSizes(c.bytesPerOccurrence)) entry.bytes.add(o.quick ? Math.min(b, 65536) : b);
      colls.set(key, entry);
    }
  }
  return {
    kind: 'shardlens-profile-request', device: o.device ?? 'auto', reps: o.quick ? 2 : 10, memoryBytes: o.quick ? 2 ** 20 : 2 ** 30,
    gemm: [...gemm.values()], attention: [...attention.values()],
    collectives: [...colls.values()].map((c) => ({ kind: c.kind, groupSize: c.groupSize, perNode: c.perNode, bytes: [...c.bytes].sort((x, y) => x - y) })),
  };
}
