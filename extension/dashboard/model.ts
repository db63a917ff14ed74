/**
 * Builds the dashboards' model from the server's `shardlens/analysis` result (pure, no vscode): the memory variants and
 * the data-parallel sweep it derives, and the collectives, assumptions and problems as the server sent them.
 */
import type { MemoryTermName, StageMemory, Term } from '../../shared/plan/result';
import { runLength } from '../../shared/wording/runLength';
import { trainsNothing, type AnalysisResult, type DashboardModel, type DerivationView, type MemoryUnits } from '../../shared/protocol';
import { symbolLines } from '../../shared/wording/symbols';
import { fileNameOf } from '../../shared/wording/files';
import { clean } from './components';
import { dpSweep, memoryVariants, type EstimateFn } from './variants';

export { fileNameOf };

/** The derivation of one stage: its non-zero terms with formulas, and every symbol they use once. */
export function derivationOf(st: StageMemory): DerivationView {
  const terms = (Object.entries(st.terms) as [MemoryTermName, Term | undefined][]).filter((e): e is [MemoryTermName, Term] => !!e[1] && e[1].bytes > 0);
  return {
    stage: st.stage,
    terms: terms.map(([, t]) => ({ label: t.label, bytes: clean(t.bytes), formula: t.formula, citation: t.citation })),
    symbols: symbolLines(terms),
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
    if (trainsNothing(r.plan, r.problems)) return { reason: 'This script runs no training command and names no model, batch or layout: there is nothing to estimate.' };
    const why = r.problems.find((p) => p.severity === 'error')?.message;
    return { reason: why ? `No estimate yet: ${why}` : 'This file does not say enough for an estimate yet.' };
  }
  const plan = r.plan;
  const gpusPerNode = plan?.cluster.gpusPerNode ?? 0;
  const peakStage = Math.min(Math.max(0, memory.peakStage | 0), memory.stages.length - 1);
  const peak = memory.stages[peakStage];
  const stepSeconds = r.stepTime ? clean(r.stepTime.stepSeconds) : undefined;
  const sweep = dpSweep(plan, estimate);
  const run = runLength(plan, stepSeconds);
  const model: DashboardModel = {
    uri: r.uri,
    // A module of configuration functions names the one analysed: "llama3.py → llama3_8b()".
    fileName: r.symbol ? `${fileNameOf(r.uri)} → ${r.symbol}()` : fileNameOf(r.uri),
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
    verdict: r.verdict ?? { headline: memory.fits ? 'fits' : 'does not fit', short: memory.fits ? 'fits' : 'does not fit', conditional: false },
    peakReservedBytes: clean(peak?.peakReservedBytes),
    peakAllocatedBytes: clean(peak?.peakAllocatedBytes),
    peakStage,
    units,
    variants: memoryVariants(plan, memory, estimate),
    communication: r.collectives,
    assumptions: r.assumptions,
    problems: r.problems.map((p) => ({ severity: p.severity, message: p.message })),
    ...(peak ? { derivation: derivationOf(peak) } : {}),
    ...(sweep ? { sweep } : {}),
    ...(stepSeconds !== undefined && stepSeconds > 0 ? { stepSeconds } : {}),
    ...(run ? { run: { steps: run.steps, seconds: run.seconds, gpus: run.gpus, gpuHours: run.gpuHours } } : {}),
  };
  return { model };
}
