/**
 * Layouts dashboard: the planner's Pareto front (peak memory vs step time) and its top layouts, each with the delta
 * applying it would bring and an Apply button. The layouts are asked for lazily, only when this view shows.
 */
import { WEBVIEW_PROTOCOL_VERSION, type DashboardModel, type LayoutRowView, type LayoutsView } from '../../shared/protocol/webview';
import { makeChart, palette } from '../charts/theme';
import { el, section } from '../dom';
import { formatBytes, formatCount, formatSeconds, toUnit } from '../../shared/units';
import { ask, send, waiting, type UiState } from '../state';
import { button, spinner } from '../ui/toolkit';

/** The model the last request was sent for (one request per model message). */
let requestedFor: DashboardModel | undefined;

/** True when the layouts shown do not belong to the current model. */
function needsLayouts(ui: UiState): boolean {
  return !!ui.model && (!ui.layouts || ui.layouts.uri !== ui.model.uri || !!ui.layoutsStale);
}

/** Asks the extension for the layouts of the current model, once per model (and again on Retry). */
export function requestLayouts(ui: UiState, rerender: () => void, force = false): void {
  if (!needsLayouts(ui) || waiting('layouts') || (!force && (requestedFor === ui.model || ui.failed?.layouts))) return;
  requestedFor = ui.model;
  ask('layouts', { v: WEBVIEW_PROTOCOL_VERSION, type: 'planLayouts' }, ui, rerender);
}

/** "tp 2 · pp 1 · vpp 1 · cp 1 · ep 1 · dp 4". */
function axes(r: LayoutRowView): string {
  return `tp ${r.tp} · pp ${r.pp} · vpp ${r.vpp} · cp ${r.cp} · ep ${r.ep} · dp ${r.dp}`;
}

/** The parallel degrees that are not 1, then DP: "tp 2 · pp 4 · dp 2". */
function shortAxes(r: LayoutRowView): string {
  const parts = (['tp', 'pp', 'vpp', 'cp', 'ep'] as const).filter((k) => r[k] > 1).map((k) => `${k} ${r[k]}`);
  return [...parts, `dp ${r.dp}`].join(' · ');
}

function paretoChart(s: HTMLElement, v: LayoutsView, units: 'GiB' | 'GB'): void {
  const colors = palette();
  const point = (x: { stepSeconds: number; peakBytes: number }) => ({ x: x.stepSeconds, y: toUnit(x.peakBytes, units) });
  const labels = [v.pareto.map((p) => p.label), v.rows.map((r) => `#${r.index + 1} ${axes(r)} · ${r.sharding}`)];
  makeChart(s, 'chart-layouts-pareto', 'Peak memory per GPU against step time: the Pareto front and the top layouts', {
    type: 'scatter',
    data: {
      datasets: [
        { label: 'Pareto front', data: v.pareto.map(point), showLine: true, borderColor: colors[0], backgroundColor: colors[0], pointRadius: 3 },
        { label: 'Top layouts', data: v.rows.map(point), borderColor: colors[1], backgroundColor: colors[1], pointRadius: 5, pointStyle: 'rectRot' },
      ],
    },
    options: {
      scales: {
        x: { type: 'linear', title: { display: true, text: 'step time (s)' } },
        y: { type: 'linear', title: { display: true, text: `peak per GPU (${units})` }, suggestedMin: 0, suggestedMax: toUnit(v.memoryLimitBytes, units) },
      },
      plugins: {
        tooltip: {
          callbacks: {
            label: (c) => `${labels[c.datasetIndex]?.[c.dataIndex] ?? ''}: ${formatSeconds(c.parsed.x ?? 0)}, ${(c.parsed.y ?? 0).toFixed(1)} ${units}`,
          },
        },
      },
    },
  }, 260);
}

/** What the Change cell says: the delta and notes, why the layout cannot be applied, or that the file has it. */
function changeText(r: LayoutRowView): string {
  if (r.refusal) return `Cannot apply: ${r.refusal}`;
  return [r.delta, ...r.notes].filter(Boolean).join(' — ') || (r.applicable ? '' : 'the file already has this layout');
}

