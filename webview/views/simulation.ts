/**
 * Simulate Step dashboard: the simulator's timeline per pipeline stage (forward, backward, recompute, communication,
 * optimizer, idle) and allocated memory over time. Zoom with the buttons, the mouse wheel or the keyboard (+, −, 0,
 * arrows) on the focused chart; hover shows each interval.
 */
import { TIMELINE_KINDS, type DashboardModel, type TimelineKind } from '../../shared/protocol';
import { chartById, makeChart, palette, themeColor } from '../charts/theme';
import { el, section, table } from '../dom';
import { formatBytes, formatSeconds, toUnit } from '../../shared/units';
import { command, type UiState } from '../state';
import { button } from '../ui/toolkit';

/** The y-axis label of a lane: its stage, and "comm" for a communication stream beside compute. */
const laneLabel = (l: { stage: number; stream?: 'compute' | 'comm' }) => `Stage ${l.stage}${l.stream === 'comm' ? ' comm' : ''}`;

function kindColor(k: TimelineKind): string {
  const p = palette();
  const map: Record<TimelineKind, string> = {
    forward: p[0], backward: p[1], recompute: p[3], communication: p[4], optimizer: p[2],
    idle: themeColor('--vscode-disabledForeground', 'rgba(128,128,128,0.5)'),
  };
  return map[k];
}

/** Sets the visible window of both time charts and remembers it. */
function setWindow(ui: UiState, min: number, max: number, step: number): void {
  const lo = Math.max(0, min);
  const hi = Math.min(step, Math.max(lo + step / 1000, max));
  ui.zoom = { min: lo, max: hi };
  for (const id of ['chart-timeline', 'chart-sim-memory']) {
    const c = chartById(id);
    if (!c) continue;
    const x = c.options.scales?.x;
    if (x) { x.min = lo * 1000; x.max = hi * 1000; }
    c.update();
  }
}

function zoomBy(ui: UiState, factor: number, step: number, shift = 0): void {
  const { min, max } = ui.zoom ?? { min: 0, max: step };
  const mid = (min + max) / 2 + shift * (max - min);
  const half = ((max - min) * factor) / 2;
  setWindow(ui, mid - half, mid + half, step);
}

export function renderSimulation(host: HTMLElement, m: DashboardModel, ui: UiState, save: () => void): void {
  const s = section('Simulated step', 'simulation');
  const sim = m.simulation;
  if (!sim) {
    s.appendChild(el('p', 'muted', 'No simulation for this file yet (the simulator needs a complete plan).'));
    s.appendChild(button('Simulate Step', () => command('simulateStep')));
    host.appendChild(s);
    return;
  }
  const step = sim.stepSeconds > 0 ? sim.stepSeconds : 1;
  s.appendChild(el('p', undefined, `Step time ${formatSeconds(sim.stepSeconds)} over ${new Set(sim.lanes.map((l) => l.stage)).size} pipeline stage(s).`));
  const bar = el('div', 'toolbar');
  bar.append(
    button('Zoom in', () => { zoomBy(ui, 0.5, step); save(); }, { secondary: true, id: 'zoom-in' }),
    button('Zoom out', () => { zoomBy(ui, 2, step); save(); }, { secondary: true, id: 'zoom-out' }),
    button('Reset', () => { setWindow(ui, 0, step, step); save(); }, { secondary: true, id: 'zoom-reset' }),
  );
  s.appendChild(bar);
  const lanes = sim.lanes.map(laneLabel);
  const present = TIMELINE_KINDS.filter((k) => sim.lanes.some((l) => l.segments.some((g) => g.kind === k)));
  const win = ui.zoom ?? { min: 0, max: step };
  const chart = makeChart(s, 'chart-timeline', 'Timeline of the step per pipeline stage', {
    type: 'bar',
    data: {
      labels: lanes,
      datasets: present.map((k) => ({
        label: k, backgroundColor: kindColor(k), borderWidth: 0, grouped: false, barPercentage: 0.9, categoryPercentage: 0.9,
        data: sim.lanes.flatMap((l) => l.segments.filter((g) => g.kind === k).map((g) => ({ x: [g.start * 1000, g.end * 1000] as [number, number], y: laneLabel(l), mb: g.microbatch, text: g.label }))),
      })),
    },
    options: {
      indexAxis: 'y',
      parsing: { xAxisKey: 'x', yAxisKey: 'y' },
      scales: { x: { type: 'linear', min: win.min * 1000, max: win.max * 1000, title: { display: true, text: 'ms from step start' } }, y: { stacked: true } },
      plugins: {
        tooltip: {
          callbacks: {
            label: (c: { raw: unknown; dataset: { label?: string } }) => {
              const raw = c.raw as { x: [number, number]; mb?: number; text?: string };
              const mb = raw.mb !== undefined ? ` µb ${raw.mb}` : '';
              return `${c.dataset.label}${mb}${raw.text ? ` (${raw.text})` : ''}: ${raw.x[0].toFixed(2)}–${raw.x[1].toFixed(2)} ms`;
            },
          },
        },
      },
    },
  } as never, Math.max(140, 40 * lanes.length + 70));
  const canvas = chart.canvas;
  canvas.tabIndex = 0;
  canvas.addEventListener('keydown', (e) => {
    const keys: Record<string, () => void> = {
      '+': () => zoomBy(ui, 0.5, step), '=': () => zoomBy(ui, 0.5, step), '-': () => zoomBy(ui, 2, step),
      '0': () => setWindow(ui, 0, step, step), ArrowLeft: () => zoomBy(ui, 1, step, -0.25), ArrowRight: () => zoomBy(ui, 1, step, 0.25),
    };
    const f = keys[e.key];
    if (f) { e.preventDefault(); f(); save(); }
  });
  canvas.addEventListener('wheel', (e) => { e.preventDefault(); zoomBy(ui, e.deltaY < 0 ? 0.8 : 1.25, step); save(); }, { passive: false });
  if (sim.memory.length) {
    const colors = palette();
    makeChart(s, 'chart-sim-memory', 'Allocated memory over the step per stage', {
      type: 'line',
      data: {
        datasets: sim.memory.map((mm, i) => ({
          label: `Stage ${mm.stage}`, stepped: true, pointRadius: 0, borderColor: colors[i % colors.length],
          data: mm.points.map((p) => ({ x: p.t * 1000, y: toUnit(p.bytes, m.units) })),
        })),
      },
      options: {
        scales: { x: { type: 'linear', min: win.min * 1000, max: win.max * 1000, title: { display: true, text: 'ms' } }, y: { title: { display: true, text: m.units } } },
        plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${(c.parsed.y ?? 0).toFixed(2)} ${m.units}` } } },
      },
    }, 200);
  }
  s.appendChild(table('sim-table', 'Figures', ['Stage', ...present, 'Peak memory'], sim.lanes.map((l) => {
    const mem = sim.memory.find((x) => x.stage === l.stage);
    const peak = mem ? Math.max(...mem.points.map((p) => p.bytes)) : 0;
    return [laneLabel(l), ...present.map((k) => formatSeconds(l.segments.filter((g) => g.kind === k).reduce((a, g) => a + g.end - g.start, 0))), formatBytes(peak, m.units)];
  }), sim.lanes.map((l) => ({ stage: String(l.stage), segments: String(l.segments.length) }))));
  host.appendChild(s);
}
