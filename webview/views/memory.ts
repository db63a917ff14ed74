/**
 * Memory dashboard: stacked bars per component for the file's sharding and its variants (replicated DP, ZeRO-1/2/3,
 * FSDP, HSDP), per pipeline stage, and the sweep over the data-parallel size with the GPU memory line.
 */
import { MEMORY_COMPONENTS, type DashboardModel, type MemoryComponent, type StageBar } from '../../shared/protocol/webview';
import { makeChart, palette, shortTicks, themeColor } from '../charts/theme';
import { el, section, table } from '../dom';
import { formatBytes, toUnit } from '../../shared/units';
import type { UiState } from '../state';
import { dropdown } from '../ui/toolkit';

const LABELS: Readonly<Record<MemoryComponent, string>> = {
  parameters: 'Parameters', gradients: 'Gradients', optimizer: 'Optimizer states', activations: 'Activations',
  logits: 'Logits', buffers: 'Buffers', overhead: 'Overhead',
};

const stageOf = (stages: readonly StageBar[], i: number): StageBar | undefined => stages.find((s) => s.stage === i) ?? stages[stages.length - 1];

function variantsChart(host: HTMLElement, m: DashboardModel, stage: number): void {
  const colors = palette();
  const u = m.units;
  const labels = m.variants.map((v) => v.label);
  const bars = MEMORY_COMPONENTS.map((c, i) => ({
    type: 'bar' as const, label: LABELS[c], backgroundColor: colors[i % colors.length], stack: 'memory',
    data: m.variants.map((v) => toUnit(stageOf(v.stages, stage)?.bytes[c] ?? 0, u)),
  }));
  const gpuLine = {
    type: 'line' as const, label: `GPU memory (${formatBytes(m.cluster.gpuMemoryBytes, u)})`,
    data: m.variants.map(() => toUnit(m.cluster.gpuMemoryBytes, u)),
    borderColor: themeColor('--vscode-charts-red', '#f14c4c'), borderDash: [6, 4], pointRadius: 0, borderWidth: 2,
  };
  // Horizontal bars keep the variant names readable at side-bar widths; the GPU memory is a vertical dashed line.
  makeChart(host, 'chart-memory-variants', `Memory per GPU by sharding variant, stage ${stage}`, {
    type: 'bar',
    data: { labels, datasets: [...bars, gpuLine] as never[] },
    options: {
      indexAxis: 'y',
      scales: { y: { stacked: true, ticks: { callback: shortTicks(labels) } }, x: { stacked: true, title: { display: true, text: u } } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${(c.parsed.x ?? 0).toFixed(2)} ${u}` } } },
    },
  }, 26 * labels.length + 150);
}

function stagesChart(host: HTMLElement, m: DashboardModel): void {
  const cur = m.variants.find((v) => v.current);
  if (!cur || cur.stages.length < 2) return;
  const colors = palette();
  makeChart(host, 'chart-memory-stages', 'Memory per GPU by pipeline stage', {
    type: 'bar',
    data: {
      labels: cur.stages.map((s) => `Stage ${s.stage}`),
      datasets: MEMORY_COMPONENTS.map((c, i) => ({
        label: LABELS[c], backgroundColor: colors[i % colors.length], data: cur.stages.map((s) => toUnit(s.bytes[c] ?? 0, m.units)),
      })),
    },
    options: { scales: { x: { stacked: true }, y: { stacked: true, title: { display: true, text: m.units } } } },
  }, 220);
}

function sweepChart(host: HTMLElement, m: DashboardModel): void {
  const sw = m.sweep;
  if (!sw) return;
  const colors = palette();
  makeChart(host, 'chart-memory-sweep', 'Model-state memory per GPU over data-parallel size', {
    type: 'line',
    data: {
      labels: sw.dpSizes.map(String),
      datasets: [
        ...sw.series.map((s, i) => ({ label: s.label, data: s.bytes.map((b) => toUnit(b, m.units)), borderColor: colors[i % colors.length], backgroundColor: colors[i % colors.length], pointRadius: 2 })),
        { label: 'GPU memory', data: sw.dpSizes.map(() => toUnit(m.cluster.gpuMemoryBytes, m.units)), borderColor: themeColor('--vscode-charts-red', '#f14c4c'), borderDash: [6, 4], pointRadius: 0 },
      ],
    },
    options: { scales: { x: { title: { display: true, text: 'Data-parallel GPUs (Nd)' } }, y: { type: 'logarithmic', title: { display: true, text: m.units } } } },
  }, 240);
}

/** How the peak stage's memory is computed: every term with its formula and source, then every symbol once. */
function derivation(m: DashboardModel): HTMLElement {
  const d = m.derivation as NonNullable<DashboardModel['derivation']>;
  const s = section(`How the peak is computed (pipeline stage ${d.stage})`, 'derivation');
  const terms = el('ul', 'derivation-terms');
  for (const t of d.terms) {
    const li = el('li');
    li.append(el('strong', undefined, `${t.label} ${formatBytes(t.bytes, m.units)}`), el('span', undefined, ' = '), el('code', undefined, t.formula), el('span', 'muted', ` (${t.citation})`));
    terms.appendChild(li);
  }
  s.appendChild(terms);
  s.appendChild(el('p', undefined, 'where'));
  const syms = el('ul', 'derivation-symbols');
  for (const y of d.symbols) {
    const li = el('li');
    li.append(el('code', undefined, y.symbol), el('span', undefined, `${y.value !== undefined ? ` = ${y.value}` : ''}: ${y.meaning}${y.source ? ` (${y.source})` : ''}`));
    syms.appendChild(li);
  }
  s.appendChild(syms);
  return s;
}

/** Renders the memory dashboard into `host`. */
export function renderMemory(host: HTMLElement, m: DashboardModel, ui: UiState, rerender: () => void): void {
  const stages = Math.max(...m.variants.map((v) => v.stages.length));
  const stage = ui.stage !== undefined && ui.stage < stages ? ui.stage : m.peakStage;
  const top = section('Memory per GPU', 'memory-figures');
  const cur = m.variants.find((v) => v.current);
  // Exact figures of the file as written, one per pipeline stage (the CLI's `stages[].peakAllocatedBytes`).
  top.dataset.currentPeakAllocated = (cur?.stages ?? []).map((s) => String(s.peakAllocatedBytes)).join(',');
  if (stages > 1) {
    top.appendChild(dropdown('Pipeline stage', Array.from({ length: stages }, (_, i) => ({ value: String(i), text: `Stage ${i}${i === m.peakStage ? ' (peak)' : ''}` })), String(stage), (v) => {
      ui.stage = Number(v);
      rerender();
    }, 'stage-select'));
  }
  variantsChart(top, m, stage);
  const u = m.units;
  top.appendChild(table('memory-table', 'Figures', ['Variant', ...MEMORY_COMPONENTS.map((c) => LABELS[c]), 'Peak allocated', 'Peak reserved'],
    m.variants.map((v) => {
      const s = stageOf(v.stages, stage);
      return [v.label, ...MEMORY_COMPONENTS.map((c) => formatBytes(s?.bytes[c] ?? 0, u)),
        { text: formatBytes(s?.peakAllocatedBytes ?? 0, u), data: { bytes: String(s?.peakAllocatedBytes ?? 0) } },
        { text: formatBytes(s?.peakReservedBytes ?? 0, u), data: { bytes: String(s?.peakReservedBytes ?? 0) } }];
    }),
    m.variants.map((v) => ({ variant: v.id, stage: String(stage), peakAllocated: String(stageOf(v.stages, stage)?.peakAllocatedBytes ?? 0) }))));
  host.appendChild(top);
  if (cur && cur.stages.length > 1) {
    const st = section('Per pipeline stage (this file)', 'memory-stages');
    stagesChart(st, m);
    host.appendChild(st);
  }
  if (m.derivation) host.appendChild(derivation(m));
  if (m.sweep) {
    const sw = section('Sweep over data-parallel size (ZeRO Table 1)', 'memory-sweep');
    sweepChart(sw, m);
    sw.appendChild(el('p', 'muted', 'Model states only (parameters, gradients, optimizer states), all other settings as in the file.'));
    host.appendChild(sw);
  }
}
