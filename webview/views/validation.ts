/**
 * Validation dashboard: launch a local run (tfjs runner) or a PyTorch probe, follow its progress, cancel it, and
 * compare measured with estimated bytes per component for every mode and rank, sharded next to replicated,
 * communication measured vs formula, the checks, the backends and the scaling, and the previous saved run.
 */
import type { DashboardModel, ValidationResultView, ValidationRunView } from '../../shared/protocol/webview';
import { el, section, table } from '../dom';
import { formatBytes, formatCount } from '../../shared/units';
import { scaledRunScope, validationHeadline } from '../../shared/wording/validation';
import { fileNameOf } from '../../shared/wording/files';
import { command, type UiState } from '../state';
import { badge, button } from '../ui/toolkit';
import { commChart, componentsChart, lossChart, shardedVsReplicatedChart, STATE_COMPONENTS } from './validationCharts';
import { renderOracle } from './oracle';

const COMPONENTS = ['parameters', 'gradients', 'optimizer', 'sent', 'peak', 'tapePeak'] as const;

function toolbar(running: boolean, untrusted: boolean): HTMLElement {
  const bar = el('div', 'toolbar');
  const off = running || untrusted;
  const why = untrusted ? 'Runs launch processes, which is disabled in an untrusted workspace' : undefined;
  bar.append(
    button('Check sharding arithmetic', () => command('runValidation'), {
      id: 'run-validation', disabled: off, title: why ?? 'Train a 2-layer scaled model for a few steps in each sharding mode (TensorFlow.js) and check the arithmetic',
    }),
    button('Run on PyTorch', () => command('runProbe'), { id: 'run-probe', disabled: off, secondary: true, title: why ?? 'Measure the real model per rank with the torchrun probe' }),
    button('Exact memory (no GPU)', () => command('runOracle'), {
      id: 'run-oracle', disabled: off, secondary: true,
      title: why ?? 'Validate the real model without a GPU: torch builds it on fake tensors (shardlens probe --fake) and reports its peak per category',
    }),
    button('Cancel', () => command('cancelValidation'), { id: 'cancel-validation', disabled: !running, secondary: true }),
  );
  return bar;
}

function progress(ui: UiState): HTMLElement | undefined {
  if (!ui.progress) return undefined;
  const p = el('div', 'progress');
  const meter = el('progress');
  meter.max = 1;
  if (ui.progress.state !== 'running' || ui.progress.fraction > 0) meter.value = ui.progress.fraction;
  meter.setAttribute('aria-label', 'Validation progress');
  p.append(meter, el('span', `state-${ui.progress.state}`, ui.progress.message));
  return p;
}

/**
 * The headline says exactly what the run checked; for the scaled local run it also says what it does not check and
 * how to validate the real model.
 */
function summary(res: ValidationResultView): HTMLElement {
  const box = el('div', 'validation-summary');
  const checks = (res.checks ?? []).filter((c) => c.passed !== null);
  const failed = checks.filter((c) => c.passed === false).length;
  const head = el('p', 'validation-headline');
  head.id = 'validation-headline';
  if (checks.length) head.appendChild(badge(failed ? 'failed' : 'arithmetic ok', failed ? 'bad' : 'info'));
  head.appendChild(el('strong', undefined, ` ${validationHeadline(res)}`));
  box.appendChild(head);
  if (res.source === 'tfjs') {
    const scope = el('p', 'muted', scaledRunScope(true));
    scope.id = 'validation-scope';
    box.appendChild(scope);
  }
  box.appendChild(el('p', 'muted', `${res.source === 'torch' ? 'PyTorch probe' : res.source === 'oracle' ? 'PyTorch on fake tensors' : 'Local run'}: ${res.backend}. ${formatCount(res.parameters)} parameters in the run${res.startedAt ? `, started ${res.startedAt}` : ''}.`));
  if (res.scaling) box.appendChild(el('p', 'muted', `Scaling: ${res.scaling}.`));
  if (res.backends?.length) {
    const list = el('ul', 'backends');
    for (const b of res.backends) list.appendChild(el('li', b.ok ? 'ok' : 'muted', `${b.name}: ${b.ok ? 'usable' : 'not used'} — ${b.reason}`));
    box.appendChild(list);
  }
  return box;
}

/** Every check with its verdict; checks that are shown but not asserted are marked "info". */
function checksList(res: ValidationResultView): HTMLElement | undefined {
  if (!res.checks?.length) return undefined;
  const details = el('details', 'checks');
  const failed = res.checks.filter((c) => c.passed === false);
  details.open = failed.length > 0;
  details.appendChild(el('summary', undefined, `Checks (${res.checks.length})`));
  const list = el('ul');
  for (const c of [...failed, ...res.checks.filter((x) => x.passed !== false)]) {
    const mark = c.passed === true ? '✓' : c.passed === false ? '✗' : 'ℹ';
    list.appendChild(el('li', c.passed === false ? 'bad' : undefined, `${mark} ${c.label}: ${c.detail}`));
  }
  details.appendChild(list);
  return details;
}

