/**
 * What the end of a validation run tells the user (pure, so it is tested without VS Code): a run whose checks ran
 * but did not all pass still shows its results, with how many failed; a run that ended without results says why,
 * from the report's own error or the runner's last line on stderr, rather than only its exit code.
 */

/** The parts of the CLI's report the outcome reads (`shardlens validate --json`). */
export interface ReportGist {
  readonly status?: unknown;
  readonly error?: unknown;
  readonly checks?: unknown;
}

export interface Outcome {
  readonly state: 'done' | 'failed' | 'cancelled';
  readonly message: string;
  /** Post the results to the dashboards. */
  readonly showResult: boolean;
  readonly level: 'info' | 'warning' | 'error';
}

export function validationOutcome(
  label: string, run: { readonly code: number | null; readonly cancelled: boolean }, hasResult: boolean, report: ReportGist | undefined, lastLine = '',
): Outcome {
  if (run.cancelled) return { state: 'cancelled', message: `${label} cancelled.`, showResult: false, level: 'info' };
  if (run.code === 0 && hasResult) return { state: 'done', message: `${label} finished.`, showResult: true, level: 'info' };
  const checks = Array.isArray(report?.checks) ? report!.checks : [];
  const failed = checks.filter((c) => typeof c === 'object' && c !== null && (c as { passed?: unknown }).passed === false).length;
  if (hasResult && report?.status === 'failed-checks') {
    return { state: 'done', message: `${label} finished: ${failed} of ${checks.length} checks failed (see the results).`, showResult: true, level: 'warning' };
  }
  const why = typeof report?.error === 'string' && report.error.trim() ? report.error.trim() : lastLine.trim();
  const code = run.code ?? 'signal';
  return { state: 'failed', message: `${label} failed (exit code ${code})${why ? `: ${why.slice(0, 300)}` : ''}; see the ShardLens output.`, showResult: false, level: 'error' };
}
