/**
 * Launches a validation run for the extension (or the CLI): refuses in an untrusted workspace without starting any
 * process, runs the runner as a child process with progress and cancel, saves the report next to the config (or in
 * workspace storage) and returns the dashboard's view of it with the previous saved run for comparison.
 * Node only, no vscode import: the caller passes `vscode.workspace.isTrusted` and an AbortSignal.
 */
import { runValidation } from '../../validation/index';
import { errorReport } from '../../validation/report/assemble';
import type { RunValidationOptions, ValidationReport } from '../../validation/types';
import type { ValidationResultView } from '../../shared/protocol';
import { persistRunnerReport } from './persist';
import type { StoreLocation } from './store';

export interface LaunchOptions extends RunValidationOptions, StoreLocation {
  /** Workspace Trust: false refuses the run (no process is started). */
  readonly trusted: boolean;
  /** Save the report (default true when a folder is known). */
  readonly save?: boolean;
}

export interface LaunchResult {
  readonly report: ValidationReport;
  /** Where the report was saved, if it was. */
  readonly reportPath?: string;
  /** The dashboard's view (undefined when the run produced no runs, e.g. refused or cancelled). */
  readonly view?: ValidationResultView;
  /** Why saving failed, if it did (the run itself still counts). */
  readonly saveError?: string;
}

/** Runs validation if the workspace is trusted; never throws. */
export async function launchValidation(o: LaunchOptions): Promise<LaunchResult> {
  if (!o.trusted) {
    const report = errorReport({ ranks: o.ranks ?? 4, steps: o.steps ?? 5, modes: o.modes ?? [] }, Date.now(), [],
      'validation runs launch processes and are disabled in an untrusted workspace', 'refused');
    return { report };
  }
  const report: ValidationReport = { ...(await runValidation(o)), ...(o.configPath ? { configPath: o.configPath } : {}) };
  const saved = await persistRunnerReport(report, o);
  return { report, ...saved };
}
