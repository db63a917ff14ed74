/** Communication dashboard: per collective bytes and time per step, per network tier, exposed vs overlapped. */
import type { DashboardModel } from '../../shared/protocol';
import { makeChart, palette, shortTicks, themeColor } from '../charts/theme';
import { el, section, table } from '../dom';
import { formatBytes, formatSeconds, toUnit } from '../../shared/units';

export function renderCommunication(host: HTMLElement, m: DashboardModel): void {
  const s = section('Communication per step', 'communication');
  const rows = m.communication;
  if (!rows.length) {
    s.appendChild(el('p', 'muted', 'No collectives: this layout does not communicate (one GPU, or nothing sharded).'));
    host.appendChild(s);
    return;
  }
  const colors = palette();
  const labels = rows.map((r) => r.label);
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
      datasets: tiers.map((t, i) => ({ label: t, data: rows.map((r) => (r.tier === t ? toUnit(r.bytesPerStep, m.units) : 0)), backgroundColor: colors[(i + 1) % colors.length] })),
    },
    options: {
      indexAxis: 'y',
      scales: { x: { stacked: true, title: { display: true, text: `${m.units} per step` } }, y: { stacked: true, ticks: { autoSkip: false, callback: shortTicks(labels) } } },
    },
  }, Math.max(160, 34 * rows.length + 60));
  const total = rows.reduce((a, r) => a + r.exposedSeconds, 0);
  s.appendChild(el('p', 'muted', `Exposed communication: ${formatSeconds(total)} per step${m.stepSeconds ? ` of ${formatSeconds(m.stepSeconds)}` : ''}.`));
  s.appendChild(table('comm-table', 'Figures', ['Collective', 'Axis', 'Tier', 'Bytes / step', 'Time', 'Exposed'],
    rows.map((r) => [r.label, r.axis, r.tier, { text: formatBytes(r.bytesPerStep, m.units), data: { bytes: String(r.bytesPerStep) } }, formatSeconds(r.seconds), formatSeconds(r.exposedSeconds)])));
  host.appendChild(s);
}
