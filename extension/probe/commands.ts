/**
 * VS Code glue of the torchrun probe: run locally with progress and cancel, generate cluster commands (text, never
 * run), import a report into the dashboards, and calibrate a cluster from a report. Launching refuses in untrusted
 * workspaces. Each command is a factory over the client context (extension/commands/index.ts registers them).
 */
import { writeUserFile } from '../../server/io/write';
import { MAX_REPORT_BYTES, readTextFile } from '../../server/io/read';
import * as vscode from 'vscode';
import { estimateMemory } from '../../shared/memory/estimate';
import type { Plan } from '../../shared/plan/types';
import type { ValidationResultView } from '../../shared/protocol';
import {
  calibrate, CALIBRATION_SETTING, clusterCommands, comparablePlanFor, compareReport, coreRankEstimate, exportProbePlan, isExportProblem,
  parseProbeReport, PROBE_MODES, probeAndCompare, withEstimates, type ProbeMode, type ProbeReport,
} from '../../validation/torch/index';
import { WEBVIEW_PROTOCOL_VERSION } from '../../shared/protocol/webview';
import type { CommandFactory, Ctx } from '../ctx';
import { DashboardPanel } from '../dashboard/panel';
import { requireTrust } from '../trust';
import { selectedPython } from './interpreter';
import { runOracleCommand } from './oracle';
import { cancelProfiles, runProfileCommand } from './profile';
import { runLogCalibration } from './logCalibration';
import { toResultView } from './view';

export interface ProbeCommandDeps {
  /** The resolved plan of a config (its URI), or of the active config when none is given. */
  readonly getPlan: (uri?: string) => Promise<Plan | undefined>;
  /** The config a command acts on (its argument, else the active one). */
  readonly targetUri: (arg: unknown) => string | undefined;
  /** Shows a result in the validation dashboard, as the result of the config `uri`. */
  readonly showResult: (result: ValidationResultView, uri: string | undefined) => void;
  /** Progress for the dashboards (state and one line). */
  readonly showProgress?: (state: 'running' | 'done' | 'failed' | 'cancelled', message: string) => void;
  readonly log: vscode.LogOutputChannel;
}

/** Command ids; package.json must contribute them. */
export const PROBE_COMMANDS = {
  runLocal: 'shardlens.probe.runLocal',
  clusterCommands: 'shardlens.probe.clusterCommands',
  importReport: 'shardlens.probe.importReport',
  calibrate: 'shardlens.probe.calibrate',
  fake: 'shardlens.probe.fake',
  profile: 'shardlens.profileCluster',
  calibrateFromLog: 'shardlens.calibrateFromLog',
} as const;

async function planOrThrow(deps: ProbeCommandDeps, arg: unknown): Promise<Plan> {
  const plan = await deps.getPlan(deps.targetUri(arg));
  if (!plan) throw new Error('open a training config that ShardLens can estimate first');
  return plan;
}

async function askMode(plan: Plan): Promise<ProbeMode | undefined> {
  const exported = exportProbePlan(plan, {});
  const suggested = isExportProblem(exported) ? 'ddp' : exported.probePlan.parallel.mode;
  const pick = await vscode.window.showQuickPick(
    PROBE_MODES.map((m) => ({ label: m, description: m === suggested ? 'matches the config' : undefined })),
    { title: 'ShardLens: how the probe wraps the model' },
  );
  return pick?.label as ProbeMode | undefined;
}

async function askInt(title: string, value: string): Promise<number | undefined> {
  const text = await vscode.window.showInputBox({
    title, value, validateInput: (v) => (/^[1-9]\d*$/.test(v.trim()) ? undefined : 'a positive whole number'),
  });
  return text === undefined ? undefined : Number(text.trim());
}

/** Probes in progress (their cancel and their end), so deactivate() can stop them. */
const running = new Map<AbortController, Promise<unknown>>();

/** Cancels every probe in progress and waits (at most `graceMs`) until their processes are stopped. */
export async function cancelProbes(graceMs = 3000): Promise<void> {
  for (const ac of running.keys()) ac.abort();
  const sweeps = cancelProfiles();
  await Promise.race([Promise.allSettled([...running.values(), ...sweeps]), new Promise((r) => setTimeout(r, graceMs).unref())]);
}

