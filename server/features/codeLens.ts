/**
 * Code lenses at the top of a config file: the verdict and what it rests on, the step time, and at most two actions.
 */
import type { CodeLens, Range } from 'vscode-languageserver';
import { ClientCommands } from '../../shared/protocol';
import { formatSeconds } from '../../shared/units';
import type { DocumentAnalysis } from '../analysis/analyze';
import { SHOW_ASSUMPTIONS } from './assumptionFixes';
import { verdictOf } from './verdict';
import { runLength, runShort } from '../../shared/wording/runLength';

const TOP: Range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

function lens(title: string, command: string, uri: string): CodeLens {
  return { range: TOP, command: { title, command, arguments: [uri] } };
}

/** The cluster as "8×H100 SXM". */
export function clusterLabel(a: DocumentAnalysis): string {
  const c = a.plan?.cluster;
  const n = c ? c.gpusPerNode * c.nodes : NaN;
  if (!c || !Number.isInteger(n) || n < 1) return c ? `? × ${c.gpu.name}` : 'unknown GPUs';
  return `${n}×${c.gpu.name}`;
}

/**
 * The lenses: the verdict (in the shared wording; a click lists the assumptions when it rests on them, else opens the
 * dashboard), the step time (a click simulates the step), and at most two actions: the dashboard, and the assumed
 * inputs when there are any.
 */
export function buildCodeLenses(a: DocumentAnalysis): CodeLens[] {
  const m = a.memory;
  const v = verdictOf(a);
  if (!m || !v) {
    if (!a.format) return [];
    if (a.problems.some((p) => p.code === 'model-unknown')) return [lens('ShardLens: which model? Select a model', ClientCommands.selectModel, a.uri)];
    return [lens('ShardLens: not enough to estimate — see Problems', ClientCommands.openDashboard, a.uri)];
  }
  const mark = v.conditional ? '$(warning)' : m.fits ? '$(check)' : '$(error)';
  const where = v.assumed.some((x) => x.path.startsWith('cluster')) ? '' : ` on ${clusterLabel(a)}`;
  const out: CodeLens[] = [lens(`${mark} ${v.short}${where}`, v.conditional ? SHOW_ASSUMPTIONS : ClientCommands.openDashboard, a.uri)];
  if (a.stepTime) {
    // With the steps the file plans: the run's wall-clock (steps × step time).
    const run = runLength(a.plan, a.stepTime.stepSeconds);
    // A stored cluster calibration (shardlens.calibration) sets the kernel speed: the step time says it rests on it.
    const calibrated = a.plan?.cluster.gpu.kernelSpeed !== undefined ? ' (calibrated)' : '';
    out.push(lens(`step ≈ ${formatSeconds(a.stepTime.stepSeconds)}${calibrated}${run ? ` · ${runShort(run)}` : ''}`, ClientCommands.simulateStep, a.uri));
  }
  out.push(lens('Dashboard', ClientCommands.openDashboard, a.uri));
  if (a.assumptions.length) out.push(lens(`Assumptions (${a.assumptions.length})`, SHOW_ASSUMPTIONS, a.uri));
  return out;
}
