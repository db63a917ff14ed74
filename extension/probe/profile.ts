/**
 * "Profile This Cluster": measures this machine for the active config (GEMMs at its shapes, attention, HBM bandwidth,
 * collectives at its message sizes and group layouts) with probe/profile_sweep.py under torchrun, writes
 * `.shardlens/profile.json` in the workspace and offers to point `shardlens.profile` at it, so step times then come
 * from the measured curves. Launches only in a trusted workspace; argument arrays, its own process group, cancellable.
 */
import * as vscode from 'vscode';
import { join, relative } from 'node:path';
import { ensureRealFolder } from '../../server/io/write';
import { profileRequest } from '../../shared/time/profileRequest';
import { runProfile } from '../../validation/torch/profile';
import { requireTrust } from '../trust';
import { selectedPython } from './interpreter';
import type { ProbeCommandDeps } from './commands';

/** Sweeps in progress (their cancel and their end), so deactivate() can stop them. */
const running = new Map<AbortController, Promise<unknown>>();

/** Cancels every sweep in progress and returns their ends (their process groups are stopped by launch.ts). */
export function cancelProfiles(): Promise<unknown>[] {
  for (const ac of running.keys()) ac.abort();
  return [...running.values()];
}

async function askRanks(): Promise<number | undefined | 'cancelled'> {
  const text = await vscode.window.showInputBox({
    title: 'ShardLens: ranks for the sweep', prompt: 'Empty: one per GPU on this machine (2 CPU ranks over gloo without GPUs)',
    validateInput: (v) => (v.trim() === '' || /^[1-9]\d*$/.test(v.trim()) ? undefined : 'a positive whole number, or empty'),
  });
  if (text === undefined) return 'cancelled';
  return text.trim() === '' ? undefined : Number(text.trim());
}

export async function runProfileCommand(deps: ProbeCommandDeps, arg: unknown): Promise<void> {
  if (!requireTrust('Profile This Cluster')) return;
  const plan = await deps.getPlan(deps.targetUri(arg));
  if (!plan) throw new Error('open a training config that ShardLens can estimate first');
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder) throw new Error('open a folder: the profile is written to its .shardlens folder');
  const ranks = await askRanks();
  if (ranks === 'cancelled') return;
  const python = await selectedPython();
  const out = join(ensureRealFolder(folder, '.shardlens'), 'profile.json');
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'ShardLens: profiling this cluster', cancellable: true }, async (progress, token) => {
    const ac = new AbortController();
    token.onCancellationRequested(() => ac.abort());
    deps.showProgress?.('running', 'Measuring GEMMs, attention, memory bandwidth and collectives…');
    const run = runProfile({
      requestFor: (n, cpu) => profileRequest([plan], { quick: cpu, ranks: n, gpusPerNode: n }), ranks, out, python, signal: ac.signal,
      onLine: (l) => { deps.log.info(`profile: ${l}`); progress.report({ message: l.slice(0, 120) }); },
    });
    running.set(ac, run);
    const r = await run.finally(() => running.delete(ac));
    if (!r.ok) {
      if (r.outputTail) deps.log.info(r.outputTail);
      const cancelled = ac.signal.aborted;
      deps.showProgress?.(cancelled ? 'cancelled' : 'failed', r.message);
      if (!cancelled) void vscode.window.showErrorMessage(`ShardLens: profile failed: ${r.message}`, 'Show Output').then((p) => { if (p) deps.log.show(); });
      return;
    }
    deps.log.info(`profile: ${r.argv.join(' ')}`);
    const rel = relative(folder, r.path ?? out);
    const p = r.profile;
    deps.showProgress?.('done', `Profile of ${p.device} (${p.worldSize} ranks) written to ${rel}.`);
    const note = p.warnings.length ? ` Note: ${p.warnings.join('; ')}.` : '';
    const use = await vscode.window.showInformationMessage(`ShardLens: profile of ${p.device} written to ${rel}.${note} Use it for step times in this workspace?`, 'Use This Profile');
    if (use) await vscode.workspace.getConfiguration('shardlens').update('profile', rel, vscode.ConfigurationTarget.Workspace);
  });
}
