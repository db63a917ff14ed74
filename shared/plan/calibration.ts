/**
 * Per-cluster corrections measured by the PyTorch probe ("Calibrate"), stored in the `shardlens.calibration` setting
 * or taken from a training log ("Calibrate from Training Log"), and applied to later estimates on a matching GPU: extra
 * overhead bytes per GPU and a kernel speed factor.
 */
import type { Plan } from './types';

/** The setting that stores the corrections, keyed by cluster. */
export const CALIBRATION_SETTING = 'shardlens.calibration';

export interface ClusterCorrection {
  readonly clusterId: string;
  /** Bytes per GPU the engine held beyond the estimate at the peak (CUDA context, allocator, runtime buffers); ≥ 0. */
  readonly overheadBytes: number;
  /**
   * Measured kernel speed relative to the model's (1 = the model was right): every GEMM, attention and memory-bound
   * kernel takes 1/efficiency of its modelled time on this cluster (solved so that the calibration run's step time is
   * reproduced, shared/calibration/kernelSpeed.ts; a probe report gives estimated / measured step time).
   */
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

/**
 * A plan with the correction applied: the overhead added to the CUDA context term and every kernel's time divided by
 * the measured kernel speed (shared/time/context.ts kernelTimers; collectives and host gaps keep their own rates).
 */
export function applyCalibration(plan: Plan, c: ClusterCorrection): Plan {
  const detail = `calibrated on ${c.source.device} (${c.source.mode}, ${c.source.worldSize} ranks, ${c.source.createdAt})`;
  const speed = Math.min(10, Math.max(0.05, (plan.cluster.gpu.kernelSpeed ?? 1) * c.efficiency));
  return {
    ...plan,
    overhead: { ...plan.overhead, cudaContextBytes: plan.overhead.cudaContextBytes + c.overheadBytes },
    cluster: { ...plan.cluster, gpu: { ...plan.cluster.gpu, kernelSpeed: speed } },
    sources: {
      ...plan.sources,
      'overhead.cudaContextBytes': { kind: 'setting', detail: `shardlens.calibration["${c.clusterId}"], ${detail}: +${c.overheadBytes} B` },
      'cluster.gpu.kernelSpeed': { kind: 'setting', detail: `shardlens.calibration["${c.clusterId}"], ${detail}: kernels ×${c.efficiency.toFixed(3)} speed` },
    },
  };
}

/**
 * The plan as the catalog alone would give it, when `c` (the correction the resolver applied) is known: its overhead
 * taken back out of the context term and the kernel speed cleared. A new calibration is solved on this plan, not on
 * one that already carries the old correction.
 */
export function withoutCalibration(plan: Plan, c: ClusterCorrection | undefined): Plan {
  if (!c || plan.cluster.gpu.kernelSpeed === undefined) return plan;
  const { kernelSpeed: _s, ...gpu } = plan.cluster.gpu;
  return {
    ...plan,
    overhead: { ...plan.overhead, cudaContextBytes: Math.max(0, plan.overhead.cudaContextBytes - c.overheadBytes) },
    cluster: { ...plan.cluster, gpu },
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
