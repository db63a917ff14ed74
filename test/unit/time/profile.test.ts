// A measured cluster profile (shardlens profile): its lookups, its parsing of a file the user may have edited, the
// request built from plans, and an estimate that times its kernels from the profile and says so in every term.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  normalizeProfile, profileAttentionRate, profileCollectiveSeconds, profileGemmRate, type ClusterProfile,
} from '../../../shared/hardware/profile';
import { makePlan } from '../../../shared/plan/defaults';
import { withProfile } from '../../../shared/plan/profilePlan';
import type { ModelSpec, Problem } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';
import { FITTED_PARAMS } from '../../../shared/time/params';
import { profileRequest } from '../../../shared/time/profileRequest';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { resolveSettings } from '../../../server/analysis/resolveAdapter';
import { normalizeSettings } from '../../../server/settings';
import { fixture, memoryHost } from '../formats/helpers';

const RATE = 400e12; // FLOP/s of the one measured GEMM below
const HBM = 3e12; // measured copy bandwidth, bytes/s

function profile(extra: Partial<Record<string, unknown>> = {}): ClusterProfile {
  const p = normalizeProfile({
    kind: 'shardlens-profile', device: 'NVIDIA H100 80GB HBM3', backend: 'nccl', worldSize: 8, gpusPerNode: 8, createdAt: '2025-01-01T00:00:00Z',
    gemm: [{ dtype: 'bf16', m: 4096, n: 4096, k: 4096, seconds: (2 * 4096 ** 3) / RATE }],
    attention: [{ seq: 4096, headDim: 128, causal: true, batchHeads: 32, fwdSeconds: 1e-3, bwdSeconds: 2.5e-3 }],
    hbmBytesPerSecond: HBM,
    collectives: [
      { kind: 'all-reduce', groupSize: 8, perNode: 8, bytes: 1e6, seconds: 40e-6 },
      { kind: 'all-reduce', groupSize: 8, perNode: 8, bytes: 1e8, seconds: 1.1e-3 },
    ],
    ...extra,
  }, '/tmp/p.json');
  assert.ok(p);
  return p;
}

describe('profile lookups (shared/hardware/profile.ts)', () => {
  test('a measured GEMM shape gives back its own rate, 2·M·N·K / seconds', () => {
    assert.equal(profileGemmRate(profile(), 'bf16', 4096, 4096, 4096), RATE);
    assert.equal(profileGemmRate(profile(), 'fp8', 4096, 4096, 4096), undefined, 'no fp8 point: no fp8 rate');
  });

  test('a shape between two measured ones gets a rate between theirs (inverse-distance weighting in log space)', () => {
    const p = profile({
      gemm: [
        { dtype: 'bf16', m: 1024, n: 1024, k: 1024, seconds: (2 * 1024 ** 3) / 200e12 },
        { dtype: 'bf16', m: 8192, n: 8192, k: 8192, seconds: (2 * 8192 ** 3) / 600e12 },
      ],
    });
    // 2048³ is 1 doubling from the first and 2 from the second in each dimension: weights 1/3 and 1/12, so
    // (200/3 + 600/12) / (1/3 + 1/12) = 280 TFLOP/s.
    const r = profileGemmRate(p, 'bf16', 2048, 2048, 2048) ?? 0;
    assert.ok(Math.abs(r - 280e12) < 1e6, `${r}`);
  });

  test('attention FLOPs as the FlashAttention papers count them: 4·s²·d per head, causal half, backward 2.5×', () => {
    const f = 4 * 4096 * 4096 * 128 * 32 * 0.5;
    assert.ok(Math.abs((profileAttentionRate(profile(), 'fwd', 4096, 128, true) ?? 0) - f / 1e-3) < 1);
    assert.ok(Math.abs((profileAttentionRate(profile(), 'bwd', 4096, 128, true) ?? 0) - (2.5 * f) / 2.5e-3) < 1);
    assert.equal(profileAttentionRate(profile(), 'fwd', 4096, 128, false), undefined, 'no non-causal point');
  });

  test('collectives: linear between measured sizes, the last bus bandwidth beyond, the first time below', () => {
    const p = profile();
    const mid = 0.5e8 + 0.5e6;
    assert.ok(Math.abs((profileCollectiveSeconds(p, 'all-reduce', mid, 8, 8) ?? 0) - (40e-6 + 1.1e-3) / 2) < 1e-12);
    assert.ok(Math.abs((profileCollectiveSeconds(p, 'all-reduce', 4e8, 8, 8) ?? 0) - 4.4e-3) < 1e-12);
    assert.equal(profileCollectiveSeconds(p, 'all-reduce', 10, 8, 8), 40e-6);
    // Another layout of the same group size falls back to the same size; another size or kind is not measured.
    assert.equal(profileCollectiveSeconds(p, 'all-reduce', 1e6, 8, 4), 40e-6);
    assert.equal(profileCollectiveSeconds(p, 'all-reduce', 1e6, 16, 8), undefined);
    assert.equal(profileCollectiveSeconds(p, 'all-gather', 1e6, 8, 8), undefined);
  });
});