/**
 * The top layouts, best first. Apply sits in the second column and the long texts wrap, so the table fits the panel
 * and every Apply button is reachable without scrolling sideways.
 */
function layoutsTable(v: LayoutsView, units: 'GiB' | 'GB'): HTMLElement {
  const wrap = el('div', 'table-wrap');
  const t = el('table', 'wrapping');
  t.id = 'layouts-table';
  const head = el('tr');
  for (const h of ['#', '', 'Step', 'Peak', 'Layout', 'Change']) {
    const th = el('th', h === 'Layout' || h === 'Change' ? 'text' : undefined, h);
    th.scope = 'col';
    head.appendChild(th);
  }
  const thead = el('thead');
  thead.appendChild(head);
  const tbody = el('tbody');
  for (const r of v.rows) {
    const tr = el('tr');
    tr.dataset.index = String(r.index);
    tr.dataset.stepSeconds = String(r.stepSeconds);
    tr.dataset.peakBytes = String(r.peakBytes);
    const rank = el('th', undefined, String(r.index + 1));
    rank.scope = 'row';
    tr.appendChild(rank);
    const cell = el('td');
    cell.appendChild(button('Apply', () => send({ v: WEBVIEW_PROTOCOL_VERSION, type: 'applyLayout', uri: v.uri, index: r.index }), {
      id: `apply-layout-${r.index}`, disabled: !r.applicable, secondary: r.index > 0,
      title: r.applicable ? `Write this layout into the file (${r.delta})` : r.refusal ?? 'Nothing to write: the file already has this layout',
    }));
    tr.appendChild(cell);
    tr.append(el('td', undefined, formatSeconds(r.stepSeconds)), el('td', undefined, formatBytes(r.peakBytes, units)));
    const layout = [shortAxes(r), r.sharding, `micro ${r.microBatch} × ${r.gradAccum}`, r.recompute !== 'none' ? `recompute ${r.recompute}` : '', r.offload !== 'none' ? `offload ${r.offload}` : '']
      .filter(Boolean).join(' · ');
    tr.append(el('td', 'text', layout), el('td', r.refusal ? 'text refused' : 'text', changeText(r)));
    tbody.appendChild(tr);
  }
  t.append(thead, tbody);
  wrap.appendChild(t);
  return wrap;
}

/** Renders the Layouts dashboard; `visible` says whether it is on screen (only then are layouts requested). */
export function renderLayouts(host: HTMLElement, m: DashboardModel, ui: UiState, visible: boolean, rerender: () => void): void {
  const s = section('Layouts', 'layouts');
  const v = ui.layouts && ui.layouts.uri === m.uri ? ui.layouts : undefined;
  if (visible) requestLayouts(ui, rerender);
  const why = ui.failed?.layouts;
  if (why) {
    const p = el('p', 'state-failed', why);
    p.id = 'layouts-failed';
    s.append(p, button('Retry', () => { if (ui.failed) delete ui.failed.layouts; requestLayouts(ui, rerender, true); rerender(); }, { id: 'retry-layouts', secondary: true }));
  }
  if (!v) {
    if (!why) {
      const wait = el('p', 'muted', 'Searching layouts for this file…');
      wait.prepend(spinner());
      s.appendChild(wait);
    }
    host.appendChild(s);
    return;
  }
  const line = el('p', 'muted', `Searched ${formatCount(v.evaluated)} layouts for ${v.gpus} GPUs in ${formatSeconds(v.seconds)}; a layout fits when its peak is at most ${formatBytes(v.memoryLimitBytes, m.units)} per GPU.${ui.layoutsStale ? ' Updating…' : ''}`);
  line.id = 'layouts-summary';
  s.appendChild(line);
  if (v.message) s.appendChild(el('p', 'muted', v.message));
  if (v.rows.length || v.pareto.length) paretoChart(s, v, m.units);
  if (v.rows.length) s.appendChild(layoutsTable(v, m.units));
  host.appendChild(s);
}
