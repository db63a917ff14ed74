/**
 * A measured profile of the user's own cluster (`shardlens profile`, probe/profile_sweep.py): GEMM times over the
 * shapes their configs use, fused-attention times by sequence length, HBM bandwidth, and NCCL collective times over
 * message sizes and group layouts. Estimates on that cluster look their kernels up here first; every term then names
 * the profile in its provenance. Pure lookups: log-space interpolation between measured points, never extrapolating
 * a rate beyond the nearest point.
 */
import type { CollectiveKind } from '../comm/types';

export interface ProfileGemm { readonly dtype: 'bf16' | 'fp8'; readonly m: number; readonly n: number; readonly k: number; readonly seconds: number }
export interface ProfileAttention { readonly seq: number; readonly headDim: number; readonly causal: boolean; readonly fwdSeconds: number; readonly bwdSeconds: number; readonly batchHeads: number }
export interface ProfileCollective { readonly kind: CollectiveKind; readonly groupSize: number; readonly perNode: number; readonly bytes: number; readonly seconds: number }

export interface ClusterProfile {
  /** File the profile was read from (shown in provenance), and when and where it was measured. */
  readonly source: string;
  readonly createdAt: string;
  readonly device: string;
  readonly backend: string;
  readonly worldSize: number;
  readonly gpusPerNode: number;
  readonly gemm: readonly ProfileGemm[];
  readonly attention: readonly ProfileAttention[];
  /** Measured device-memory copy bandwidth, bytes/s (0 when not measured). */
  readonly hbmBytesPerSecond: number;
  readonly collectives: readonly ProfileCollective[];
  readonly warnings: readonly string[];
}

const L2 = Math.log2;

/**
 * Achieved FLOP/s of a GEMM shape: inverse-square-distance weighting of the measured FLOP/s of the four nearest
 * measured shapes of that dtype in log2(M, N, K) space; undefined without points.
 */
export function profileGemmRate(p: ClusterProfile, dtype: 'bf16' | 'fp8', m: number, n: number, k: number): number | undefined {
  let best: { d: number; r: number }[] = [];
  for (const g of p.gemm) {
    if (g.dtype !== dtype || !(g.seconds > 0)) continue;
    const d = (L2(g.m / m)) ** 2 + (L2(g.n / n)) ** 2 + (L2(g.k / k)) ** 2;
    best.push({ d, r: (2 * g.m * g.n * g.k) / g.seconds });
    if (best.length > 8) best = best.sort((a, b) => a.d - b.d).slice(0, 4);
  }
  if (!best.length) return undefined;
  best = best.sort((a, b) => a.d - b.d).slice(0, 4);
  if (best[0].d < 1e-9) return best[0].r;
  let w = 0, s = 0;
  for (const b of best) { const wi = 1 / b.d; w += wi; s += wi * b.r; }
  return s / w;
}

/** Piecewise-linear interpolation of y over sorted x in log2(x); clamped to the end points. */
function interp(xs: readonly number[], ys: readonly number[], x: number): number {
  if (x <= xs[0]) return ys[0];
  for (let i = 1; i < xs.length; i++) {
    if (x <= xs[i]) {
      const f = (L2(x) - L2(xs[i - 1])) / (L2(xs[i]) - L2(xs[i - 1]));
      return ys[i - 1] + f * (ys[i] - ys[i - 1]);
    }
  }
  return ys[ys.length - 1];
}

/**
 * Achieved fused-attention FLOP/s (forward or backward) at a sequence length, from the measured points with the
 * closest head dim and the same mask; FLOPs as the FlashAttention papers count them (4·s²·d per head forward, causal
 * half, backward 2.5×). Undefined without points.
 */
export function profileAttentionRate(p: ClusterProfile, pass: 'fwd' | 'bwd', seq: number, headDim: number, causal: boolean): number | undefined {
  const same = p.attention.filter((a) => a.causal === causal && a.fwdSeconds > 0 && a.bwdSeconds > 0);
  if (!same.length) return undefined;
  const hd = same.reduce((a, b) => (Math.abs(L2(b.headDim / headDim)) < Math.abs(L2(a.headDim / headDim)) ? b : a)).headDim;
  const pts = same.filter((a) => a.headDim === hd).sort((a, b) => a.seq - b.seq);
  const rate = (a: ProfileAttention) => {
    const f = 4 * a.seq * a.seq * a.headDim * a.batchHeads * (a.causal ? 0.5 : 1);
    return pass === 'fwd' ? f / a.fwdSeconds : (2.5 * f) / a.bwdSeconds;
  };
  return interp(pts.map((a) => a.seq), pts.map(rate), seq);
}

