/**
 * Normalises the JSON reports of the tfjs validation runner (`shardlens validate --json`, issue 6) and of the torchrun
 * probe (`shardlens probe --out`, issue 7) into the dashboard's ValidationResultView. Pure; malformed input gives
 * undefined, never an exception.
 */
import type { ValidationRankView, ValidationResultView, ValidationRunView } from '../../shared/protocol';

type Obj = Record<string, unknown>;
const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const amount = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) && x >= 0 ? x : undefined);

/** The byte fields both reports share, with the short names the charts use. */
const FIELDS: readonly (readonly [string, string])[] = [
  ['parametersBytes', 'parameters'],
  ['gradientsBytes', 'gradients'],
  ['optimizerStatesBytes', 'optimizer'],
  ['sentBytes', 'sent'],
  ['commBytesPerStep', 'sent'],
  ['peakAllocatedBytes', 'peak'],
  // tfjs runner: the tape peak of the step and the core's activation estimate it is compared with.
  ['tapePeakBytes', 'tapePeak'],
  ['tapeActivationBytes', 'tapeTransient'],
  ['activationBytes', 'activations'],
];

/** Picks the known byte fields of one measured/estimated object. */
export function byteFields(x: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isObj(x)) return out;
  for (const [key, name] of FIELDS) {
    const v = amount(x[key]);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

function rankOf(x: unknown, i: number, flat: boolean): ValidationRankView | undefined {
  if (!isObj(x)) return undefined;
  const rank = Number.isInteger(x.rank) && (x.rank as number) >= 0 ? (x.rank as number) : i;
  const measured = byteFields(flat ? x : x.measured);
  if (!Object.keys(measured).length) return undefined;
  return { rank, measured, estimated: byteFields(x.estimated) };
}

function ranksOf(x: unknown, flat: boolean): ValidationRankView[] {
  return Array.isArray(x) ? x.map((r, i) => rankOf(r, i, flat)).filter((r): r is ValidationRankView => !!r) : [];
}

const str = (x: unknown): string | undefined => (typeof x === 'string' ? x : undefined);

/** Measured (rank 0) vs formula bytes per collective kind; measured labels read "<kind> (<phase>)". */
function collectivesOf(rank0: unknown): ValidationRunView['collectives'] {
  if (!isObj(rank0) || !isObj(rank0.measured) || !isObj(rank0.estimated)) return undefined;
  const measured = isObj(rank0.measured.collectives) ? rank0.measured.collectives : {};
  const estimated = isObj(rank0.estimated.collectives) ? rank0.estimated.collectives : {};
  const kinds = new Set([...Object.keys(estimated), ...Object.keys(measured).map((k) => k.split(' (')[0])]);
  return [...kinds].map((kind) => ({
    label: kind,
    measured: Object.entries(measured).filter(([k]) => k.split(' (')[0] === kind)
      .reduce((a, [, v]) => a + (isObj(v) ? amount(v.sentBytes) ?? 0 : 0), 0),
    estimated: amount(estimated[kind]) ?? 0,
  }));
}

/** The runner's extra fields of one run: label, relative L2 vs replicated, losses, collectives. */
function runExtras(r: Obj): Partial<ValidationRunView> {
  const losses = Array.isArray(r.losses) && r.losses.every((x) => amount(x) !== undefined) ? (r.losses as number[]) : undefined;
  const rel = amount(r.relativeL2VsReplicated);
  const collectives = collectivesOf(Array.isArray(r.ranks) ? r.ranks[0] : undefined);
  return {
    ...(str(r.label) ? { label: str(r.label) } : {}),
    ...(rel !== undefined ? { relativeL2: rel } : {}),
    ...(losses ? { losses } : {}),
    ...(collectives ? { collectives } : {}),
  };
}

/** The runner's report-level extras: backends with reasons, scaling, checks, status. */
function reportExtras(json: Obj): Partial<ValidationResultView> {
  const backends = Array.isArray(json.backends)
    ? json.backends.filter(isObj).map((b) => ({ name: str(b.name) ?? '?', ok: b.ok === true, reason: str(b.reason) ?? '' }))
    : undefined;
  const checks = Array.isArray(json.checks)
    ? json.checks.filter(isObj).map((c) => ({
      label: str(c.label) ?? '', passed: c.passed === true ? true : c.passed === false ? false : null, detail: str(c.detail) ?? '',
    }))
    : undefined;
  const dropped = isObj(json.scaling) && Array.isArray(json.scaling.dropped) ? json.scaling.dropped.filter((d): d is string => typeof d === 'string') : [];
  const summary = isObj(json.scaling) ? str(json.scaling.summary) : undefined;
  const scaling = summary && dropped.length ? `${summary}; not reproduced: ${dropped.join('; ')}` : summary;
  const run = isObj(json.scaling) && isObj(json.scaling.layers) ? amount(json.scaling.layers.run) : undefined;
  return {
    ...(run !== undefined && Number.isInteger(run) ? { scaledLayers: run } : {}),
    ...(backends ? { backends } : {}),
    ...(checks ? { checks } : {}),
    ...(scaling ? { scaling } : {}),
    ...(str(json.status) ? { status: str(json.status) } : {}),
    ...(str(json.startedAt) ? { startedAt: str(json.startedAt) } : {}),
  };
}

/** The tfjs runner's report: `backend`, `parameters`, `runs[].mode`, `runs[].ranks[].{measured,estimated}`. */
export function fromRunnerReport(json: unknown, reportPath?: string): ValidationResultView | undefined {
  if (!isObj(json) || !Array.isArray(json.runs)) return undefined;
  const runs: ValidationRunView[] = json.runs.flatMap((r) => {
    if (!isObj(r) || typeof r.mode !== 'string') return [];
    const ranks = ranksOf(r.ranks, false);
    return ranks.length ? [{ mode: r.mode, ranks, ...runExtras(r) }] : [];
  });
  if (!runs.length) return undefined;
  const label = str(json.backendLabel);
  const backend = label ?? (typeof json.backend === 'string' ? json.backend : isObj(json.backend) && typeof json.backend.name === 'string' ? json.backend.name : 'unknown backend');
  return { source: 'tfjs', backend, parameters: amount(json.parameters) ?? 0, runs, ...reportExtras(json), ...(reportPath ? { reportPath } : {}) };
}

/** The probe's report: `schemaVersion`, `engine`, `mode`, `parameters`, flat `ranks[]` (estimates optional). */
export function fromProbeReport(json: unknown, reportPath?: string): ValidationResultView | undefined {
  if (!isObj(json) || json.schemaVersion === undefined || typeof json.mode !== 'string') return undefined;
  const ranks = ranksOf(json.ranks, true);
  if (!ranks.length) return undefined;
  const engine = isObj(json.engine)
    ? Object.entries(json.engine).filter(([, v]) => typeof v === 'string').map(([k, v]) => `${k} ${String(v)}`).join(', ')
    : typeof json.engine === 'string' ? json.engine : 'torch';
  return { source: 'torch', backend: engine || 'torch', parameters: amount(json.parameters) ?? 0, runs: [{ mode: json.mode, ranks }], ...(reportPath ? { reportPath } : {}) };
}
