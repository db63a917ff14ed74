/**
 * The page's persisted UI state (VS Code keeps it across hide/show and, through the panel serializer, across reloads),
 * the typed channel to the extension, and the deadlines of the page's requests: a request that gets no answer turns
 * into a message with a Retry button, so no view stays on "Loading…".
 */
import {
  WEBVIEW_PROTOCOL_VERSION, type DashboardModel, type DashboardView, type LayoutsView, type SimulationMessage,
  type ValidationProgressMessage, type ValidationResultView, type WebviewToHostMessage,
} from '../shared/protocol/webview';
import { isDashboardModel, isDashboardView, isLayoutsView, isValidationResult } from './protocol/guards';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(s: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What the page asks the extension for and waits on. */
export type Wait = 'model' | 'layouts' | 'simulation';

/** What the page remembers. */
export interface UiState {
  active: DashboardView;
  /** The `data-initial-id` of the last page load whose `data-initial` view was applied (a command asked for it). */
  initialId?: string;
  /** Pipeline stage shown in the memory charts; undefined = the peak stage. */
  stage?: number;
  /** Visible time window of the timeline, seconds. */
  zoom?: { min: number; max: number };
  model?: DashboardModel;
  empty?: string;
  progress?: Omit<ValidationProgressMessage, 'v' | 'type'>;
  validation?: ValidationResultView;
  /** The planner's layouts for `layouts.uri`; stale once a newer model arrives. */
  layouts?: LayoutsView;
  /** True when the layouts no longer match the model (re-requested when the Layouts view shows). */
  layoutsStale?: boolean;
  /** The step simulation of `simulation.uri` (not persisted: fetched again when the view shows). */
  simulation?: Omit<SimulationMessage, 'v' | 'type'>;
  /** Workspace Trust as the extension reports it (runs are offered only when trusted). */
  trusted?: boolean;
  /** Why a request got no usable answer, per request. */
  failed?: Partial<Record<Wait, string>>;
}

const api: VsCodeApi = acquireVsCodeApi();

/** Reads the saved state, dropping anything that no longer passes the guards. */
export function loadState(fallback: DashboardView): UiState {
  const raw = api.getState() as Partial<UiState> | undefined;
  const s: UiState = { active: raw && isDashboardView(raw.active) ? raw.active : fallback };
  if (!raw) return s;
  if (typeof raw.initialId === 'string') s.initialId = raw.initialId;
  if (Number.isInteger(raw.stage) && (raw.stage as number) >= 0) s.stage = raw.stage;
  if (raw.zoom && Number.isFinite(raw.zoom.min) && Number.isFinite(raw.zoom.max) && raw.zoom.max > raw.zoom.min) s.zoom = raw.zoom;
  if (isDashboardModel(raw.model)) s.model = raw.model;
  if (isValidationResult(raw.validation)) s.validation = raw.validation;
  if (isLayoutsView(raw.layouts)) { s.layouts = raw.layouts; s.layoutsStale = true; }
  return s;
}

export function saveState(s: UiState): void {
  // The simulation can be large and is cheap to fetch again; failures are about this page load only.
  const { simulation: _sim, failed: _failed, ...kept } = s;
  api.setState(kept);
}

/** Sends a typed message to the extension. */
export function send(msg: WebviewToHostMessage): void {
  api.postMessage(msg);
}

export function command(c: Extract<WebviewToHostMessage, { type: 'command' }>['command']): void {
  send({ v: WEBVIEW_PROTOCOL_VERSION, type: 'command', command: c });
}

/** How long the page waits for each answer before it says so (the extension's own deadlines are shorter). */
export const WAIT_MS: Readonly<Record<Wait, number>> = { model: 25_000, layouts: 70_000, simulation: 40_000 };

const timers = new Map<Wait, ReturnType<typeof setTimeout>>();

/** Sends a request and arms its deadline; `onLate` runs if no answer arrives in time. */
export function ask(what: Wait, msg: WebviewToHostMessage, ui: UiState, onLate: () => void): void {
  if (ui.failed) delete ui.failed[what];
  clearTimeout(timers.get(what));
  timers.set(what, setTimeout(() => {
    timers.delete(what);
    ui.failed = { ...ui.failed, [what]: `No answer from the ShardLens extension after ${WAIT_MS[what] / 1000} s.` };
    onLate();
  }, WAIT_MS[what]));
  send(msg);
}

/** An answer (or a failure the extension reported) arrived: disarm the deadline. */
export function answered(what: Wait): void {
  clearTimeout(timers.get(what));
  timers.delete(what);
}

/** True while a request is in flight. */
export function waiting(what: Wait): boolean {
  return timers.has(what);
}
