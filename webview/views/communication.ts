/**
 * Communication dashboard: the step's collectives as the core lists them, seconds per step (exposed and overlapped)
 * and bytes per network tier. The exposed totals per group carry data attributes, so tests compare them with the
 * Simulate Step timeline.
 */
import type { CommGroup } from '../../shared/comm/types';
import type { DashboardModel } from '../../shared/protocol/webview';
import { formatBytes, formatSeconds, toUnit } from '../../shared/units';
import { GROUP_LABELS, TIER_LABELS, collectiveLabel } from '../../shared/wording/comm';
import { makeChart, palette, shortTicks, themeColor } from '../charts/theme';
import { el, section, table } from '../dom';

export function renderCommunication(host: HTMLElement, m: DashboardModel): void {
  const s = section('Communication per step', 'communication');
  const rows = m.communication;
  if (!rows.length) {
    s.appendChild(el('p', 'muted', 'No collectives: this layout does not communicate (one GPU, or nothing sharded).'));
    host.appendChild(s);
    return;
  }
  const colors = palette();
  const labels = rows.map(collectiveLabel);
  const exposed = themeColor('--vscode-charts-red', '#f14c4c');
  makeChart(s, 'chart-comm-time', 'Seconds per step per collective: exposed and overlapped', {
    type: 'bar',
    data: {
      labels,
      datasets: [
        { label: 'Exposed', data: rows.map((r) => r.exposedSeconds * 1000), backgroundColor: exposed },
        { label: 'Overlapped with compute', data: rows.map((r) => (r.seconds - r.exposedSeconds) * 1000), backgroundColor: colors[0] },
      ],
    },
    options: {
      indexAxis: 'y',
      scales: { x: { stacked: true, title: { display: true, text: 'ms per step' } }, y: { stacked: true, ticks: { autoSkip: false, callback: shortTicks(labels) } } },
      plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${formatSeconds((c.parsed.x ?? 0) / 1000)}` } } },
    },
  }, Math.max(160, 34 * rows.length + 60));
  const tiers = [...new Set(rows.map((r) => r.tier))];
  makeChart(s, 'chart-comm-bytes', 'Bytes sent per GPU per step, by network tier', {
    type: 'bar',
    data: {
      labels,
      datasets: tiers.map((t, i) => ({ label: TIER_LABELS[t], data: rows.map((r) => (r.tier === t ? toUnit(r.bytesPerRank, m.units) : 0)), backgroundColor: colors[(i + 1) % colors.length] })),
    },
    options: {
      indexAxis: 'y',
      scales: { x: { stacked: true, title: { display: true, text: `${m.units} per step` } }, y: { stacked: true, ticks: { autoSkip: false, callback: shortTicks(labels) } } },
    },
  }, Math.max(160, 34 * rows.length + 60));
  s.appendChild(exposedLine(m));
  s.appendChild(table('comm-table', 'Figures', ['Collective', 'Group', 'Tier', 'Bytes / step', 'Time', 'Exposed'],
    rows.map((r, i) => [labels[i] ?? r.label, GROUP_LABELS[r.group], TIER_LABELS[r.tier], { text: formatBytes(r.bytesPerRank, m.units), data: { bytes: String(r.bytesPerRank) } }, formatSeconds(r.seconds), formatSeconds(r.exposedSeconds)]),
    rows.map((r) => ({ group: r.group, stage: String(r.stage), exposedSeconds: String(r.exposedSeconds) }))));
  host.appendChild(s);
}

/** "Exposed communication: 816 ms per step of 3.2 s (TP 816 ms)": the busiest stage's exposed seconds per group. */
function exposedLine(m: DashboardModel): HTMLElement {
  const stages = [...new Set(m.communication.map((c) => c.stage))];
  const perStage = stages.map((st) => m.communication.filter((c) => c.stage === st).reduce((a, c) => a + c.exposedSeconds, 0));
  const busiest = stages[perStage.indexOf(Math.max(...perStage))] ?? 0;
  const groups = [...new Set(m.communication.map((c) => c.group))];
  const byGroup = groups.map((g): [CommGroup, number] => [g, m.communication.filter((c) => c.group === g && c.stage === busiest).reduce((a, c) => a + c.exposedSeconds, 0)]);
  const total = Math.max(0, ...perStage);
  const parts = byGroup.filter(([, x]) => x > 0).map(([g, x]) => `${GROUP_LABELS[g]} ${formatSeconds(x)}`);
  const p = el('p', 'muted', `Exposed communication on stage ${busiest}: ${formatSeconds(total)} per step${m.stepSeconds ? ` of ${formatSeconds(m.stepSeconds)}` : ''}${parts.length ? ` (${parts.join(', ')})` : ''}.`);
  p.id = 'comm-exposed';
  p.dataset.stage = String(busiest);
  for (const [g, x] of byGroup) p.setAttribute(`data-exposed-${g}`, String(x));
  return p;
}
