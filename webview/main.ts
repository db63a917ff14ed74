/**
 * Entry point of every dashboard page. `body[data-view]` says which dashboard this page is ("all" = the panel with
 * tabs). Messages from the extension are checked with the protocol guards; malformed ones are ignored and logged.
 */
import { WEBVIEW_PROTOCOL_VERSION, type DashboardModel, type DashboardView } from '../shared/protocol';
import { applyThemeDefaults, destroyCharts } from './charts/theme';
import { el } from './dom';
import { formatBytes, formatCount, formatSeconds } from '../shared/units';
import { describeRejected, isDashboardView, isHostToWebviewMessage } from './protocol/guards';
import { loadState, saveState, send, type UiState } from './state';
import { STYLES } from './styles';
import { badge, registerToolkit, tabs } from './ui/toolkit';
import { renderCommunication } from './views/communication';
import { renderLayouts, requestLayouts } from './views/layouts';
import { renderMemory } from './views/memory';
import { renderSimulation } from './views/simulation';
import { renderValidation } from './views/validation';

const rawView = document.body.dataset.view;
const pageView: DashboardView | 'all' = rawView === 'all' || isDashboardView(rawView) ? rawView : 'all';
const ui: UiState = loadState(pageView === 'all' ? 'memory' : pageView);
// A page opened for one dashboard (e.g. by Simulate Step) starts on it; a restored page keeps its saved tab.
const initial = document.body.dataset.initial;
if (isDashboardView(initial)) ui.active = initial;
const app = document.getElementById('app') ?? document.body;
const TITLES: Record<DashboardView, string> = { memory: 'Memory', communication: 'Communication', simulation: 'Simulate Step', validation: 'Validation', layouts: 'Layouts' };

function save(): void {
  saveState(ui);
}

/** The file, model, cluster and verdict above every dashboard; problems and assumptions only where there is room. */
function summary(m: DashboardModel, full: boolean): HTMLElement {
  const h = el('header');
  h.appendChild(el('h1', undefined, m.fileName));
  const line = el('div', 'summary');
  line.id = 'summary';
  line.dataset.peakBytes = String(m.peakBytes);
  line.dataset.fits = String(m.fits);
  line.dataset.uri = m.uri;
  line.append(
    badge(m.fits ? 'fits' : 'does not fit', m.fits ? 'ok' : 'bad'),
    el('span', undefined, `Peak ${formatBytes(m.peakBytes, m.units)} of ${formatBytes(m.cluster.gpuMemoryBytes, m.units)} per GPU (stage ${m.peakStage})`),
    el('span', 'muted', `${m.modelName}, ${formatCount(m.parameters)} parameters`),
    el('span', 'muted', `${m.cluster.nodes || '?'} × ${m.cluster.gpusPerNode || '?'} × ${m.cluster.gpuName}`),
  );
  if (m.stepSeconds) line.appendChild(el('span', 'muted', `step ${formatSeconds(m.stepSeconds)}`));
  h.appendChild(line);
  if (!full) return h;
  if (m.problems.length) {
    const ul = el('ul', 'problems');
    for (const p of m.problems.slice(0, 8)) ul.appendChild(el('li', p.severity, p.message));
    h.appendChild(ul);
  }
  if (m.assumptions.length) {
    const d = el('details', 'data');
    d.appendChild(el('summary', undefined, `${m.assumptions.length} assumption${m.assumptions.length === 1 ? '' : 's'}`));
    const ul = el('ul');
    for (const a of m.assumptions) ul.appendChild(el('li', undefined, a));
    d.appendChild(ul);
    h.appendChild(d);
  }
  return h;
}

/** Renders one dashboard body. */
function body(view: DashboardView): HTMLElement {
  const host = el('div', 'view');
  host.dataset.dashboard = view;
  const m = ui.model;
  if (view === 'validation') renderValidation(host, ui, m?.units ?? 'GiB');
  else if (!m) host.appendChild(el('p', 'muted', ui.empty ?? 'Waiting for the estimate…'));
  else if (view === 'memory') renderMemory(host, m, ui, () => { save(); render(); });
  else if (view === 'communication') renderCommunication(host, m);
  else if (view === 'layouts') renderLayouts(host, m, ui, pageView === 'layouts' || ui.active === 'layouts');
  else renderSimulation(host, m, ui, save);
  return host;
}

function render(): void {
  destroyCharts();
  app.replaceChildren();
  if (ui.model) app.appendChild(summary(ui.model, pageView === 'all' || pageView === 'memory'));
  else if (ui.empty) app.appendChild(el('p', 'muted', ui.empty));
  if (pageView !== 'all') {
    app.appendChild(body(pageView));
  } else {
    const views: DashboardView[] = ['memory', 'communication', 'simulation', 'validation', 'layouts'];
    app.appendChild(tabs(views.map((v) => ({ id: v, title: TITLES[v], body: body(v) })), ui.active, (id) => {
      if (isDashboardView(id)) { ui.active = id; save(); }
      if (id === 'layouts') requestLayouts(ui);
    }));
  }
}

window.addEventListener('message', (e: MessageEvent<unknown>) => {
  const msg = e.data;
  if (!isHostToWebviewMessage(msg)) {
    console.warn(`ShardLens: ignored a malformed message: ${describeRejected(msg)}`);
    return;
  }
  switch (msg.type) {
    case 'model':
      if (ui.model?.uri !== msg.model.uri) { ui.zoom = undefined; ui.stage = undefined; }
      ui.model = msg.model;
      ui.empty = undefined;
      if (ui.layouts) ui.layoutsStale = true;
      break;
    case 'empty':
      ui.model = undefined;
      ui.empty = msg.reason;
      break;
    case 'show':
      ui.active = msg.view;
      break;
    case 'validationProgress':
      ui.progress = { state: msg.state, fraction: msg.fraction, message: msg.message };
      break;
    case 'validationResult':
      ui.validation = msg.result;
      break;
    case 'layouts':
      ui.layouts = msg.layouts;
      ui.layoutsStale = false;
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
send({ v: WEBVIEW_PROTOCOL_VERSION, type: 'ready', view: pageView });
