/**
 * "Exact memory on this machine": torch's own peak per category (fake tensors, no GPU) beside ShardLens's estimate,
 * term by term, one table per pipeline stage. Rendered inside the Validation dashboard when a result carries `oracle`.
 */
import type { OracleResultView } from '../../shared/protocol/webview';
import { formatBytes } from '../../shared/units';
import { el, table } from '../dom';
import { badge } from '../ui/toolkit';

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;

export function renderOracle(view: OracleResultView, units: 'GiB' | 'GB'): HTMLElement {
  const box = el('div', 'oracle');
  box.id = 'oracle-result';
  box.appendChild(el('h3', undefined, 'Exact memory on this machine (torch, fake tensors)'));
  box.appendChild(badge(view.ok ? 'ShardLens agrees with torch' : 'ShardLens differs from torch', view.ok ? 'ok' : 'bad'));
  box.appendChild(el('p', undefined, `${view.torch}: ${view.model}, ${view.layers} layers, ${view.reproduced}. Peak of each category on its own and of the total; tensor bytes (no CUDA context, no allocator cache). Tolerance: 3 % per category, 2 % on the total.`));
  if (view.notes.length) {
    const list = el('ul', 'muted');
    for (const n of view.notes) list.appendChild(el('li', undefined, n));
    box.appendChild(list);
  }
  view.stages.forEach((s, i) => {
    const rows = s.rows.map((r) => [`${r.ok ? '✓' : '✗'} ${r.category}`, formatBytes(r.oracle, units), formatBytes(r.estimate, units), pct(r.relError)]);
    const data = s.rows.map((r) => ({ category: r.category, oracle: String(r.oracle), estimate: String(r.estimate), ok: String(r.ok) }));
    const t = table(`oracle-stage-${i}`, `${s.label}${s.ok ? '' : ' — differs'}`, ['Category', 'torch', 'ShardLens', 'Error'], rows, data);
    if (t instanceof HTMLDetailsElement) t.open = true;
    box.appendChild(t);
  });
  return box;
}
