/**
 * After a run: save the runner's report (next to the config, or in workspace storage) and build the dashboard's view
 * with the previous saved run of the same config attached for comparison. Never throws; a report that cannot be saved
 * is still shown.
 */
import type { ValidationResultView } from '../../shared/protocol';
import type { ValidationReport } from '../../validation/types';
import { fromRunnerReport } from './results';
import { isValidationReport, listReports, saveReport, type StoreLocation } from './store';

export interface Persisted {
  readonly view?: ValidationResultView;
  readonly reportPath?: string;
  readonly saveError?: string;
}

/** Saves `json` when it is a runner report with runs, and returns its view (with `previous`). */
export async function persistRunnerReport(json: unknown, loc: StoreLocation & { readonly save?: boolean }): Promise<Persisted> {
  if (!isValidationReport(json)) return { view: fromRunnerReport(json) };
  const report: ValidationReport = { ...json, ...(loc.configPath && !json.configPath ? { configPath: loc.configPath } : {}) };
  const previous = (await listReports(loc).catch(() => []))[0];
  let reportPath: string | undefined, saveError: string | undefined;
  if (loc.save !== false && report.runs.length && (loc.configPath || loc.storageDir)) {
    try {
      reportPath = await saveReport(report, loc);
    } catch (e) {
      saveError = e instanceof Error ? e.message : String(e);
    }
  }
  const view = fromRunnerReport(report, reportPath);
  const prev = previous ? fromRunnerReport(previous.report, previous.path) : undefined;
  return {
    reportPath, saveError,
    view: view && prev ? { ...view, previous: { startedAt: previous.report.startedAt, reportPath: previous.path, runs: prev.runs } } : view,
  };
}
