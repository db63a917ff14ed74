/**
 * The header above every dashboard: the file, the verdict in the shared wording (conditional when it rests on assumed
 * inputs), model and cluster, and the assumptions one click away. Without a model: one status line with the reason
 * (and a Retry button when the request failed), printed once.
 */
import type { DashboardModel } from '../../shared/protocol/webview';
import { formatDuration, formatGpuHours, RUN_LENGTH_SCOPE } from '../../shared/wording/runLength';
import { formatBytes, formatCount, formatSeconds } from '../../shared/units';
import { INPUT_WORDS, decidingAssumptions } from '../../shared/wording/verdict';
import { el } from '../dom';
import { command, waiting, type UiState } from '../state';
import { button } from '../ui/toolkit';

/** The assumption list: open when an assumption decides the verdict, with the command that changes each. */
function assumptionList(m: DashboardModel): HTMLElement {
  const d = el('details', 'data assumptions');
  d.id = 'assumptions';
  d.open = decidingAssumptions(m.assumptions).length > 0;
  d.appendChild(el('summary', undefined, `${m.assumptions.length} assumed input${m.assumptions.length === 1 ? '' : 's'}`));
  const ul = el('ul');
  for (const a of m.assumptions) {
    const li = el('li', undefined, `${INPUT_WORDS[a.path] ?? a.path} = ${a.value}: ${a.detail}`);
    li.dataset.path = a.path;
    ul.appendChild(li);
  }
  d.appendChild(ul);
  const bar = el('div', 'toolbar');
  bar.append(
    button('Set model…', () => command('selectModel'), { secondary: true, id: 'assumption-model' }),
    button('Set GPU / cluster…', () => command('selectCluster'), { secondary: true, id: 'assumption-cluster' }),
  );
  d.appendChild(bar);
  return d;
}

export function header(m: DashboardModel, full: boolean): HTMLElement {
  const h = el('header');
  h.appendChild(el('h1', undefined, m.fileName));
  const v = m.verdict;
  const line = el('div', 'summary');
  line.id = 'summary';
  line.dataset.peakBytes = String(m.peakReservedBytes);
  line.dataset.fits = String(m.fits);
  line.dataset.conditional = String(v.conditional);
  line.dataset.uri = m.uri;
  const kind = v.conditional ? 'warn' : m.fits ? 'ok' : 'bad';
  const mark = v.conditional ? '⚠' : m.fits ? '✓' : '✗';
  line.append(
    el('span', `verdict verdict-${kind}`, `${mark} ${v.headline}`),
    el('span', 'muted', `peak reserved ${formatBytes(m.peakReservedBytes, m.units)}, allocated ${formatBytes(m.peakAllocatedBytes, m.units)} (pipeline stage ${m.peakStage})`),
    el('span', 'muted', `${m.modelName}, ${formatCount(m.parameters)} parameters`),
    el('span', 'muted', `${m.cluster.nodes || '?'} × ${m.cluster.gpusPerNode || '?'} × ${m.cluster.gpuName}`),
  );
  if (m.stepSeconds) line.appendChild(el('span', 'muted', `step ${formatSeconds(m.stepSeconds)}`));
  if (m.run) {
    const run = el('span', 'muted', `${m.run.steps.toLocaleString('en-US')} steps ≈ ${formatDuration(m.run.seconds)}, ${formatGpuHours(m.run.gpuHours)}`);
    run.id = 'run-length';
    run.title = `The steps the file plans × the step time on ${m.run.gpus} GPUs: ${RUN_LENGTH_SCOPE}.`;
    line.appendChild(run);
  }
  h.appendChild(line);
  if (!full) return h;
  if (m.problems.length) {
    const ul = el('ul', 'problems');
    for (const p of m.problems.slice(0, 8)) ul.appendChild(el('li', p.severity, p.message));
    h.appendChild(ul);
  }
  if (m.assumptions.length) h.appendChild(assumptionList(m));
  return h;
}

/** The one line shown without a model: why, and Retry when a request failed or got no answer. */
export function statusLine(ui: UiState, retry: () => void): HTMLElement {
  const p = el('div', 'status-line');
  p.id = 'status-line';
  const failed = ui.failed?.model;
  if (failed) {
    p.append(el('span', 'state-failed', failed), button('Retry', retry, { id: 'retry-model', secondary: true }));
  } else {
    p.appendChild(el('span', 'muted', ui.empty ?? (waiting('model') ? 'Waiting for the estimate…' : 'No estimate yet.')));
  }
  return p;
}