/**
 * Seconds of one collective from the measured series of the same kind, group size and members per node (or, failing
 * that, the same size): linear in bytes between measured sizes, and the last measured bus bandwidth beyond them.
 */
export function profileCollectiveSeconds(p: ClusterProfile, kind: CollectiveKind, bytes: number, size: number, perNode: number): number | undefined {
  let pts = p.collectives.filter((c) => c.kind === kind && c.groupSize === size && c.perNode === perNode);
  if (!pts.length) pts = p.collectives.filter((c) => c.kind === kind && c.groupSize === size);
  if (!pts.length || !(bytes > 0)) return undefined;
  pts = [...pts].sort((a, b) => a.bytes - b.bytes);
  const last = pts[pts.length - 1];
  if (bytes >= last.bytes) return last.seconds * (bytes / last.bytes);
  if (bytes <= pts[0].bytes) return pts[0].seconds;
  for (let i = 1; i < pts.length; i++) {
    if (bytes <= pts[i].bytes) {
      const f = (bytes - pts[i - 1].bytes) / (pts[i].bytes - pts[i - 1].bytes);
      return pts[i - 1].seconds + f * (pts[i].seconds - pts[i - 1].seconds);
    }
  }
  return last.seconds;
}

const num = (v: unknown, min = 0): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= min ? v : undefined);
const KINDS: ReadonlySet<string> = new Set(['all-reduce', 'reduce-scatter', 'all-gather', 'all-to-all', 'send-recv']);

/**
 * A profile from parsed JSON (a file the user may have edited): malformed entries are dropped and counted in the
 * warnings; undefined when nothing usable remains or the object is not a profile.
 */
export function normalizeProfile(raw: unknown, source: string): ClusterProfile | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  if (r.kind !== 'shardlens-profile') return undefined;
  const list = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter((x) => x && typeof x === 'object').slice(0, 100_000) as Record<string, unknown>[] : []);
  let dropped = 0;
  const gemm: ProfileGemm[] = [];
  for (const g of list(r.gemm)) {
    const m = num(g.m, 1), n = num(g.n, 1), k = num(g.k, 1), s = num(g.seconds, 1e-9);
    if (m && n && k && s && (g.dtype === 'bf16' || g.dtype === 'fp8')) gemm.push({ dtype: g.dtype, m, n, k, seconds: s }); else dropped++;
  }
  const attention: ProfileAttention[] = [];
  for (const a of list(r.attention)) {
    const seq = num(a.seq, 1), hd = num(a.headDim, 1), f = num(a.fwdSeconds, 1e-9), b = num(a.bwdSeconds, 1e-9), bh = num(a.batchHeads, 1);
    if (seq && hd && f && b && bh && typeof a.causal === 'boolean') attention.push({ seq, headDim: hd, causal: a.causal, fwdSeconds: f, bwdSeconds: b, batchHeads: bh }); else dropped++;
  }
  const collectives: ProfileCollective[] = [];
  for (const c of list(r.collectives)) {
    const size = num(c.groupSize, 1), per = num(c.perNode, 1), bytes = num(c.bytes, 1), s = num(c.seconds, 1e-9);
    if (size && per && bytes && s && typeof c.kind === 'string' && KINDS.has(c.kind)) collectives.push({ kind: c.kind as CollectiveKind, groupSize: size, perNode: per, bytes, seconds: s }); else dropped++;
  }
  const warnings = Array.isArray(r.warnings) ? r.warnings.filter((w): w is string => typeof w === 'string').slice(0, 50) : [];
  if (dropped) warnings.push(`${dropped} malformed measurement(s) were ignored`);
  if (!gemm.length && !attention.length && !collectives.length && !num(r.hbmBytesPerSecond, 1)) return undefined;
  return {
    source, createdAt: String(r.createdAt ?? '?'), device: String(r.device ?? '?'), backend: String(r.backend ?? '?'),
    worldSize: num(r.worldSize, 1) ?? 1, gpusPerNode: num(r.gpusPerNode, 1) ?? 1,
    gemm, attention, hbmBytesPerSecond: num(r.hbmBytesPerSecond, 0) ?? 0, collectives, warnings,
  };
}