/** Runs the probe in-process (child processes via torchrun) under a cancellable notification. */
async function runLocal(deps: ProbeCommandDeps, arg: unknown): Promise<void> {
  if (!requireTrust('Run on PyTorch')) return;
  const plan = await planOrThrow(deps, arg);
  const ranks = await askInt('ShardLens: ranks (one process per GPU, or CPU processes over gloo)', String(Math.min(plan.parallel.dp, 2)));
  if (!ranks) return;
  const mode = await askMode(plan);
  if (!mode) return;
  const python = await selectedPython();
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'ShardLens: running on PyTorch', cancellable: true }, async (progress, token) => {
    const ac = new AbortController();
    token.onCancellationRequested(() => ac.abort());
    deps.showProgress?.('running', `Starting torchrun with ${ranks} ranks (${mode})…`);
    const run = probeAndCompare({
      plan, ranks, mode, python, signal: ac.signal, export: { layout: 'data-parallel-only' },
      onProgress: (p) => {
        if (p.phase === 'launch') deps.log.info(`probe: ${p.argv.join(' ')}`);
        if (p.phase === 'output') deps.log.info(`probe: ${p.message}`);
        else progress.report({ message: p.message });
      },
    });
    running.set(ac, run);
    const out = await run.finally(() => running.delete(ac));
    if (!out.ok) {
      if (out.outputTail) deps.log.info(out.outputTail);
      const state = out.code === 'cancelled' ? 'cancelled' : 'failed';
      deps.showProgress?.(state, out.message);
      if (state === 'failed') void vscode.window.showErrorMessage(`ShardLens: ${out.message}`, 'Show Output').then((p) => { if (p) deps.log.show(); });
      return;
    }
    for (const n of out.notes) deps.log.info(`probe: ${n}`);
    deps.showProgress?.('done', out.comparison.ok ? 'Measured matches the estimate.' : 'Measured differs from the estimate; see the dashboard.');
    deps.showResult(toResultView(out.report), deps.targetUri(arg));
  });
}

/** Opens the cluster commands and the plan JSON as untitled documents to copy; nothing is run. */
async function showClusterCommands(deps: ProbeCommandDeps, arg: unknown): Promise<void> {
  const plan = await planOrThrow(deps, arg);
  const nodes = await askInt('ShardLens: nodes', String(plan.cluster.nodes));
  if (!nodes) return;
  const gpus = await askInt('ShardLens: GPUs per node', String(plan.cluster.gpusPerNode));
  if (!gpus) return;
  const sharedDir = await vscode.window.showInputBox({ title: 'ShardLens: a folder every node sees', value: '$HOME/shardlens-probe' });
  if (sharedDir === undefined) return;
  const r = clusterCommands(plan, nodes, gpus, { sharedDir, export: { layout: 'data-parallel-only' } });
  if ('problem' in r) throw new Error(r.problem);
  const text = [
    `# ShardLens probe on ${nodes} × ${gpus} GPUs (${r.probePlan.parallel.mode}). Not run by ShardLens: copy and run on the cluster.`,
    `# 1. Copy the extension's dist/probe folder to ${sharedDir}/probe and the plan below to ${sharedDir}/plan.json.`,
    '# 2. Either run one line per node (set MASTER_ADDR to the first node), or submit the Slurm script.',
    '# 3. Copy report.json back and run "ShardLens: Import Probe Report".',
    ...r.notes.map((n) => `# ${n}`),
    '', ...r.nodes.map((n) => `# node ${n.node}\n${n.line}`), '', '# Slurm', r.slurmScript,
  ].join('\n');
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language: 'shellscript', content: text }));
  await vscode.window.showTextDocument(await vscode.workspace.openTextDocument({ language: 'json', content: r.planJson }), { viewColumn: vscode.ViewColumn.Beside });
}

async function pickReport(): Promise<{ report: ProbeReport; path: string } | undefined> {
  const files = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Probe report': ['json'] }, title: 'ShardLens: probe report' });
  if (!files?.length) return undefined;
  // The user picked this file: it is read wherever it is, but only as a bounded regular file.
  const text = readTextFile(files[0].fsPath, { maxBytes: MAX_REPORT_BYTES });
  if (!text.ok) throw new Error(text.detail);
  const read = parseProbeReport(text.text);
  if (!read.ok) throw new Error(`not a probe report: ${read.problems.slice(0, 3).join('; ')}`);
  return { report: read.report, path: files[0].fsPath };
}

