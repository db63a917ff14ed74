/**
 * Code lenses at the top of a config file: the verdict and what it rests on, the step time, and at most two actions.
 */
import type { CodeLens, Range } from 'vscode-languageserver';
import { ClientCommands, ServerExecutedCommands, trainsNothing } from '../../shared/protocol';
import { formatSeconds } from '../../shared/units';
import type { ConfigSection, DocumentAnalysis } from '../analysis/analyze';
import { SHOW_ASSUMPTIONS } from './assumptionFixes';
import { verdictOf } from './verdict';
import { runLength, runShort } from '../../shared/wording/runLength';

const TOP: Range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

function lens(title: string, command: string, uri: string, range: Range = TOP, args: unknown[] = [uri]): CodeLens {
  return { range, command: { title, command, arguments: args } };
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
 * inputs when there are any. In a module of configuration functions (torchtitan's Python configurations) each function
 * gets its own at its name: the analysed one these, every other its verdict and step time, a click analysing it.
 */
export function buildCodeLenses(a: DocumentAnalysis): CodeLens[] {
  if (!a.sections?.length) return documentLenses(a, TOP);
  return a.sections.flatMap((s) => (s.symbol === a.symbol ? documentLenses(a, s.range) : sectionLenses(a.uri, s)));
}

/** The lenses of one analysis at `range`. */
function documentLenses(a: DocumentAnalysis, range: Range): CodeLens[] {
  const m = a.memory;
  const v = verdictOf(a);
  if (!m || !v) {
    // A script that trains nothing (data preprocessing, conversion) has no verdict to stand in for: its info says so.
    if (!a.format || trainsNothing(a.plan, a.fileDiagnostics)) return [];
    if (a.problems.some((p) => p.code === 'model-unknown')) return [lens('ShardLens: which model? Select a model', ClientCommands.selectModel, a.uri, range)];
    return [lens('ShardLens: not enough to estimate — see Problems', ClientCommands.openDashboard, a.uri, range)];
  }
  const out: CodeLens[] = [lens(verdictTitle(a, v, m.fits), v.conditional ? SHOW_ASSUMPTIONS : ClientCommands.openDashboard, a.uri, range)];
  if (a.stepTime) {
    // With the steps the file plans: the run's wall-clock (steps × step time).
    const run = runLength(a.plan, a.stepTime.stepSeconds);
    // A stored cluster calibration (shardlens.calibration) sets the kernel speed: the step time says it rests on it.
    const calibrated = a.plan?.cluster.gpu.kernelSpeed !== undefined ? ' (calibrated)' : '';
    out.push(lens(`step ≈ ${formatSeconds(a.stepTime.stepSeconds)}${calibrated}${run ? ` · ${runShort(run)}` : ''}`, ClientCommands.simulateStep, a.uri, range));
  }
  out.push(lens('Dashboard', ClientCommands.openDashboard, a.uri, range));
  if (a.assumptions.length) out.push(lens(`Assumptions (${a.assumptions.length})`, SHOW_ASSUMPTIONS, a.uri, range));
  return out;
}

/** A configuration function that is not the analysed one: its verdict and step time, a click analysing it. */
function sectionLenses(uri: string, s: ConfigSection): CodeLens[] {
  const select = (title: string) => lens(title, ServerExecutedCommands.selectConfiguration, uri, s.range, [uri, s.symbol]);
  const a = s.analysis;
  const v = a && verdictOf(a);
  if (!a?.memory || !v) return [select(`ShardLens: analyse ${s.symbol}`)];
  const step = a.stepTime ? ` · step ≈ ${formatSeconds(a.stepTime.stepSeconds)}` : '';
  return [select(`${verdictTitle(a, v, a.memory.fits)}${step}`), select('Analyse this one')];
}

/** The verdict lens's words: a mark, the verdict in the shared wording, and the cluster unless it is assumed. */
function verdictTitle(a: DocumentAnalysis, v: NonNullable<ReturnType<typeof verdictOf>>, fits: boolean): string {
  const mark = v.conditional ? '$(warning)' : fits ? '$(check)' : '$(error)';
  const where = v.assumed.some((x) => x.path.startsWith('cluster')) ? '' : ` on ${clusterLabel(a)}`;
  return `${mark} ${v.short}${where}`;
}