/** Tape peak vs the core's activation estimate, with the ratio (shown, not forced to agree). */
function peakTable(runs: readonly ValidationRunView[], units: 'GiB' | 'GB'): HTMLElement | undefined {
  const rows = runs.flatMap((r) => {
    const m = r.ranks[0]?.measured, e = r.ranks[0]?.estimated;
    if (m?.tapeTransient === undefined || !e?.activations) return [];
    return [[r.label ?? r.mode, formatBytes(m.tapePeak ?? 0, units), formatBytes(m.tapeTransient, units), formatBytes(e.activations, units), `${(m.tapeTransient / e.activations).toFixed(1)}×`]];
  });
  if (!rows.length) return undefined;
  return table('validation-peak', 'tfjs tape peak vs the core’s activation estimate (rank 0)', ['Mode', 'tfjs tape peak', 'transient part', 'core activations', 'ratio'], rows);
}

/** Rank 0 now vs the previous saved run, per mode and component. */
function previousTable(res: ValidationResultView, units: 'GiB' | 'GB'): HTMLElement | undefined {
  const prev = res.previous;
  if (!prev) return undefined;
  const rows = res.runs.flatMap((run) => {
    const before = prev.runs.find((p) => p.mode === run.mode)?.ranks[0];
    const now = run.ranks[0];
    if (!before || !now) return [];
    return [...STATE_COMPONENTS.map(([k]) => k), 'sent'].map((k) => [`${run.label ?? run.mode} ${k}`,
      formatBytes(now.measured[k] ?? 0, units), formatBytes(before.measured[k] ?? 0, units)]);
  });
  return rows.length ? table('validation-previous', `Compared with the run of ${prev.startedAt} (${prev.reportPath})`, ['Mode / component', 'This run', 'Previous run'], rows) : undefined;
}

function figuresTable(res: ValidationResultView, units: 'GiB' | 'GB'): HTMLElement {
  const keys = COMPONENTS.filter((k) => res.runs.some((run) => run.ranks.some((r) => r.measured[k] !== undefined || r.estimated[k] !== undefined)));
  return table('validation-table', 'Figures per rank', ['Mode / rank', ...keys.flatMap((k) => [`${k} measured`, `${k} estimated`])],
    res.runs.flatMap((run) => run.ranks.map((r) => [`${run.label ?? run.mode} / ${r.rank}`, ...keys.flatMap((k) => [
      r.measured[k] !== undefined ? formatBytes(r.measured[k], units) : '—', r.estimated[k] !== undefined ? formatBytes(r.estimated[k], units) : '—'])])));
}

/** The results to show for the dashboards' file: a run made for another file stays with that file. */
function resultsFor(ui: UiState, m: DashboardModel | undefined): ValidationResultView | undefined {
  const res = ui.validation;
  if (!res || !m || !res.configUri) return res;
  return res.configUri === m.uri ? res : undefined;
}

export function renderValidation(host: HTMLElement, ui: UiState, m: DashboardModel | undefined): void {
  const units = m?.units ?? 'GiB';
  const s = section('Validation', 'validation');
  const untrusted = ui.trusted === false;
  s.appendChild(toolbar(ui.progress?.state === 'running', untrusted));
  const p = progress(ui);
  if (p) s.appendChild(p);
  const res = resultsFor(ui, m);
  if (!res) {
    const other = ui.validation?.configUri ? ` (the last results are for ${fileNameOf(ui.validation.configUri)})` : '';
    const empty = el('p', 'muted', `No results for ${m ? m.fileName : 'this file'} yet${other}.${untrusted ? ' Runs are disabled in untrusted workspaces.' : ''}`);
    empty.id = 'validation-empty';
    s.appendChild(empty);
    host.appendChild(s);
    return;
  }
  s.appendChild(summary(res));
  if (res.oracle) s.appendChild(renderOracle(res.oracle, units));
  const checks = checksList(res);
  if (checks) s.appendChild(checks);
  if (res.runs.length > 1) {
    s.appendChild(el('h3', undefined, 'Sharded vs replicated (rank 0)'));
    shardedVsReplicatedChart(s, res.runs, units);
  }
  if (res.runs.some((r) => r.collectives?.length)) {
    s.appendChild(el('h3', undefined, 'Communication: measured vs formula'));
    commChart(s, res.runs, units);
  }
  res.runs.forEach((run, i) => {
    const sub = el('div', 'run');
    const rel = run.relativeL2 !== undefined ? ` — relative L2 vs replicated ${run.relativeL2.toExponential(1)}` : '';
    sub.appendChild(el('h3', undefined, `${run.label ?? run.mode}${rel}`));
    componentsChart(sub, run, i, units);
    s.appendChild(sub);
  });
  if (res.runs.some((r) => r.losses?.length)) {
    s.appendChild(el('h3', undefined, 'Loss per step (modes that agree draw over each other)'));
    lossChart(s, res.runs);
  }
  for (const t of [peakTable(res.runs, units), previousTable(res, units), figuresTable(res, units)]) if (t) s.appendChild(t);
  if (res.reportPath) s.appendChild(el('p', 'muted', `Report: ${res.reportPath}`));
  host.appendChild(s);
}