describe('normalizeProfile: a file the user may have edited', () => {
  test('not a profile, or nothing measured: undefined', () => {
    for (const raw of [null, 3, 'x', [], {}, { kind: 'shardlens-probe-report' }, { kind: 'shardlens-profile', gemm: [] }]) {
      assert.equal(normalizeProfile(raw, 'f'), undefined, JSON.stringify(raw));
    }
  });

  test('malformed measurements are dropped and counted; the rest is kept', () => {
    const p = profile({
      gemm: [
        { dtype: 'bf16', m: 64, n: 64, k: 64, seconds: 1e-6 },
        { dtype: 'bf16', m: -1, n: 64, k: 64, seconds: 1e-6 },
        { dtype: 'int4', m: 64, n: 64, k: 64, seconds: 1e-6 },
        { dtype: 'bf16', m: 64, n: 64, k: 64, seconds: 'fast' },
        { dtype: 'bf16', m: 64, n: 64, k: 64, seconds: Number.NaN },
        null,
      ],
      collectives: [{ kind: 'broadcast', groupSize: 2, perNode: 2, bytes: 1, seconds: 1 }],
      warnings: ['cpu', 7],
    });
    assert.equal(p.gemm.length, 1);
    assert.equal(p.collectives.length, 0);
    assert.deepEqual(p.warnings, ['cpu', '5 malformed measurement(s) were ignored']);
  });
});

const MODEL: ModelSpec = {
  name: 'm', layers: 4, hiddenSize: 1024, heads: 8, kvHeads: 8, headDim: 128, ffnSize: 4096, gatedMlp: false, attnBias: 'none',
  mlpBias: false, tiedEmbeddings: false, positions: 'rotary', maxPositions: 4096, norm: 'rmsnorm', qkNorm: false, vocabSize: 32000,
};
const plan = (tp = 1) => makePlan({ model: MODEL, training: { microBatch: 2, seqLen: 512, precision: 'bf16-mixed' }, parallel: { dp: 8 / tp, tp } });

describe('profile request (shared/time/profileRequest.ts)', () => {
  test('the forward GEMMs of a layer at the plan\'s tokens and TP split, and no collective larger than the ranks measured', () => {
    // Tokens per rank T = micro-batch 2 × 512; TP 2 splits QKV (3·1024 → 1536 columns) and the MLP (4096 → 2048).
    const r = profileRequest([plan(2)], { ranks: 2, gpusPerNode: 2 });
    const has = (m: number, n: number, k: number) => r.gemm.some((g) => g.m === m && g.n === n && g.k === k && g.dtype === 'bf16');
    assert.ok(has(1024, 1536, 1024), 'QKV forward');
    assert.ok(has(1024, 1024, 512), 'output projection forward');
    assert.ok(has(1024, 2048, 1024), 'MLP up forward');
    assert.ok(has(1024, 1024, 2048), 'MLP down forward');
    assert.ok(has(1024, 16000, 1024), 'LM head forward (vocab / TP)');
    assert.ok(r.collectives.length > 0);
    assert.ok(r.collectives.every((c) => c.groupSize <= 2 && c.perNode <= 2));
    assert.deepEqual(r.attention, [{ seq: 512, headDim: 128, causal: true, heads: 4 }]);
  });

  test('--quick shrinks every shape for CPU plumbing runs', () => {
    const r = profileRequest([plan()], { quick: true, ranks: 2 });
    assert.ok(r.gemm.every((g) => g.m <= 256 && g.n <= 256 && g.k <= 256));
    assert.ok(r.collectives.every((c) => c.bytes.every((b) => b <= 65536)));
  });
});

