/** How a training log compares with the estimate, in one notification line and a few log lines (shared/calibration). */
import type { Compared, LogComparison } from '../calibration/fromLog';
import type { ClusterCorrection } from '../plan/calibration';
import { formatBytes, formatSeconds, formatSignedPercent } from '../units';
const gib = (b: number): string => formatBytes(b, 'GiB');

/** "step 8.42 s measured, 9.21 s estimated (+9.4 %)"; undefined when the figure is not in the log. */
function figure(name: string, c: Compared | undefined, show: (x: number) => string): string | undefined {
  return c ? `${name} ${show(c.measured)} measured, ${show(c.estimated)} estimated (${formatSignedPercent(c.error)})` : undefined;
}

/** The comparison in one line: step time and peak memory, measured against estimated. */
export function comparisonLine(c: LogComparison): string {
  const parts = [figure('step', c.step, formatSeconds), figure(`peak ${c.memory?.kind ?? ''} memory`.replace('  ', ' '), c.memory, gib)].filter(Boolean);
  return parts.length ? parts.join('; ') : 'nothing to compare';
}

/** What saving the correction does: "kernels ×0.912 speed, +4.80 GiB per GPU: step 8.42 s, memory 83.9 GiB with it". */
export function correctionLine(k: ClusterCorrection, after: LogComparison): string {
  const withIt = [after.step ? `step ${formatSeconds(after.step.estimated)}` : '', after.memory ? `memory ${gib(after.memory.estimated)}` : ''].filter(Boolean).join(', ');
  return `kernels ×${k.efficiency.toFixed(3)} speed, +${gib(k.overheadBytes)} per GPU${withIt ? ` (estimates with it: ${withIt})` : ''}`;
}

/** Every detail for the output channel: where each figure came from and the warnings. */
export function comparisonDetails(logName: string, c: LogComparison, k: ClusterCorrection, after: LogComparison): string[] {
  const out = [`training log ${logName} (${c.engine}): ${comparisonLine(c)}`];
  if (c.step) out.push(`  step: line ${c.step.line}, ${c.step.detail}`);
  if (c.memory) out.push(`  memory: line ${c.memory.line}, ${c.memory.detail}`);
  out.push(`  calibration "${k.clusterId}": ${correctionLine(k, after)}`);
  for (const w of k.warnings) out.push(`  note: ${w}`);
  return out;
}

/** What reading only the end of a long log leaves out, as a warning of the measurement. */
export function skippedLogWarning(skippedBytes: number, readChars: number): string {
  const mib = (n: number) => `${Math.round(n / 2 ** 20)} MiB`;
  return `only the last ${mib(readChars)} of the log were read (the ${mib(skippedBytes)} before them were skipped)`;
}
