/**
 * Code lenses at the top of a config file: fits or not on what, peak and where, step time, the Simulate Step and
 * Open Dashboard commands, and one lens per explicit assumption that opens the command changing it.
 */
import type { CodeLens, Range } from 'vscode-languageserver';
import { ClientCommands } from '../../shared/protocol';
import type { DocumentAnalysis } from '../analysis/analyze';
import { peakStage } from './figures';
import { formatBytes, formatSeconds } from '../../shared/units';
import type { PlanPath } from '../../shared/plan/paths';

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

/** Words for assumed plan paths. */
const ASSUMED: Partial<Record<PlanPath, string>> = {
  'training.seqLen': 'sequence length', 'training.microBatch': 'micro batch', 'training.gradAccum': 'gradient accumulation',
  'training.globalBatch': 'global batch', 'training.precision': 'precision', 'model': 'model', 'model.preset': 'model',
};

/** One lens for the cluster ("Assumed 8×H100 — change"), one for the model, one per other assumed input. */
export function assumptionLenses(a: DocumentAnalysis): CodeLens[] {
  const cluster = a.assumptions.filter((x) => x.path.startsWith('cluster.'));
  const out: CodeLens[] = [];
  if (cluster.length) out.push(lens(`Assumed ${clusterLabel(a)} — change`, ClientCommands.selectCluster, a.uri));
  for (const x of a.assumptions) {
    if (x.path.startsWith('cluster.')) continue;
    const isModel = x.path === 'model' || x.path.startsWith('model.');
    const cmd = isModel ? ClientCommands.selectModel : x.command ?? ClientCommands.openDashboard;
    out.push(lens(`Assumed ${ASSUMED[x.path] ?? x.path} ${x.value} — change`, cmd, a.uri));
  }
  return out;
}

export function buildCodeLenses(a: DocumentAnalysis): CodeLens[] {
  const m = a.memory;
  if (!m) {
    if (!a.format) return [];
    if (a.problems.some((p) => p.code === 'model-unknown')) return [lens('ShardLens: which model? Select a model', ClientCommands.selectModel, a.uri)];
    return [lens('ShardLens: not enough to estimate — see Problems', ClientCommands.openDashboard, a.uri)];
  }
  const u = a.settings.units;
  const st = peakStage(m);
  const where = m.stages.length > 1 && st ? ` on stage ${st.stage}` : '';
  const verdict = m.fits ? '✓ Fits' : '✗ Does not fit';
  const out: CodeLens[] = [
    lens(`${verdict} on ${clusterLabel(a)}: peak ${formatBytes(st?.peakReservedBytes, u)}/GPU${where} of ${formatBytes(m.gpuMemoryBytes, u)}`, ClientCommands.openDashboard, a.uri),
  ];
  if (a.stepTime) out.push(lens(`Step ≈ ${formatSeconds(a.stepTime.stepSeconds)}`, ClientCommands.simulateStep, a.uri));
  out.push(lens('Simulate Step', ClientCommands.simulateStep, a.uri), lens('Open Dashboard', ClientCommands.openDashboard, a.uri));
  out.push(...assumptionLenses(a));
  return out;
}
