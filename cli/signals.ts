/**
 * Ends launched work on every way the CLI can be stopped: Ctrl-C (SIGINT), the extension's cancel or a service
 * manager (SIGTERM), a closed terminal (SIGHUP). The returned signal aborts; the launchers then kill their process
 * groups and remove their temporary folders before the CLI exits with 128 + the signal number.
 */
import { constants } from 'node:os';

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

export function abortOnSignals(): AbortController {
  const ctrl = new AbortController();
  for (const sig of SIGNALS) {
    process.once(sig, () => {
      process.exitCode = 128 + (constants.signals[sig] ?? 0);
      ctrl.abort();
    });
  }
  return ctrl;
}
