/**
 * Type guards for every message between the extension and its webviews (types in shared/protocol.ts).
 * Both sides call them on arrival; anything that fails a guard is ignored and logged, never acted upon.
 * Pure TypeScript: no DOM, no vscode, so the extension and the unit tests import it too.
 */
import {
  DASHBOARD_VIEWS, MEMORY_COMPONENTS, WEBVIEW_COMMANDS, WEBVIEW_PROTOCOL_VERSION,
  type DashboardModel, type DashboardView, type HostToWebviewMessage, type LayoutRowView, type LayoutsView,
  type OracleResultView, type SimulationAnswer, type StageBar, type ValidationResultView, type WebviewToHostMessage,
} from '../../shared/protocol/webview';
import type { Collective } from '../../shared/comm/types';
import type { Simulation } from '../../shared/sim/types';
import type { OperatorTerm } from '../../shared/time/types';

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

const isCollectiveKind = oneOf(['all-reduce', 'reduce-scatter', 'all-gather', 'all-to-all', 'send-recv'] as const);
const isGroup = oneOf(['dp', 'tp', 'pp', 'cp', 'ep'] as const);
const isTier = oneOf(['nvlink', 'network', 'pcie'] as const);

/** A collective as the core lists it (shared/comm/types.ts), with finite non-negative figures. */
export function isCollective(x: unknown): x is Collective {
  return isObj(x) && isStr(x.id) && isStr(x.label) && isCollectiveKind(x.kind) && isGroup(x.group) && isInt(x.groupSize) && isInt(x.stage)
    && isAmount(x.bytesPerOccurrence) && isAmount(x.countPerStep) && isAmount(x.bytesPerRank) && isStr(x.algorithm) && isTier(x.tier)
    && isAmount(x.busBandwidth) && isAmount(x.seconds) && typeof x.overlapped === 'boolean' && isAmount(x.exposedSeconds)
    && x.exposedSeconds <= x.seconds * (1 + 1e-9) && isStr(x.formula) && isStr(x.citation);
}

const isBlockKind = oneOf(['forward', 'backward', 'recompute', 'comm', 'idle', 'optimizer'] as const);
/** Micro-batch and chunk indices: whole numbers, −1 for step-level blocks. */
const isIndex = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x) && x >= -1;

function isBlock(x: unknown): boolean {
  return isObj(x) && isBlockKind(x.kind) && isIndex(x.microbatch) && isIndex(x.chunk) && isAmount(x.start) && isAmount(x.end)
    && x.end >= x.start && isStr(x.label) && (x.lane === 'compute' || x.lane === 'comm');
}

/** Seconds per block kind on the compute stream: every kind present, each finite and non-negative. */
function isKindSeconds(x: unknown): boolean {
  return isObj(x) && (['forward', 'backward', 'recompute', 'comm', 'idle', 'optimizer'] as const).every((k) => isAmount(x[k]));
}

/** The span of passes not drawn: a forward interval and a whole, positive pass count. */
function isElided(x: unknown): boolean {
  return isObj(x) && isAmount(x.start) && isAmount(x.end) && x.end >= x.start && isInt(x.passes) && x.passes > 0;
}

function isStageTimeline(x: unknown): boolean {
  return isObj(x) && isInt(x.stage) && isArr(x.blocks, (b): b is unknown => isBlock(b)) && isKindSeconds(x.computeSeconds)
    && (x.elided === undefined || isElided(x.elided))
    && isArr(x.memory, (p): p is unknown => isObj(p) && isAmount(p.t) && isAmount(p.bytes))
    && isAmount(x.peakBytes) && isAmount(x.exposedCommSeconds);
}

/** The core's step simulation (shared/sim/types.ts) as the dashboards read it. */
export function isSimulation(x: unknown): x is Simulation {
  return isObj(x) && x.ok === true && isAmount(x.stepSeconds) && isInt(x.pp) && isInt(x.microbatches)
    && isArr(x.stages, (st): st is unknown => isStageTimeline(st)) && isArr(x.collectives, isCollective);
}

/**
 * The operator terms of a simulation that the dashboard can show (finite non-negative seconds, text fields): a
 * malformed term is left out, never drawn. The simulation's own guard does not require them.
 */
