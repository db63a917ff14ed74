/**
 * Layouts dashboard: the planner's Pareto front (peak memory vs step time) and its top layouts, each with the delta
 * applying it would bring and an Apply button. The layouts are asked for lazily, only when this view shows.
 */
import { WEBVIEW_PROTOCOL_VERSION, type DashboardModel, type LayoutRowView, type LayoutsView } from '../../shared/protocol';
import { makeChart, palette } from '../charts/theme';
import { el, section } from '../dom';
import { formatBytes, formatCount, formatSeconds, toUnit } from '../../shared/units';
import { send, type UiState } from '../state';
import { button, spinner } from '../ui/toolkit';

/** The model the last request was sent for (one request per model message). */
let requestedFor: DashboardModel | undefined;

/** True when the layouts shown do not belong to the current model. */
function needsLayouts(ui: UiState): boolean {
  return !!ui.model && (!ui.layouts || ui.layouts.uri !== ui.model.uri || !!ui.layoutsStale);
}

/** Asks the extension for the layouts of the current model, once per model. */
export function requestLayouts(ui: UiState): void {
  if (!needsLayouts(ui) || requestedFor === ui.model) return;
  requestedFor = ui.model;
  send({ v: WEBVIEW_PROTOCOL_VERSION, type: 'planLayouts' });
}

/** "tp 2 · pp 1 · vpp 1 · cp 1 · ep 1 · dp 4". */
function axes(r: LayoutRowView): string {
  return `tp ${r.tp} · pp ${r.pp} · vpp ${r.vpp} · cp ${r.cp} · ep ${r.ep} · dp ${r.dp}`;
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

function layoutsTable(v: LayoutsView, units: 'GiB' | 'GB'): HTMLElement {
  const t = el('table');
  t.id = 'layouts-table';
  const head = el('tr');
  for (const h of ['#', 'Parallel', 'Sharding', 'Micro × acc.', 'Recompute', 'Offload', 'Step', 'Peak', 'Change', '']) {
    const th = el('th', undefined, h);
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
    const change = [r.delta, ...r.notes].filter(Boolean).join(' — ') || (r.applicable ? '' : 'the file already has this layout');
    for (const text of [axes(r), r.sharding, `${r.microBatch} × ${r.gradAccum}`, r.recompute, r.offload, formatSeconds(r.stepSeconds), formatBytes(r.peakBytes, units), change]) {
      tr.appendChild(el('td', undefined, text));
    }
    const cell = el('td');
    cell.appendChild(button('Apply', () => send({ v: WEBVIEW_PROTOCOL_VERSION, type: 'applyLayout', uri: v.uri, index: r.index }), {
      id: `apply-layout-${r.index}`, disabled: !r.applicable, secondary: r.index > 0,
      title: r.applicable ? `Write this layout into the file (${r.delta})` : 'Nothing to write: the file cannot hold this layout or already has it',
    }));
    tr.appendChild(cell);
    tbody.appendChild(tr);
  }
  t.append(thead, tbody);
  return t;
}

/** Renders the Layouts dashboard; `visible` says whether it is on screen (only then are layouts requested). */
export function renderLayouts(host: HTMLElement, m: DashboardModel, ui: UiState, visible: boolean): void {
  const s = section('Layouts', 'layouts');
  const v = ui.layouts && ui.layouts.uri === m.uri ? ui.layouts : undefined;
  if (visible) requestLayouts(ui);
  if (!v) {
    const wait = el('p', 'muted', 'Searching layouts for this file…');
    wait.prepend(spinner());
    s.appendChild(wait);
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
