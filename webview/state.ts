/**
 * The page's persisted UI state (VS Code keeps it across hide/show and, through the panel serializer, across reloads)
 * and the typed channel to the extension.
 */
import {
  WEBVIEW_PROTOCOL_VERSION, type DashboardModel, type DashboardView, type LayoutsView, type ValidationProgressMessage,
  type ValidationResultView, type WebviewToHostMessage,
} from '../shared/protocol';
import { isDashboardModel, isDashboardView, isLayoutsView, isValidationResult } from './protocol/guards';

interface VsCodeApi {
  postMessage(msg: unknown): void;
  getState(): unknown;
  setState(s: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What the page remembers. */
export interface UiState {
  active: DashboardView;
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
}

const api: VsCodeApi = acquireVsCodeApi();

/** Reads the saved state, dropping anything that no longer passes the guards. */
export function loadState(fallback: DashboardView): UiState {
  const raw = api.getState() as Partial<UiState> | undefined;
  const s: UiState = { active: raw && isDashboardView(raw.active) ? raw.active : fallback };
  if (!raw) return s;
  if (Number.isInteger(raw.stage) && (raw.stage as number) >= 0) s.stage = raw.stage;
  if (raw.zoom && Number.isFinite(raw.zoom.min) && Number.isFinite(raw.zoom.max) && raw.zoom.max > raw.zoom.min) s.zoom = raw.zoom;
  if (isDashboardModel(raw.model)) s.model = raw.model;
  if (isValidationResult(raw.validation)) s.validation = raw.validation;
  if (isLayoutsView(raw.layouts)) { s.layouts = raw.layouts; s.layoutsStale = true; }
  return s;
}

export function saveState(s: UiState): void {
  api.setState(s);
}

/** Sends a typed message to the extension. */
export function send(msg: WebviewToHostMessage): void {
  api.postMessage(msg);
}

export function command(c: Extract<WebviewToHostMessage, { type: 'command' }>['command']): void {
  send({ v: WEBVIEW_PROTOCOL_VERSION, type: 'command', command: c });
}
