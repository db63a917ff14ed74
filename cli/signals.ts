/**
 * Ends launched work on every way the CLI can be stopped: Ctrl-C (SIGINT), the extension's cancel or a service
 * manager (SIGTERM), a closed terminal (SIGHUP). The first signal aborts: the launchers kill their process groups
 * and remove their temporary folders, and the CLI exits with 128 + the signal number. A second signal exits at once;
 * the exit hook of validation/processGroups.ts still kills every group.
 */
import { constants } from 'node:os';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function abortOnSignals(): AbortController {
  const ctrl = new AbortController();
  for (const sig of SIGNALS) {
    process.on(sig, () => {
      const code = 128 + (constants.signals[sig] ?? 0);
      if (ctrl.signal.aborted) process.exit(code);
      process.exitCode = code;
      ctrl.abort();
    });
  }
  return ctrl;
}
