/**
 * Builds the dashboards' model from the server's `shardlens/analysis` result (pure, no vscode): memory variants,
 * the data-parallel sweep, collectives, the simulated timeline, assumptions and problems.
 */
import type { AnalysisCollective, AnalysisResult, DashboardModel, MemoryUnits, CommRow } from '../../shared/protocol';
import { clean } from './components';
import { simulationView } from './simulation';
import { dpSweep, memoryVariants, type EstimateFn } from './variants';

/** The file name of a URI or path, for titles. */
export function fileNameOf(uri: string): string {
  const clean = uri.split(/[?#]/)[0] ?? uri;
  return decodeURIComponent(clean.slice(clean.lastIndexOf('/') + 1)) || uri;
}

/** Network tier names for the dashboard (shared/comm LinkTier). */
const TIERS: Readonly<Record<string, string>> = { nvlink: 'intra-node (NVLink)', pcie: 'intra-node (PCIe)', network: 'inter-node' };

/** One collective as a table row; `bytesPerRank` is already per step (bytes per occurrence × occurrences). */
export function commRow(c: AnalysisCollective): CommRow {
  const seconds = clean(c.seconds);
  const stage = Number.isInteger(c.stage) && c.stage > 0 ? `, stage ${c.stage}` : '';
  return {
    label: `${c.label || c.kind} (${c.group}×${c.groupSize}${stage})`,
    collective: c.kind,
    axis: c.group,
    tier: TIERS[c.tier] ?? String(c.tier),
    bytesPerStep: clean(c.bytesPerRank),
    seconds,
    exposedSeconds: Math.min(seconds, clean(c.exposedSeconds)),
  };
}

/**
 * The dashboard model of an analysis, or a reason why there is none (no plan: the file does not say enough).
 * `estimate` computes the extra sharding variants; without it only the file and its replicated baseline are drawn.
 */
export function toDashboardModel(
  r: AnalysisResult, units: MemoryUnits, estimate?: EstimateFn,
): { model: DashboardModel } | { reason: string } {
  const memory = r.memory;
  if (!memory || !memory.stages.length) {
    const why = r.problems.find((p) => p.severity === 'error')?.message;
    return { reason: why ? `No estimate yet: ${why}` : 'This file does not say enough for an estimate yet.' };
  }
  const plan = r.plan;
  const gpusPerNode = plan?.cluster.gpusPerNode ?? 0;
  const peakStage = Math.min(Math.max(0, memory.peakStage | 0), memory.stages.length - 1);
  const peak = memory.stages[peakStage];
  const sim = r.simulation?.ok ? simulationView(r.simulation.result) : undefined;
  const stepSeconds = r.stepTime ? clean(r.stepTime.stepSeconds) : undefined;
  const sweep = dpSweep(plan, estimate);
  const model: DashboardModel = {
    uri: r.uri,
    fileName: fileNameOf(r.uri),
    format: r.format ?? 'unknown',
    cluster: {
      gpuName: plan?.cluster.gpu.name ?? 'GPU',
      gpuMemoryBytes: clean(memory.gpuMemoryBytes),
      gpusPerNode: Math.max(0, gpusPerNode | 0),
      nodes: Math.max(0, (plan?.cluster.nodes ?? 0) | 0),
    },
    modelName: plan?.model.name ?? 'model',
    parameters: clean(memory.model.parameters),
    fits: memory.fits,
    peakBytes: clean(peak?.peakReservedBytes),
    peakStage,
    units,
    variants: memoryVariants(plan, memory, estimate),
    communication: r.collectives.map(commRow),
    assumptions: r.assumptions.map((a) => `${a.path} = ${a.value}: ${a.detail}`),
    problems: r.problems.map((p) => ({ severity: p.severity, message: p.message })),
    ...(sweep ? { sweep } : {}),
    ...(stepSeconds !== undefined && stepSeconds > 0 ? { stepSeconds } : {}),
    ...(sim ? { simulation: sim } : {}),
  };
  return { model };
}