export function operatorTermsOf(sim: Simulation): OperatorTerm[] {
  const terms: unknown = (sim as { operatorTerms?: unknown }).operatorTerms;
  if (!Array.isArray(terms)) return [];
  return terms.filter((t): t is OperatorTerm => isObj(t) && isStr(t.name) && isStr(t.label) && isAmount(t.forward) && isAmount(t.backward)
    && isAmount(t.recompute) && isAmount(t.stepSeconds) && isStr(t.formula) && isStr(t.citation) && isStr(t.provenance));
}

/** The simulation's lines on where its kernel and collective rates come from (strings only). */
export function provenanceOf(sim: Simulation): string[] {
  const p: unknown = (sim as { provenance?: unknown }).provenance;
  return Array.isArray(p) ? p.filter(isStr).slice(0, 20) : [];
}

function isSimulationAnswer(x: unknown): x is SimulationAnswer {
  return isObj(x) && ((x.ok === true && isSimulation(x.result)) || (x.ok === false && isStr(x.message)));
}

function isDerivation(x: unknown): boolean {
  return isObj(x) && isInt(x.stage)
    && isArr(x.terms, (t): t is unknown => isObj(t) && isStr(t.label) && isAmount(t.bytes) && isStr(t.formula) && isStr(t.citation))
    && isArr(x.symbols, (y): y is unknown => isObj(y) && isStr(y.symbol) && isStr(y.meaning) && (y.value === undefined || isStr(y.value)) && (y.source === undefined || isStr(y.source)));
}

function isVerdict(x: unknown): boolean {
  return isObj(x) && isStr(x.headline) && isStr(x.short) && typeof x.conditional === 'boolean';
}

function isAssumption(x: unknown): boolean {
  return isObj(x) && isStr(x.path) && isStr(x.value) && isStr(x.detail) && (x.command === undefined || isStr(x.command));
}

const isSeverity = oneOf(['error', 'warning', 'info'] as const);

export function isDashboardModel(x: unknown): x is DashboardModel {
  if (!isObj(x)) return false;
  const c = x.cluster;
  return isStr(x.uri) && isStr(x.fileName) && isStr(x.format) && isStr(x.modelName) && isAmount(x.parameters)
    && isObj(c) && isStr(c.gpuName) && isAmount(c.gpuMemoryBytes) && isInt(c.gpusPerNode) && isInt(c.nodes)
    && typeof x.fits === 'boolean' && isVerdict(x.verdict) && isAmount(x.peakReservedBytes) && isAmount(x.peakAllocatedBytes) && isInt(x.peakStage)
    && (x.units === 'GiB' || x.units === 'GB')
    && isArr(x.variants, (v): v is unknown => isVariant(v))
    && (x.sweep === undefined || isSweep(x.sweep))
    && isArr(x.communication, isCollective)
    && (x.stepSeconds === undefined || isAmount(x.stepSeconds))
    && (x.run === undefined || (isObj(x.run) && isInt(x.run.steps) && x.run.steps >= 1 && isAmount(x.run.seconds) && isInt(x.run.gpus) && isAmount(x.run.gpuHours)))
    && isArr(x.assumptions, (a): a is unknown => isAssumption(a))
    && (x.derivation === undefined || isDerivation(x.derivation))
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
    && (x.reportPath === undefined || isStr(x.reportPath)) && (x.configUri === undefined || isStr(x.configUri))
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
    && isAmount(x.stepSeconds) && isAmount(x.peakBytes) && isStr(x.delta) && isArr(x.notes, isStr) && typeof x.applicable === 'boolean'
    && (x.refusal === undefined || isStr(x.refusal));
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
    case 'simulation': return isStr(x.uri) && isSimulationAnswer(x.simulation);
    case 'environment': return typeof x.trusted === 'boolean';
    case 'failed': return (x.what === 'model' || x.what === 'layouts' || x.what === 'simulation') && isStr(x.reason);
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
    case 'simulate': return true;
    default: return false;
  }
}

/** A short description of a rejected message for the log (type and keys only, never the whole payload). */
export function describeRejected(x: unknown): string {
  if (!isObj(x)) return `non-object message (${x === null ? 'null' : typeof x})`;
  return `message type=${JSON.stringify(x.type)} v=${JSON.stringify(x.v)} keys=[${Object.keys(x).slice(0, 8).join(',')}]`;
}