describe('an estimate on a profiled cluster', () => {
  test('GEMMs take 2·M·N·K / (measured rate × in-training factor), and every kernel term names the profile', () => {
    const problems: Problem[] = [];
    const est = estimateStepTime(withProfile(plan(), profile(), problems));
    assert.equal(problems.length, 0, 'measured on the plan\'s GPU: no device warning');
    const gemm = est.operatorTerms.find((t) => t.name === 'gemm');
    assert.ok(gemm);
    // Forward GEMM FLOPs of one micro-batch, by hand: per layer 2T·h·(3h + h + 2·ffn), plus the LM head 2T·h·V.
    const T = 1024, h = 1024, f = 4096, V = 32000;
    const flops = 4 * 2 * T * h * (3 * h + h + 2 * f) + 2 * T * h * V;
    const want = flops / (RATE * FITTED_PARAMS.gemmScale);
    assert.ok(Math.abs(gemm.forward - want) / want < 1e-9, `${gemm.forward} vs ${want}`);
    for (const name of ['gemm', 'attention', 'elementwise'] as const) {
      assert.match(est.operatorTerms.find((t) => t.name === name)?.provenance ?? '', /measured profile \/tmp\/p\.json/);
    }
    assert.ok(est.provenance.some((p) => p.startsWith('collectives: measured profile')));
  });

  test('a profile of another device is used, with a warning naming both', () => {
    const problems: Problem[] = [];
    withProfile(plan(), profile({ device: 'cpu' }), problems);
    assert.equal(problems[0]?.code, 'profile-device');
    assert.match(problems[0]?.message ?? '', /cpu.*H100/);
  });
});

describe('the shardlens.profile setting', () => {
  before(async () => { await initFormats(); });
  const ds = fixture('deepspeed/zero2_auto.json').text;
  const settings = (profile: unknown) => resolveSettings(normalizeSettings({ cluster: { gpu: 'H100-SXM' }, worldSize: 8, profile }));
  const file = JSON.stringify({
    kind: 'shardlens-profile', device: 'NVIDIA H100 80GB HBM3', createdAt: 'x', gemm: [{ dtype: 'bf16', m: 64, n: 64, k: 64, seconds: 1e-6 }],
  });

  test('a profile file relative to the workspace is read through the host and named in the plan and its step time', () => {
    const host = memoryHost({ '/ws/ds.json': ds, '/ws/.shardlens/profile.json': file });
    const g = loadConfigGraph('/ws/ds.json', host, { settings: settings('.shardlens/profile.json') });
    assert.equal(g.resolved.plan?.cluster.profile?.gemm.length, 1);
    assert.ok(g.dependencies.includes('/ws/.shardlens/profile.json'), 'a new sweep re-analyses the document');
    const est = estimateStepTime(g.resolved.plan!);
    assert.match(est.operatorTerms.find((t) => t.name === 'gemm')?.provenance ?? '', /measured profile \.shardlens\/profile\.json/);
  });

  test('a missing or malformed profile leaves the catalog curves and says why', () => {
    for (const [files, why] of [[{}, /was not found/], [{ '/ws/p.json': '{' }, /is not JSON/], [{ '/ws/p.json': '{"kind":"x"}' }, /not a ShardLens cluster profile/]] as const) {
      const host = memoryHost({ '/ws/ds.json': ds, ...files });
      const g = loadConfigGraph('/ws/ds.json', host, { settings: settings('p.json') });
      assert.equal(g.resolved.plan?.cluster.profile, undefined);
      const w = g.resolved.problems.find((p) => p.code === 'profile-unreadable');
      assert.match(w?.message ?? '', why);
    }
  });

  test('a non-string setting is ignored', () => assert.equal(normalizeSettings({ profile: 7 }).profile, ''));
});
