/**
 * Turns the ranks' measurements and the core's estimates into the report: per rank measured vs estimated, the known
 * extras itemised, and the checks (model states exact, traffic equal to the formulas, ranks identical, sharded modes
 * equal to the replicated run).
 */
import type { Layout } from '../model/layout';
import type { RankModeResult } from '../train/trainer';
import type { ModeEstimate } from '../estimate/expected';
import {
  MODE_LABEL, MODE_STAGE, type KnownExtra, type MeasuredRank, type ModeRun, type RankReport, type ValidationCheck,
  type ValidationMode,
} from '../types';
import { relativeL2 } from './compare';

/** Relative L2 tolerance of sharded vs replicated parameters after K steps (issue 6 §2). */
export const REL_L2_TOLERANCE = 1e-4;

const median = (xs: readonly number[]): number => {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** Padding bytes of each component: every unit is padded to a multiple of N so that shards are equal. */
export function paddingExtras(layout: Layout, mode: ValidationMode): KnownExtra[] {
  const pad = layout.paddedParameters - layout.parameters, n = layout.ranks, stage = MODE_STAGE[mode];
  if (pad === 0) return [];
  const why = `padding of each flat unit to a multiple of ${n} ranks (${pad} elements in all)`;
  const ringFactor = n > 1 ? ((stage === 3 ? 3 : 2) * (n - 1)) / n : 0;
  return [
    { component: 'parametersBytes', bytes: (4 * pad) / (stage >= 3 ? n : 1), reason: why },
    { component: 'gradientsBytes', bytes: (4 * pad) / (stage >= 2 ? n : 1), reason: why },
    { component: 'optimizerStatesBytes', bytes: (8 * pad) / (stage >= 1 ? n : 1), reason: why },
    { component: 'sentBytes', bytes: ringFactor * 4 * pad, reason: why },
  ];
}

function measuredOf(r: RankModeResult, constantsBytes: number): MeasuredRank {
  const collectives = Object.fromEntries(Object.entries(r.traffic).map(([k, v]) => [k, { ...v }]));
  const sent = Object.values(r.traffic).reduce((a, t) => a + t.sentBytes, 0);
  const received = Object.values(r.traffic).reduce((a, t) => a + t.receivedBytes, 0);
  return {
    parametersBytes: r.parametersBytes,
    gradientsBytes: r.gradientsBytes,
    optimizerStatesBytes: r.optimizerStatesBytes,
    sentBytes: sent,
    receivedBytes: received,
    collectives,
    tapePeakBytes: r.tapePeakBytes,
    tapeActivationBytes: Math.max(0, r.tapePeakBytes - r.atRestBytes - r.gradientsBytes),
    constantsBytes,
    jsCommBufferBytes: r.jsCommBufferBytes,
    stepTimeMs: median(r.stepTimesMs),
    losses: r.losses,
    loss: r.losses[r.losses.length - 1] ?? 0,
    leakedBytes: r.leakedBytes,
  };
}

const COMPONENTS = [
  ['parametersBytes', 'parameter bytes'], ['gradientsBytes', 'gradient bytes'],
  ['optimizerStatesBytes', 'optimizer-state bytes'], ['sentBytes', 'bytes sent per step'],
] as const;

/** Builds one mode's run and its checks. `reference` holds the DDP run's final parameters, when there is one. */
export function buildModeRun(
  mode: ValidationMode, layout: Layout, results: readonly RankModeResult[], constantsBytes: readonly number[],
  est: ModeEstimate, reference: { init: Float32Array; final: Float32Array } | null,
): { run: ModeRun; checks: ValidationCheck[] } {
  const extras = paddingExtras(layout, mode);
  const checks: ValidationCheck[] = [];
  const ranks: RankReport[] = results.map((r, rank) => {
    const measured = measuredOf(r, constantsBytes[rank] ?? 0);
    for (const [key, words] of COMPONENTS) {
      const extra = extras.filter((e) => e.component === key).reduce((a, e) => a + e.bytes, 0);
      const expected = est[key] + extra;
      checks.push({
        id: `${mode}.${key}.rank${rank}`, label: `${MODE_LABEL[mode]} rank ${rank}: ${words}`, mode, rank,
        passed: Math.abs(measured[key] - expected) < 1e-6, measured: measured[key], expected,
        detail: extra ? `core estimate ${est[key]} + padding ${extra}` : `core estimate ${est[key]}`,
      });
    }
    checks.push({
      id: `${mode}.leak.rank${rank}`, label: `${MODE_LABEL[mode]} rank ${rank}: no tensor bytes leaked per step`, mode, rank,
      passed: measured.leakedBytes === 0, measured: measured.leakedBytes, expected: 0, detail: 'tf.memory() after the last step vs before the first',
    });
    if (rank === 0 && est.activationBytes) {
      const ratio = measured.tapeActivationBytes / est.activationBytes;
      checks.push({
        id: `${mode}.tape-vs-activations`, label: `${MODE_LABEL[mode]}: tfjs tape peak (transient) vs the core's activation estimate`, mode, rank,
        passed: null, measured: measured.tapeActivationBytes, expected: est.activationBytes,
        detail: `ratio ${ratio.toFixed(2)}×, shown, not checked: tfjs keeps every unfused intermediate of the recomputed unit`,
      });
    }
    return {
      rank, measured, extras,
      estimated: {
        parametersBytes: est.parametersBytes, gradientsBytes: est.gradientsBytes, optimizerStatesBytes: est.optimizerStatesBytes,
        sentBytes: est.sentBytes, activationBytes: est.activationBytes, collectives: est.collectives,
      },
    };
  });
  const first = results[0]?.params;
  const identical = results.every((r) => r.params.length === first.length && r.params.every((x, i) => Object.is(x, first[i])));
  checks.push({
    id: `${mode}.identical`, label: `${MODE_LABEL[mode]}: ranks hold bitwise-identical parameters`, mode,
    passed: identical, measured: identical ? 1 : 0, expected: 1, detail: `${results.length} ranks compared element by element`,
  });
  let rel: number | null = null, relUpdate: number | null = null;
  if (reference && mode !== 'ddp' && first) {
    rel = relativeL2(first, reference.final);
    relUpdate = relativeL2(first, reference.final, reference.init);
    checks.push({
      id: `${mode}.vs-ddp`, label: `${MODE_LABEL[mode]} vs replicated DDP: relative L2 of the parameters`, mode,
      passed: rel <= REL_L2_TOLERANCE, measured: rel, expected: REL_L2_TOLERANCE,
      detail: `‖θ−θ_ddp‖/‖θ_ddp‖ = ${rel.toExponential(2)} (≤ ${REL_L2_TOLERANCE}); relative to the update ${relUpdate.toExponential(2)}`,
    });
  }
  const steps = results[0]?.losses.length ?? 0;
  const losses = Array.from({ length: steps }, (_, t) => results.reduce((a, r) => a + r.losses[t], 0) / results.length);
  return {
    run: { mode, label: MODE_LABEL[mode], stage: MODE_STAGE[mode], ranks, losses, relativeL2VsReplicated: rel, relativeToUpdate: relUpdate, ranksIdentical: identical },
    checks,
  };
}
