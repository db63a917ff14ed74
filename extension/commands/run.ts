/**
 * Runs the ShardLens CLI (dist/cli.js) as a child process for validation runs and torchrun probes, with progress and
 * cancel. Arguments are an array (never a shell string built from file content); the child gets its own process
 * group so that cancel ends it and every worker it started.
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as vscode from 'vscode';

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly cancelled: boolean;
}

/** The run in progress, so "Cancel" in the dashboard can stop it. */
let active: { child: ChildProcess; cancel: () => void } | undefined;

/** Cancels the run in progress, if any. */
export function cancelActiveRun(): boolean {
  if (!active) return false;
  active.cancel();
  return true;
}

export function isRunning(): boolean {
  return active !== undefined;
}

/** Ends a process group: SIGTERM, then SIGKILL after two seconds if it is still there. */
function killGroup(child: ChildProcess): void {
  const pid = child.pid;
  if (pid === undefined) return;
  const kill = (sig: NodeJS.Signals) => {
    try { process.kill(-pid, sig); } catch { try { child.kill(sig); } catch { /* Already gone. */ } }
  };
  kill('SIGTERM');
  const t = setTimeout(() => { if (child.exitCode === null && child.signalCode === null) kill('SIGKILL'); }, 2000);
  t.unref();
}

/**
 * Runs `node dist/cli.js <args>` with a cancellable progress notification; `onLine` receives each stderr line
 * (the CLI reports progress there). Resolves when the process exits.
 */
export function runCli(
  extensionPath: string, args: readonly string[], title: string, cwd: string | undefined,
  log: vscode.LogOutputChannel, onLine: (line: string) => void,
): Promise<CliRun> {
  if (active) return Promise.reject(new Error('another ShardLens run is in progress; cancel it first'));
  const cli = `${extensionPath}/dist/cli.js`;
  log.info(`Running: node ${cli} ${args.join(' ')}`);
  return Promise.resolve(vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (progress, token) => new Promise<CliRun>((resolve, reject) => {
      const child = fork(cli, [...args], { cwd, silent: true, detached: true, execArgv: [], env: { ...process.env, NO_COLOR: '1' } });
      let stdout = '';
      let cancelled = false;
      let rest = '';
      const cancel = () => { cancelled = true; killGroup(child); };
      active = { child, cancel };
      token.onCancellationRequested(cancel);
      child.stdout?.setEncoding('utf8').on('data', (d: string) => { stdout += d; });
      child.stderr?.setEncoding('utf8').on('data', (d: string) => {
        const lines = (rest + d).split('\n');
        rest = lines.pop() ?? '';
        for (const line of lines.filter((l) => l.trim())) {
          log.info(`[cli] ${line}`);
          progress.report({ message: line.slice(0, 120) });
          onLine(line);
        }
      });
      child.on('error', (e) => { active = undefined; reject(e); });
      child.on('exit', (code) => { active = undefined; resolve({ code, stdout, cancelled }); });
    }),
  ));
}
