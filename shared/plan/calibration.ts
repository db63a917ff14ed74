/**
 * Per-cluster corrections measured by the PyTorch probe ("Calibrate"), stored in the `shardlens.calibration` setting
 * and applied to later estimates on a matching GPU: extra overhead bytes per GPU and a compute-efficiency factor.
 */
import type { Plan } from './types';

export interface ClusterCorrection {
  readonly clusterId: string;
  /** Bytes per GPU the engine held beyond the estimate at the peak (CUDA context, allocator, runtime buffers); ≥ 0. */
  readonly overheadBytes: number;
  /** Estimated / measured step time: multiplies the achievable FLOP/s fraction (1 = the model was right). */
  readonly efficiency: number;
  /** Where the numbers came from, shown next to calibrated estimates. */
  readonly source: { readonly device: string; readonly mode: string; readonly worldSize: number; readonly createdAt: string; readonly engine: string };
  /** Why a value was left neutral, or why the correction is weak (CPU stand-in, failed ranks). */
  readonly warnings: readonly string[];
}

/** The correction stored for this plan's GPU: keyed by the cluster name, which defaults to the GPU catalog id. */
export function calibrationFor(plan: { readonly cluster: { readonly gpu: { readonly id: string } } }, table: Readonly<Record<string, ClusterCorrection>> | undefined): ClusterCorrection | undefined {
  if (!table) return undefined;
  const id = plan.cluster.gpu.id;
  return (Object.hasOwn(table, id) ? table[id] : undefined) ?? Object.values(table).find((c) => c.clusterId === id);
}

/** A plan with the correction applied: the overhead added to the CUDA context term and the FLOP/s fraction scaled. */
export function applyCalibration(plan: Plan, c: ClusterCorrection): Plan {
  const detail = `calibrated on ${c.source.device} (${c.source.mode}, ${c.source.worldSize} ranks, ${c.source.createdAt})`;
  const frac = Math.min(1, Math.max(0.01, plan.cluster.gpu.achievableFlopsFraction * c.efficiency));
  return {
    ...plan,
    overhead: { ...plan.overhead, cudaContextBytes: plan.overhead.cudaContextBytes + c.overheadBytes },
    cluster: { ...plan.cluster, gpu: { ...plan.cluster.gpu, achievableFlopsFraction: frac } },
    sources: {
      ...plan.sources,
      'overhead.cudaContextBytes': { kind: 'setting', detail: `shardlens.calibration["${c.clusterId}"], ${detail}: +${c.overheadBytes} B` },
      'cluster.gpu.achievableFlopsFraction': { kind: 'setting', detail: `shardlens.calibration["${c.clusterId}"], ${detail}: ×${c.efficiency.toFixed(3)}` },
    },
  };
}

/** Reads a stored calibration table defensively (it comes from user settings): malformed entries are dropped. */
export function normalizeCalibration(raw: unknown): Record<string, ClusterCorrection> {
  const out: Record<string, ClusterCorrection> = {};
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return out;
  for (const [key, v] of Object.entries(raw as Record<string, unknown>)) {
    // A "__proto__" key would replace the table's prototype instead of adding an entry.
    if (!v || typeof v !== 'object' || key === '__proto__') continue;
    const e = v as Partial<ClusterCorrection>;
    const overhead = typeof e.overheadBytes === 'number' && Number.isFinite(e.overheadBytes) && e.overheadBytes >= 0 && e.overheadBytes < 2 ** 40 ? e.overheadBytes : undefined;
    const eff = typeof e.efficiency === 'number' && Number.isFinite(e.efficiency) && e.efficiency > 0 && e.efficiency <= 10 ? e.efficiency : undefined;
    if (overhead === undefined || eff === undefined) continue;
    const s = (e.source ?? {}) as Partial<ClusterCorrection['source']>;
    out[key] = {
      clusterId: typeof e.clusterId === 'string' ? e.clusterId : key,
      overheadBytes: overhead,
      efficiency: eff,
      source: { device: String(s.device ?? '?'), mode: String(s.mode ?? '?'), worldSize: Number(s.worldSize) || 0, createdAt: String(s.createdAt ?? '?'), engine: String(s.engine ?? '?') },
      warnings: Array.isArray(e.warnings) ? e.warnings.map(String) : [],
    };
  }
  return out;
}
