/**
 * "Exact memory on this machine (no GPU)": runs the fake-tensor oracle for the active config (its layout, engine
 * regime and checkpointing policy), compares torch's peaks per category with the estimate and shows both, term by
 * term, in the Validation dashboard. Needs a trusted workspace and a Python with torch ≥ 2.4.
 */
import * as vscode from 'vscode';
import type { OracleResultView, ValidationResultView } from '../../shared/protocol';
import type { Plan } from '../../shared/plan/types';
import { compareOracle, type OracleComparison } from '../../validation/torch/oracleCompare';
import { exportOraclePlan } from '../../validation/torch/oraclePlan';
import { findOraclePython, isOracleFailure, runOracle } from '../../validation/torch/oracleRun';
import type { OracleReport } from '../../validation/torch/oracleTypes';
import { requireTrust } from '../trust';
import { selectedPython } from './interpreter';
import type { ProbeCommandDeps } from './commands';

/** The dashboard view of a report and its comparison. */
export function toOracleView(report: OracleReport, cmp: OracleComparison, plan: Plan, layers: number, reproduced: string, notes: readonly string[]): ValidationResultView {
  const oracle: OracleResultView = {
    torch: `torch ${report.versions.torch ?? '?'}`, model: plan.model.name, reproduced, layers,
    notes: [...notes, ...report.ranks.flatMap((r) => r.notes)],
    stages: cmp.stages.map((s) => ({ label: s.label, ok: s.ok, rows: s.rows.map((r) => ({ ...r })) })),
    ok: cmp.ok,
  };
  return { source: 'oracle', backend: `torch ${report.versions.torch ?? '?'} on fake tensors (no GPU)`, parameters: 0, runs: [], oracle };
}

async function askLayers(plan: Plan): Promise<number | undefined> {
  const chunks = plan.parallel.pp * (plan.parallel.schedule === 'interleaved' ? Math.max(1, plan.parallel.vpp) : 1);
  const reduced = Math.min(plan.model.layers, Math.max(2 * chunks, 4));
  const pick = await vscode.window.showQuickPick([
    { label: `Full depth (${plan.model.layers} layers)`, layers: plan.model.layers },
    { label: `Reduced depth (${reduced} layers, faster)`, description: 'ShardLens estimates the same reduced model', layers: reduced },
  ], { title: 'ShardLens: exact memory on this machine (no GPU)' });
  return pick?.layers;
}

export async function runOracleCommand(deps: ProbeCommandDeps, arg: unknown): Promise<void> {
  if (!requireTrust('Exact memory on this machine')) return;
  const uri = deps.targetUri(arg);
  const plan = await deps.getPlan(uri);
  if (!plan) throw new Error('open a training config that ShardLens can estimate first');
  const layers = await askLayers(plan);
  if (!layers) return;
  const exported = exportOraclePlan(plan, { layers });
  if ('code' in exported) throw new Error(exported.message);
  const selected = await selectedPython();
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'ShardLens: exact memory (torch, fake tensors)', cancellable: true }, async (progress, token) => {
    const ac = new AbortController();
    token.onCancellationRequested(() => ac.abort());
    progress.report({ message: 'Looking for a Python with torch ≥ 2.4…' });
    let py = await findOraclePython(selected);
    if (isOracleFailure(py) && selected) py = await findOraclePython(undefined);
    if (isOracleFailure(py)) {
      deps.showProgress?.('failed', py.message);
      void vscode.window.showErrorMessage(`ShardLens: ${py.message}`);
      return;
    }
    deps.showProgress?.('running', `Building ${plan.model.name} (${layers} layers) on fake tensors with torch ${py.torch}…`);
    const report = await runOracle(exported.oraclePlan, { python: py.python, signal: ac.signal });
    if (isOracleFailure(report) || !report.ok) {
      const message = isOracleFailure(report) ? report.message : `${report.error?.code}: ${report.error?.message}`;
      if (isOracleFailure(report) && report.outputTail) deps.log.info(report.outputTail);
      deps.showProgress?.(isOracleFailure(report) && report.code === 'cancelled' ? 'cancelled' : 'failed', message);
      if (!(isOracleFailure(report) && report.code === 'cancelled')) void vscode.window.showErrorMessage(`ShardLens: ${message}`);
      return;
    }
    const cmp = compareOracle(report, exported.comparablePlan);
    for (const n of exported.notes) deps.log.info(`oracle: ${n}`);
    deps.showProgress?.('done', cmp.ok ? 'ShardLens agrees with torch.' : 'ShardLens differs from torch; see the dashboard.');
    const p = exported.oraclePlan;
    deps.showResult(toOracleView(report, cmp, plan, layers, `${p.impl} model, ${p.regime} precision`, exported.notes), uri);
  });
}
