/**
 * Simulate Step dashboard: the simulator's timeline per pipeline stage as the core returns it (forward, backward,
 * recompute, communication, optimizer, idle; communication beside compute on its own lane, exposed communication inside
 * the compute lane) and allocated memory over time. The simulation is asked for only when this view shows. Zoom with the
 * buttons, the mouse wheel or the keyboard (+, −, 0, arrows) on the focused chart; hover shows each block.
 */
import type { DashboardModel } from '../../shared/protocol/webview';
import type { BlockKind, Simulation, StageTimeline } from '../../shared/sim/types';
import { formatBytes, formatSeconds, toUnit } from '../../shared/units';
import { BLOCK_LABELS, ELIDED_LABEL, elidedSentence } from '../../shared/wording/comm';
import { ELIDED_COLOR, HATCHED, KIND_COLORS } from '../charts/kindColors';
import { chartById, makeChart, palette } from '../charts/theme';
import { el, section, table } from '../dom';
import { WEBVIEW_PROTOCOL_VERSION } from '../../shared/protocol/webview';
import { ask, waiting, type UiState } from '../state';
import { button, spinner } from '../ui/toolkit';
import { operatorTermsOf, provenanceOf } from '../protocol/guards';

const KINDS: readonly BlockKind[] = ['forward', 'backward', 'recompute', 'comm', 'optimizer', 'idle'];

/** Asks the extension for the simulation of the current model's file, unless it is here or on its way. */
export function requestSimulation(ui: UiState, rerender: () => void): void {
  if (!ui.model || waiting('simulation') || ui.failed?.simulation) return;
  if (ui.simulation && ui.simulation.uri === ui.model.uri) return;
  ask('simulation', { v: WEBVIEW_PROTOCOL_VERSION, type: 'simulate' }, ui, rerender);
}

type Lane = { readonly stage: number; readonly stream: 'compute' | 'comm'; readonly label: string };

/** One lane per stage for compute, and one for communication that runs beside it. */
function lanesOf(sim: Simulation): Lane[] {
  return sim.stages.flatMap((st) => {
    const out: Lane[] = [{ stage: st.stage, stream: 'compute', label: `Stage ${st.stage}` }];
    if (st.blocks.some((b) => b.lane === 'comm')) out.push({ stage: st.stage, stream: 'comm', label: `Stage ${st.stage} comm` });
    return out;
  });
}

/**
 * Seconds of exposed communication the compute stream waits for on one stage (the timeline's side of the comparison),
 * over every pass, drawn or not.
 */
export function exposedOnTimeline(st: StageTimeline): number {
  return st.computeSeconds.comm;
}

