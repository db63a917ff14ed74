/**
 * Charts of the validation dashboard (Chart.js through charts/theme): measured vs estimated per component per rank,
 * sharded vs replicated side by side, communication measured vs formula, and the loss of each mode.
 * Small byte figures are drawn in MiB, large ones in the user's units.
 */
import type { ValidationRunView } from '../../shared/protocol/webview';
import { makeChart, palette } from '../charts/theme';
import { toUnit } from '../../shared/units';

/** Model-state components the runner measures exactly, with chart labels. */
export const STATE_COMPONENTS = [['parameters', 'Parameters'], ['gradients', 'Gradients'], ['optimizer', 'Optimizer states']] as const;

/** A byte scale for one chart: MiB below 0.1 GiB, else the user's units. */
export function byteScale(max: number, units: 'GiB' | 'GB'): { f: (b: number) => number; unit: string } {
  if (max < 2 ** 30 / 10) return { f: (b) => b / 2 ** 20, unit: 'MiB' };
  return { f: (b) => toUnit(b, units), unit: units };
}

const num = (x: number | undefined): number => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : 0);

/** Measured vs estimated bytes for every rank and model-state component of one mode. */
export function componentsChart(host: HTMLElement, run: ValidationRunView, idx: number, units: 'GiB' | 'GB'): void {
  const colors = palette();
  const labels: string[] = [], measured: number[] = [], estimated: number[] = [];
  for (const r of run.ranks) {
    for (const [key, text] of STATE_COMPONENTS) {
      if (r.measured[key] === undefined && r.estimated[key] === undefined) continue;
      labels.push(`r${r.rank} ${text}`);
      measured.push(num(r.measured[key]));
      estimated.push(num(r.estimated[key]));
    }
  }
  if (!labels.length) return;
  const s = byteScale(Math.max(...measured, ...estimated), units);
  makeChart(host, `chart-validation-components-${idx}`, `Measured and estimated model-state bytes per rank for ${run.label ?? run.mode}`, {
    type: 'bar',
    data: {
      labels,
      datasets: [
        { label: 'Measured', data: measured.map(s.f), backgroundColor: colors[0] },
        { label: 'Estimated (core)', data: estimated.map(s.f), backgroundColor: colors[1] },
      ],
    },
    options: { scales: { y: { beginAtZero: true, title: { display: true, text: s.unit } } } },
  }, 200);
}

/** Rank 0's measured model states stacked per mode, with the estimate as a marker: sharded next to replicated. */
export function shardedVsReplicatedChart(host: HTMLElement, runs: readonly ValidationRunView[], units: 'GiB' | 'GB'): void {
  const colors = palette();
  const rank0 = runs.map((r) => r.ranks[0]);
  const totals = rank0.map((r) => STATE_COMPONENTS.reduce((a, [k]) => a + num(r?.measured[k]), 0));
  const est = rank0.map((r) => STATE_COMPONENTS.reduce((a, [k]) => a + num(r?.estimated[k]), 0));
  const s = byteScale(Math.max(...totals, ...est, 1), units);
  makeChart(host, 'chart-validation-modes', 'Model-state bytes of rank 0 per sharding mode, measured and estimated', {
    type: 'bar',
    data: {
      labels: runs.map((r) => r.label ?? r.mode),
      datasets: [
        ...STATE_COMPONENTS.map(([k, text], i) => ({
          type: 'bar' as const, label: `${text} (measured)`, data: rank0.map((r) => s.f(num(r?.measured[k]))), backgroundColor: colors[i], stack: 'measured',
        })),
        { type: 'line' as const, label: 'Estimated total (core)', data: est.map(s.f), borderColor: colors[5], backgroundColor: colors[5], showLine: false, pointStyle: 'line', pointRadius: 14, pointBorderWidth: 3 },
      ],
    },
    options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: s.unit } } } },
  }, 220);
}

/** Bytes sent per rank per step by collective kind: measured at the sender vs the core's formula. */
export function commChart(host: HTMLElement, runs: readonly ValidationRunView[], units: 'GiB' | 'GB'): void {
  const rows = runs.flatMap((r) => (r.collectives ?? []).map((c) => ({ label: `${r.label ?? r.mode} ${c.label}`, m: num(c.measured), e: num(c.estimated) })));
  if (!rows.length) return;
  const colors = palette();
  const s = byteScale(Math.max(...rows.map((r) => Math.max(r.m, r.e)), 1), units);
  makeChart(host, 'chart-validation-comm', 'Bytes sent per rank per step, measured and by formula, per collective', {
    type: 'bar',
    data: {
      labels: rows.map((r) => r.label),
      datasets: [
        { label: 'Measured (sender)', data: rows.map((r) => s.f(r.m)), backgroundColor: colors[0] },
        { label: 'Formula (core)', data: rows.map((r) => s.f(r.e)), backgroundColor: colors[1] },
      ],
    },
    options: { indexAxis: 'y', scales: { x: { beginAtZero: true, title: { display: true, text: s.unit } } } },
  }, Math.max(160, 28 * rows.length + 60));
}

/** Mean loss per step of each mode (they should overlap: same data, same initialisation). */
export function lossChart(host: HTMLElement, runs: readonly ValidationRunView[]): void {
  const withLoss = runs.filter((r) => r.losses?.length);
  if (!withLoss.length) return;
  const colors = palette();
  const steps = Math.max(...withLoss.map((r) => r.losses?.length ?? 0));
  makeChart(host, 'chart-validation-loss', 'Mean training loss per step of each mode', {
    type: 'line',
    data: {
      labels: Array.from({ length: steps }, (_, i) => String(i + 1)),
      datasets: withLoss.map((r, i) => ({ label: r.label ?? r.mode, data: [...(r.losses ?? [])], borderColor: colors[i % colors.length], backgroundColor: colors[i % colors.length] })),
    },
    options: { scales: { x: { title: { display: true, text: 'step' } }, y: { title: { display: true, text: 'loss' } } } },
  }, 160);
}
