/** The probe report as the dashboards' ValidationResultView (measured and, when attached, estimated bytes per rank). */
import type { ValidationResultView } from '../../shared/protocol';
import type { ProbeReport } from '../../validation/torch/index';

const pick = (x: Readonly<Record<string, number | null | undefined>> | undefined): Record<string, number> => {
  const out: Record<string, number> = {};
  if (!x) return out;
  const names: Readonly<Record<string, string>> = {
    parametersBytes: 'parameters', gradientsBytes: 'gradients', optimizerStatesBytes: 'optimizer', commBytesPerStep: 'sent', peakAllocatedBytes: 'peak',
  };
  for (const [k, name] of Object.entries(names)) {
    const v = x[k];
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) out[name] = v;
  }
  return out;
};

export function toResultView(report: ProbeReport): ValidationResultView {
  const versions = Object.entries(report.engine.versions).map(([k, v]) => `${k} ${v}`).join(', ');
  const backend = `${report.engine.name} on ${report.device} over ${report.backend} (${versions})${report.device === 'cpu' ? '; peak is the CPU allocator trace, not GPU memory' : ''}`;
  return {
    source: 'torch', backend, parameters: report.parameters ?? 0,
    runs: [{
      mode: report.mode,
      ranks: report.ranks.filter((r) => r.ok).map((r) => ({ rank: r.rank, measured: pick(r as unknown as Record<string, number>), estimated: pick(r.estimated) })),
    }],
  };
}