/** A diagonal hatch over `color`, so communication never differs from the other blocks by hue alone. */
function hatch(color: string): CanvasPattern | string {
  const c = document.createElement('canvas');
  c.width = c.height = 8;
  const g = c.getContext('2d');
  if (!g) return color;
  g.fillStyle = color;
  g.fillRect(0, 0, 8, 8);
  g.strokeStyle = 'rgba(255,255,255,0.75)';
  g.lineWidth = 2;
  g.beginPath();
  g.moveTo(0, 8); g.lineTo(8, 0);
  g.moveTo(-2, 2); g.lineTo(2, -2);
  g.moveTo(6, 10); g.lineTo(10, 6);
  g.stroke();
  return g.createPattern(c, 'repeat') ?? color;
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

function timeline(s: HTMLElement, sim: Simulation, ui: UiState, save: () => void): void {
  const step = sim.stepSeconds > 0 ? sim.stepSeconds : 1;
  const lanes = lanesOf(sim);
  const present = KINDS.filter((k) => sim.stages.some((st) => st.blocks.some((b) => b.kind === k)));
  const win = ui.zoom ?? { min: 0, max: step };
  const datasets = present.map((k) => ({
    label: BLOCK_LABELS[k], backgroundColor: HATCHED.has(k) ? hatch(KIND_COLORS[k]) : KIND_COLORS[k] as CanvasPattern | string, borderWidth: 0, grouped: false,
    barPercentage: 0.9, categoryPercentage: 0.9,
    data: lanes.flatMap((l) => (sim.stages.find((st) => st.stage === l.stage)?.blocks ?? [])
      .filter((b) => b.kind === k && b.lane === l.stream)
      .map((b) => ({ x: [b.start * 1000, b.end * 1000] as [number, number], y: l.label, text: b.label }))),
  }));
  // The steady state of a long step: one bar per stage over the span whose passes are counted but not drawn.
  const elided = lanes.flatMap((l) => {
    const e = l.stream === 'compute' ? sim.stages.find((st) => st.stage === l.stage)?.elided : undefined;
    return e ? [{ x: [e.start * 1000, e.end * 1000] as [number, number], y: l.label, text: `${e.passes.toLocaleString('en-US')} passes run here, not drawn` }] : [];
  });
  if (elided.length) datasets.push({ label: ELIDED_LABEL, backgroundColor: ELIDED_COLOR, borderWidth: 0, grouped: false, barPercentage: 0.9, categoryPercentage: 0.9, data: elided });
  const chart = makeChart(s, 'chart-timeline', 'Timeline of the step per pipeline stage', {
    type: 'bar',
    data: { labels: lanes.map((l) => l.label), datasets },
    options: {
      indexAxis: 'y',
      parsing: { xAxisKey: 'x', yAxisKey: 'y' },
      scales: { x: { type: 'linear', min: win.min * 1000, max: win.max * 1000, title: { display: true, text: 'ms from step start' } }, y: { stacked: true } },
      plugins: {
        tooltip: {
          callbacks: {
            label: (c: { raw: unknown; dataset: { label?: string } }) => {
              const raw = c.raw as { x: [number, number]; text?: string };
              return `${c.dataset.label}${raw.text ? ` (${raw.text})` : ''}: ${raw.x[0].toFixed(2)}–${raw.x[1].toFixed(2)} ms`;
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
}

function memoryChart(s: HTMLElement, sim: Simulation, m: DashboardModel, ui: UiState): void {
  if (!sim.stages.some((st) => st.memory.length)) return;
  const colors = palette();
  const step = sim.stepSeconds > 0 ? sim.stepSeconds : 1;
  const win = ui.zoom ?? { min: 0, max: step };
  makeChart(s, 'chart-sim-memory', 'Allocated memory over the step per stage', {
    type: 'line',
    data: {
      datasets: sim.stages.map((st, i) => ({
        label: `Stage ${st.stage}`, stepped: true, pointRadius: 0, borderColor: colors[i % colors.length],
        // No line through a span whose passes are not drawn: its memory rises and falls with every micro-batch.
        data: st.memory.flatMap((p) => {
          const pt = { x: p.t * 1000, y: toUnit(p.bytes, m.units) as number | null };
          return st.elided && p.t === st.elided.start ? [pt, { x: p.t * 1000, y: null }] : [pt];
        }),
      })),
    },
    options: {
      scales: { x: { type: 'linear', min: win.min * 1000, max: win.max * 1000, title: { display: true, text: 'ms' } }, y: { title: { display: true, text: `allocated (${m.units})` } } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${(c.parsed.y ?? 0).toFixed(2)} ${m.units}` } } },
    },
  }, 200);
}

function waitingOrFailed(s: HTMLElement, ui: UiState, rerender: () => void): void {
  const why = ui.failed?.simulation;
  if (why) {
    const p = el('p', 'state-failed', why);
    p.id = 'simulation-failed';
    s.append(p, button('Retry', () => { if (ui.failed) delete ui.failed.simulation; requestSimulation(ui, rerender); rerender(); }, { id: 'retry-simulation', secondary: true }));
    return;
  }
  const wait = el('p', 'muted', 'Simulating the step…');
  wait.prepend(spinner());
  s.appendChild(wait);
}

export function renderSimulation(host: HTMLElement, m: DashboardModel, ui: UiState, save: () => void, visible: boolean, rerender: () => void): void {
  const s = section('Simulated step', 'simulation');
  if (visible) requestSimulation(ui, rerender);
  const answer = ui.simulation && ui.simulation.uri === m.uri ? ui.simulation.simulation : undefined;
  if (!answer) {
    waitingOrFailed(s, ui, rerender);
    host.appendChild(s);
    return;
  }
  if (!answer.ok) {
    s.appendChild(el('p', 'muted', answer.message));
    host.appendChild(s);
    return;
  }
  const sim = answer.result;
  const step = sim.stepSeconds > 0 ? sim.stepSeconds : 1;
  s.appendChild(el('p', undefined, `Step time ${formatSeconds(sim.stepSeconds)} over ${sim.stages.length} pipeline stage(s), ${sim.microbatches} micro-batches (${sim.schedule}).`));
  const notDrawn = elidedSentence(sim.stages);
  if (notDrawn) {
    const p = el('p', 'muted', notDrawn);
    p.id = 'sim-elided';
    s.appendChild(p);
  }
  const bar = el('div', 'toolbar');
  bar.append(
    button('Zoom in', () => { zoomBy(ui, 0.5, step); save(); }, { secondary: true, id: 'zoom-in' }),
    button('Zoom out', () => { zoomBy(ui, 2, step); save(); }, { secondary: true, id: 'zoom-out' }),
    button('Reset', () => { setWindow(ui, 0, step, step); save(); }, { secondary: true, id: 'zoom-reset' }),
  );
  s.appendChild(bar);
  timeline(s, sim, ui, save);
  memoryChart(s, sim, m, ui);
  // Totals over every pass, drawn or not (StageTimeline.computeSeconds).
  const present = KINDS.filter((k) => sim.stages.some((st) => st.computeSeconds[k] > 0));
  s.appendChild(table('sim-table', 'Figures', ['Stage', ...present.map((k) => (k === 'comm' ? 'Exposed comm' : BLOCK_LABELS[k])), 'Peak allocated'], sim.stages.map((st) => {
    return [`Stage ${st.stage}`, ...present.map((k) => formatSeconds(st.computeSeconds[k])), formatBytes(st.peakBytes, m.units)];
  }), sim.stages.map((st) => ({ stage: String(st.stage), segments: String(st.blocks.length), exposedComm: String(exposedOnTimeline(st)) }))));
  operatorTermsSection(s, sim);
  host.appendChild(s);
}

/**
 * Where the busiest stage's step goes, term by term (shared/time/estimate.ts operatorTerms): one line of the per-step
 * seconds, then a table with each term per micro-batch and pass, its formula, its source and where its rates come
 * from (the catalog's fitted curves, a measured profile or a cluster calibration).
 */
function operatorTermsSection(s: HTMLElement, sim: Simulation): void {
  const terms = operatorTermsOf(sim);
  if (!terms.length) return;
  const shown = terms.filter((t) => t.stepSeconds > 0);
  const line = el('p', undefined, `Where the busiest stage's step goes: ${shown.map((t) => `${t.label} ${formatSeconds(t.stepSeconds)}`).join(' · ') || 'nothing measurable'}.`);
  line.id = 'sim-terms-summary';
  s.appendChild(line);
  s.appendChild(table('sim-terms', 'Operator terms of the busiest stage: per micro-batch and per step, with formulas and sources',
    ['Term', 'Forward', 'Backward', 'Recompute', 'Per step', 'Formula', 'Source', 'Rates from'],
    terms.map((t) => [t.label, formatSeconds(t.forward), formatSeconds(t.backward), formatSeconds(t.recompute), formatSeconds(t.stepSeconds), t.formula, t.citation, t.provenance]),
    terms.map((t) => ({ term: t.name, stepSeconds: String(t.stepSeconds) }))));
  const prov = provenanceOf(sim);
  if (prov.length) {
    const list = el('ul', 'muted');
    list.id = 'sim-provenance';
    for (const p of prov) list.appendChild(el('li', undefined, p));
    s.appendChild(list);
  }
}
