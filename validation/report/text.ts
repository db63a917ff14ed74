/** Plain-text rendering of a validation report for the CLI (`shardlens validate <file>` without --json). */
import type { ValidationReport } from '../types';

const mib = (b: number): string => `${(b / 2 ** 20).toFixed(3)} MiB`;
const pad = (s: string, n: number): string => (s.length >= n ? s : s + ' '.repeat(n - s.length));

/** The report as lines of text: backend and reasons, scaling, per mode rank 0 measured vs estimated, the checks. */
export function formatReportText(r: ValidationReport): string {
  const out: string[] = [];
  out.push(`Validation: ${r.status}${r.error ? ` — ${r.error}` : ''}`);
  out.push(`Backend: ${r.backendLabel}`);
  for (const b of r.backends) out.push(`  ${pad(b.name, 15)} ${b.ok ? 'usable' : 'not used'}: ${b.reason}`);
  if (r.scaling) out.push(`Scaling: ${r.scaling.summary}`, ...r.scaling.dropped.map((d) => `  not reproduced: ${d}`));
  if (r.parameters) out.push(`Parameters Ψ of the scaled model: ${r.parameters.toLocaleString('en-US')}; ${r.ranks} ranks, ${r.steps} steps per mode`);
  for (const run of r.runs) {
    const k = run.ranks[0];
    if (!k) continue;
    out.push('');
    out.push(`${run.label} (rank 0 of ${run.ranks.length})${run.relativeL2VsReplicated !== null ? `, relative L2 vs DDP ${run.relativeL2VsReplicated.toExponential(2)}` : ''}`);
    out.push(`  ${pad('', 24)} ${pad('measured', 16)} estimated`);
    for (const [key, label] of [['parametersBytes', 'parameters'], ['gradientsBytes', 'gradients'], ['optimizerStatesBytes', 'optimizer states'], ['sentBytes', 'sent per step']] as const) {
      out.push(`  ${pad(label, 24)} ${pad(mib(k.measured[key]), 16)} ${mib(k.estimated[key])}`);
    }
    const act = k.estimated.activationBytes;
    out.push(`  ${pad('tfjs tape peak', 24)} ${pad(mib(k.measured.tapePeakBytes), 16)}${act ? ` (transient ${mib(k.measured.tapeActivationBytes)} = ${(k.measured.tapeActivationBytes / act).toFixed(1)}× the core's activations ${mib(act)})` : ''}`);
    out.push(`  ${pad('step time (median)', 24)} ${k.measured.stepTimeMs.toFixed(0)} ms; loss ${run.losses.map((l) => l.toFixed(3)).join(' → ')}`);
  }
  const failed = r.checks.filter((c) => c.passed === false);
  const passed = r.checks.filter((c) => c.passed === true).length;
  if (r.checks.length) out.push('', `Checks: ${passed} passed, ${failed.length} failed, ${r.checks.length - passed - failed.length} shown only`);
  for (const c of failed) out.push(`  ✗ ${c.label}: measured ${c.measured}, expected ${c.expected} (${c.detail})`);
  for (const n of r.notes) out.push(`Note: ${n}`);
  return out.join('\n');
}
