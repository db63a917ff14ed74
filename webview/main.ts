/**
 * Entry point of every dashboard page. `body[data-view]` says which dashboard this page is ("all" = the panel with
 * tabs). Messages from the extension are checked with the protocol guards; malformed ones are ignored and logged.
 */
import { WEBVIEW_PROTOCOL_VERSION, type DashboardView } from '../shared/protocol/webview';
import { applyThemeDefaults, destroyCharts } from './charts/theme';
import { el } from './dom';
import { describeRejected, isDashboardView, isHostToWebviewMessage } from './protocol/guards';
import { answered, ask, loadState, saveState, type UiState } from './state';
import { STYLES } from './styles';
import { registerToolkit, tabs } from './ui/toolkit';
import { header, statusLine } from './views/header';
import { renderCommunication } from './views/communication';
import { renderLayouts, requestLayouts } from './views/layouts';
import { renderMemory } from './views/memory';
import { renderSimulation, requestSimulation } from './views/simulation';
import { renderValidation } from './views/validation';

const rawView = document.body.dataset.view;
const pageView: DashboardView | 'all' = rawView === 'all' || isDashboardView(rawView) ? rawView : 'all';
const ui: UiState = loadState(pageView === 'all' ? 'memory' : pageView);
// A page loaded for one dashboard by a command (e.g. Simulate Step) starts on it, once per load request; a page that
// VS Code reloads on its own (hidden and shown again, or a window reload) keeps its saved tab.
const initial = document.body.dataset.initial;
const initialId = document.body.dataset.initialId;
if (isDashboardView(initial) && initialId && initialId !== ui.initialId) { ui.active = initial; ui.initialId = initialId; }
const app = document.getElementById('app') ?? document.body;
const TITLES: Record<DashboardView, string> = { memory: 'Memory', communication: 'Communication', simulation: 'Simulate Step', validation: 'Validation', layouts: 'Layouts' };
const VIEWS: readonly DashboardView[] = ['memory', 'communication', 'simulation', 'validation', 'layouts'];

function save(): void {
  saveState(ui);
}

/** Asks for the current model again (the first request and every Retry). */
function requestModel(): void {
  ask('model', { v: WEBVIEW_PROTOCOL_VERSION, type: 'ready', view: pageView }, ui, render);
}

/** True when `view` is on screen in this page. */
const shown = (view: DashboardView) => pageView === view || (pageView === 'all' && ui.active === view);

/** Renders one dashboard body (views that need a model stay empty without one: the status line says why, once). */
function body(view: DashboardView): HTMLElement {
  const host = el('div', 'view');
  host.dataset.dashboard = view;
  const m = ui.model;
  if (view === 'validation') renderValidation(host, ui, m);
  else if (!m) return host;
  else if (view === 'memory') renderMemory(host, m, ui, () => { save(); render(); });
  else if (view === 'communication') renderCommunication(host, m);
  else if (view === 'layouts') renderLayouts(host, m, ui, shown('layouts'), render);
  else renderSimulation(host, m, ui, save, shown('simulation'), render);
  return host;
}

function render(): void {
  destroyCharts();
  app.replaceChildren();
  app.appendChild(ui.model ? header(ui.model, pageView === 'all' || pageView === 'memory') : statusLine(ui, requestModel));
  if (pageView !== 'all') {
    app.appendChild(body(pageView));
    return;
  }
  app.appendChild(tabs(VIEWS.map((v) => ({ id: v, title: TITLES[v], body: body(v) })), ui.active, (id) => {
    if (!isDashboardView(id) || id === ui.active) return;
    ui.active = id;
    save();
    if (id === 'layouts') requestLayouts(ui, render);
    if (id === 'simulation') requestSimulation(ui, render);
  }));
}

window.addEventListener('message', (e: MessageEvent<unknown>) => {
  const msg = e.data;
  if (!isHostToWebviewMessage(msg)) {
    console.warn(`ShardLens: ignored a malformed message: ${describeRejected(msg)}`);
    return;
  }
  switch (msg.type) {
    case 'model':
      answered('model');
      if (ui.model?.uri !== msg.model.uri) { ui.zoom = undefined; ui.stage = undefined; }
      ui.model = msg.model;
      ui.empty = undefined;
      if (ui.failed) delete ui.failed.model;
      if (ui.layouts) ui.layoutsStale = true;
      // The timeline belongs to the previous version of the file: fetch it again when it shows.
      ui.simulation = undefined;
      break;
    case 'empty':
      answered('model');
      ui.model = undefined;
      ui.empty = msg.reason;
      if (ui.failed) delete ui.failed.model;
      break;
    case 'failed':
      answered(msg.what);
      ui.failed = { ...ui.failed, [msg.what]: msg.reason };
      break;
    case 'show':
      ui.active = msg.view;
      break;
    case 'environment':
      ui.trusted = msg.trusted;
      break;
    case 'validationProgress':
      ui.progress = { state: msg.state, fraction: msg.fraction, message: msg.message };
      break;
    case 'validationResult':
      ui.validation = msg.result;
      break;
    case 'layouts':
      answered('layouts');
      ui.layouts = msg.layouts;
      ui.layoutsStale = false;
      break;
    case 'simulation':
      answered('simulation');
      ui.simulation = { uri: msg.uri, simulation: msg.simulation };
      break;
  }
  save();
  render();
});

new MutationObserver(() => { applyThemeDefaults(); render(); }).observe(document.body, { attributes: true, attributeFilter: ['class'] });

registerToolkit();
const sheet = new CSSStyleSheet();
sheet.replaceSync(STYLES);
document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
applyThemeDefaults();
render();
requestModel();