/** Estimates what the report ran (its model, batch and ranks as echoed in the report) and compares. */
function compareWithPlan(plan: Plan, report: ProbeReport) {
  const stage = estimateMemory(comparablePlanFor(plan, { ...report.plan, parallel: { ...report.plan.parallel, dp: report.worldSize, mode: report.mode } })).stages[0];
  return { comparison: compareReport(report, { core: stage ? coreRankEstimate(stage) : undefined }), stage };
}

async function importReport(deps: ProbeCommandDeps, arg: unknown): Promise<void> {
  const picked = await pickReport();
  if (!picked) return;
  const uri = deps.targetUri(arg);
  const plan = await deps.getPlan(uri);
  const report = plan ? withEstimates(picked.report, compareWithPlan(plan, picked.report).comparison) : picked.report;
  deps.showResult({ ...toResultView(report), reportPath: picked.path }, uri);
}

async function runCalibrate(deps: ProbeCommandDeps, arg: unknown): Promise<void> {
  const picked = await pickReport();
  if (!picked) return;
  const plan = await planOrThrow(deps, arg);
  const { stage } = compareWithPlan(plan, picked.report);
  const clusterId = await vscode.window.showInputBox({ title: 'ShardLens: name of this cluster', value: plan.cluster.gpu.id });
  if (!clusterId) return;
  const cfg = vscode.workspace.getConfiguration();
  const existing = cfg.get<Record<string, never>>(CALIBRATION_SETTING) ?? {};
  const { correction, setting } = calibrate({
    report: picked.report, clusterId,
    estimatedPeakAllocatedBytes: stage ? coreRankEstimate(stage).peakAllocatedBytes : undefined,
  }, existing);
  const summary = `+${(correction.overheadBytes / 2 ** 20).toFixed(0)} MiB overhead, efficiency ×${correction.efficiency.toFixed(2)}`;
  const warn = correction.warnings.length ? ` (${correction.warnings.join('; ')})` : '';
  const ok = await vscode.window.showInformationMessage(`ShardLens: calibrate "${clusterId}": ${summary}${warn}?`, 'Save to workspace settings');
  if (!ok) return;
  await cfg.update(setting.key, setting.value, vscode.ConfigurationTarget.Workspace);
  deps.log.info(`calibration ${clusterId}: ${JSON.stringify(correction)}`);
}

/** The probe's view of the client context: the plan of a config, and where results and progress go. */
function depsOf(ctx: Ctx): ProbeCommandDeps {
  return {
    getPlan: async (uri) => (await ctx.analysis(uri))?.plan,
    targetUri: (arg) => ctx.targetUri(arg),
    showResult: (result, uri) => {
      DashboardPanel.show(ctx.extensionUri, ctx.hub, 'validation');
      ctx.hub.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'validationResult', result: uri ? { ...result, configUri: uri } : result });
    },
    showProgress: (state, message) => ctx.hub.post({ v: WEBVIEW_PROTOCOL_VERSION, type: 'validationProgress', state, fraction: state === 'running' ? 0 : 1, message }),
    log: ctx.log,
  };
}

/** The body of each probe command over its dependencies (tests call these with stand-ins). */
export const PROBE_BODIES: Readonly<Record<(typeof PROBE_COMMANDS)[keyof typeof PROBE_COMMANDS], (d: ProbeCommandDeps, arg: unknown) => Promise<void>>> = {
  [PROBE_COMMANDS.runLocal]: runLocal,
  [PROBE_COMMANDS.clusterCommands]: showClusterCommands,
  [PROBE_COMMANDS.importReport]: importReport,
  [PROBE_COMMANDS.calibrate]: runCalibrate,
  [PROBE_COMMANDS.fake]: runOracleCommand,
  [PROBE_COMMANDS.profile]: runProfileCommand,
  [PROBE_COMMANDS.calibrateFromLog]: runLogCalibration,
};

/** The probe commands as factories, by command id. */
export const probeCommands: Readonly<Record<string, CommandFactory>> = Object.fromEntries(
  Object.entries(PROBE_BODIES).map(([id, body]) => [id, (ctx: Ctx) => (arg: unknown) => body(depsOf(ctx), arg)]),
);

/** Saves a report (with its estimates attached) as JSON, e.g. next to the config. */
export function saveReport(path: string, report: ProbeReport): void {
  writeUserFile(path, JSON.stringify(report, null, 1));
}
