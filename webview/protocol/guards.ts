/**
 * Type guards for every message between the extension and its webviews (types in shared/protocol.ts).
 * Both sides call them on arrival; anything that fails a guard is ignored and logged, never acted upon.
 * Pure TypeScript: no DOM, no vscode, so the extension and the unit tests import it too.
 */
import {
  DASHBOARD_VIEWS, MEMORY_COMPONENTS, TIMELINE_KINDS, WEBVIEW_COMMANDS, WEBVIEW_PROTOCOL_VERSION,
  type DashboardModel, type DashboardView, type HostToWebviewMessage, type LayoutRowView, type LayoutsView,
  type OracleResultView, type SimulationView, type StageBar, type ValidationResultView, type WebviewToHostMessage,
} from '../../shared/protocol';

type Obj = Record<string, unknown>;

const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const isStr = (x: unknown): x is string => typeof x === 'string';
/** A finite, non-negative number: the only kind of figure the dashboards draw. */
const isAmount = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x) && x >= 0;
const isInt = (x: unknown): x is number => isAmount(x) && Number.isInteger(x);
const isArr = <T>(x: unknown, item: (y: unknown) => y is T): x is T[] => Array.isArray(x) && x.every(item);
const oneOf = <T extends string>(values: readonly T[]) => (x: unknown): x is T => isStr(x) && (values as readonly string[]).includes(x);

export const isDashboardView = oneOf<DashboardView>(DASHBOARD_VIEWS);

/** A record whose values are all finite non-negative numbers (and whose keys, if `keys` is given, are among them). */
function isAmountRecord(x: unknown, keys?: readonly string[]): boolean {
  return isObj(x) && Object.entries(x).every(([k, v]) => isAmount(v) && (!keys || keys.includes(k)));
}

function isStageBar(x: unknown): x is StageBar {
  return isObj(x) && isInt(x.stage) && isAmountRecord(x.bytes, MEMORY_COMPONENTS)
    && isAmount(x.peakAllocatedBytes) && isAmount(x.peakReservedBytes);
}

function isVariant(x: unknown): boolean {
  return isObj(x) && isStr(x.id) && isStr(x.label) && typeof x.current === 'boolean' && isArr(x.stages, isStageBar);
}

function isSweep(x: unknown): boolean {
  if (!isObj(x) || !isArr(x.dpSizes, isInt) || !Array.isArray(x.series)) return false;
  const n = x.dpSizes.length;
  return x.series.every((s) => isObj(s) && isStr(s.label) && isArr(s.bytes, isAmount) && s.bytes.length === n);
}

function isCommRow(x: unknown): boolean {
  return isObj(x) && isStr(x.label) && isStr(x.collective) && isStr(x.axis) && isStr(x.tier)
    && isAmount(x.bytesPerStep) && isAmount(x.seconds) && isAmount(x.exposedSeconds) && x.exposedSeconds <= x.seconds * (1 + 1e-9);
}

const isKind = oneOf(TIMELINE_KINDS);

function isSegment(x: unknown): boolean {
  return isObj(x) && isKind(x.kind) && isAmount(x.start) && isAmount(x.end) && x.end >= x.start
    && (x.microbatch === undefined || isInt(x.microbatch)) && (x.label === undefined || isStr(x.label));
}

export function isSimulationView(x: unknown): x is SimulationView {
  return isObj(x) && isAmount(x.stepSeconds)
    && isArr(x.lanes, (l): l is unknown => isObj(l) && isInt(l.stage) && (l.stream === undefined || l.stream === 'compute' || l.stream === 'comm') && isArr(l.segments, (s): s is unknown => isSegment(s)))
    && isArr(x.memory, (m): m is unknown => isObj(m) && isInt(m.stage)
      && isArr(m.points, (p): p is unknown => isObj(p) && isAmount(p.t) && isAmount(p.bytes)));
}

const isSeverity = oneOf(['error', 'warning', 'info'] as const);

export function isDashboardModel(x: unknown): x is DashboardModel {
  if (!isObj(x)) return false;
  const c = x.cluster;
  return isStr(x.uri) && isStr(x.fileName) && isStr(x.format) && isStr(x.modelName) && isAmount(x.parameters)
    && isObj(c) && isStr(c.gpuName) && isAmount(c.gpuMemoryBytes) && isInt(c.gpusPerNode) && isInt(c.nodes)
    && typeof x.fits === 'boolean' && isAmount(x.peakBytes) && isInt(x.peakStage)
    && (x.units === 'GiB' || x.units === 'GB')
    && isArr(x.variants, (v): v is unknown => isVariant(v))
    && (x.sweep === undefined || isSweep(x.sweep))
    && isArr(x.communication, (r): r is unknown => isCommRow(r))
    && (x.stepSeconds === undefined || isAmount(x.stepSeconds))
    && (x.simulation === undefined || isSimulationView(x.simulation))
    && isArr(x.assumptions, isStr)
    && isArr(x.problems, (p): p is unknown => isObj(p) && isSeverity(p.severity) && isStr(p.message));
}

const isFiniteNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

function isOracleRow(x: unknown): boolean {
  return isObj(x) && isStr(x.category) && isAmount(x.oracle) && isAmount(x.estimate) && isFiniteNum(x.relError) && typeof x.ok === 'boolean';
}

export function isOracleResult(x: unknown): x is OracleResultView {
  return isObj(x) && isStr(x.torch) && isStr(x.model) && isStr(x.reproduced) && isInt(x.layers) && isArr(x.notes, isStr)
    && typeof x.ok === 'boolean'
    && isArr(x.stages, (st): st is unknown => isObj(st) && isStr(st.label) && typeof st.ok === 'boolean' && isArr(st.rows, (r): r is unknown => isOracleRow(r)));
}

export function isValidationResult(x: unknown): x is ValidationResultView {
  return isObj(x) && (x.source === 'tfjs' || x.source === 'torch' || x.source === 'oracle') && isStr(x.backend) && isAmount(x.parameters)
    && (x.reportPath === undefined || isStr(x.reportPath))
    && (x.oracle === undefined || isOracleResult(x.oracle))
    && isArr(x.runs, (r): r is unknown => isObj(r) && isStr(r.mode)
      && isArr(r.ranks, (k): k is unknown => isObj(k) && isInt(k.rank) && isAmountRecord(k.measured) && isAmountRecord(k.estimated)));
}

/** A parallel degree: a whole number of at least 1. */
const isDegree = (x: unknown): x is number => isInt(x) && x >= 1;

export function isLayoutRow(x: unknown): x is LayoutRowView {
  return isObj(x) && isInt(x.index)
    && isDegree(x.tp) && isDegree(x.pp) && isDegree(x.vpp) && isDegree(x.cp) && isDegree(x.ep) && isDegree(x.dp)
    && isStr(x.sharding) && isDegree(x.microBatch) && isDegree(x.gradAccum) && isStr(x.recompute) && isStr(x.offload)
    && isAmount(x.stepSeconds) && isAmount(x.peakBytes) && isStr(x.delta) && isArr(x.notes, isStr) && typeof x.applicable === 'boolean';
}

export function isLayoutsView(x: unknown): x is LayoutsView {
  return isObj(x) && isStr(x.uri) && isInt(x.gpus) && isAmount(x.memoryLimitBytes) && isInt(x.evaluated) && isAmount(x.seconds)
    && isArr(x.rows, isLayoutRow)
    && isArr(x.pareto, (p): p is unknown => isObj(p) && isStr(p.label) && isAmount(p.stepSeconds) && isAmount(p.peakBytes))
    && (x.message === undefined || isStr(x.message));
}

const isProgressState = oneOf(['running', 'done', 'failed', 'cancelled'] as const);

/** True when `x` is a well-formed message from the extension to a webview. */
export function isHostToWebviewMessage(x: unknown): x is HostToWebviewMessage {
  if (!isObj(x) || x.v !== WEBVIEW_PROTOCOL_VERSION) return false;
  switch (x.type) {
    case 'model': return isDashboardModel(x.model);
    case 'empty': return isStr(x.reason);
    case 'show': return isDashboardView(x.view);
    case 'validationProgress':
      return isProgressState(x.state) && isAmount(x.fraction) && x.fraction <= 1 && isStr(x.message);
    case 'validationResult': return isValidationResult(x.result);
    case 'layouts': return isLayoutsView(x.layouts);
    default: return false;
  }
}

const isCommand = oneOf(WEBVIEW_COMMANDS);

/** True when `x` is a well-formed message from a webview to the extension. */
export function isWebviewToHostMessage(x: unknown): x is WebviewToHostMessage {
  if (!isObj(x) || x.v !== WEBVIEW_PROTOCOL_VERSION) return false;
  switch (x.type) {
    case 'ready': return x.view === 'all' || isDashboardView(x.view);
    case 'command': return isCommand(x.command);
    case 'planLayouts': return true;
    case 'applyLayout': return isStr(x.uri) && x.uri.length > 0 && isInt(x.index) && x.index < 100;
    default: return false;
  }
}

/** A short description of a rejected message for the log (type and keys only, never the whole payload). */
export function describeRejected(x: unknown): string {
  if (!isObj(x)) return `non-object message (${x === null ? 'null' : typeof x})`;
  return `message type=${JSON.stringify(x.type)} v=${JSON.stringify(x.v)} keys=[${Object.keys(x).slice(0, 8).join(',')}]`;
}
