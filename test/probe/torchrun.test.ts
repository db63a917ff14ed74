// Runs the real probe under torchrun with Debian's python3-torch on CPU (gloo): DDP and ZeroRedundancyOptimizer at
// 2 and 4 ranks, FSDP (or the reason it cannot run), a layout mismatch, a missing torch, and cancel.
// Skipped with a message when no Python with torch exists; fails instead when CI=true.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countParams } from '../../shared/model/params';
import { estimateMemory } from '../../shared/memory/estimate';
import {
  comparablePlanFor, coreRankEstimate, exportProbePlan, isExportProblem, isProbeFailure, probeAndCompare, pythonCandidates,
  runProbe, validateProbeReport,
} from '../../validation/torch/index';
import { makePlan } from '../../shared/plan/defaults';
import { FAMILY, FAMILY_PSI, TINY, TINY_PSI, TINY_TENSORS, tinyPlan } from './fixtures/plans';

const ci = process.env.CI === 'true';
// The same interpreters runProbe tries, checked synchronously so the suite can be skipped up front.
const torchPython = pythonCandidates().find((py) => spawnSync(py, ['-c', 'import torch'], { stdio: 'ignore', timeout: 60_000 }).status === 0);
const missing = `no Python with torch among ${pythonCandidates().join(', ')}; install python3-torch to run the probe tests`;
const skip = torchPython ? false : missing;
if (!torchPython && !ci) console.log(`# probe tests skipped: ${missing}`);

describe('torchrun probe on CPU (gloo)', { skip: ci ? false : skip }, () => {
  before(() => {
    if (!torchPython) assert.fail(`CI=true but torch is absent: ${missing}`);
  });

  test('the core counts the CI model as 233,216 parameters (first principles, fixtures/plans.ts)', () => {
    assert.equal(countParams(TINY).parameters, TINY_PSI);
  });

  for (const ranks of [2, 4]) {
    for (const mode of ['ddp', 'zero1'] as const) {
      test(`${mode} with ${ranks} ranks: model states within 1 % of the core, communication equal to the formulas`, async () => {
        const plan = tinyPlan(ranks, mode === 'zero1' ? 1 : 0);
        // Two steps: step 0 warms up (DDP rebuilds its buckets), step 1 is measured.
        const out = await probeAndCompare({ plan, ranks, mode, oversubscribe: true, export: { device: 'cpu', steps: 2 }, timeoutMs: 120_000 });
        assert.ok(out.ok, !out.ok ? `${out.code}: ${out.message}\n${out.outputTail ?? ''}` : '');
        const { report, comparison: cmp } = out;
        assert.ok(validateProbeReport(JSON.parse(JSON.stringify(report))).ok);
        assert.equal(report.worldSize, ranks);
        assert.equal(report.backend, 'gloo');
        assert.equal(report.parameters, TINY_PSI);
        assert.equal(report.parameterNumels?.length, TINY_TENSORS);
        // Compared with the core's estimate of exactly what ran (model, batch, dp = ranks, the mode's sharding).
        assert.equal(cmp.estimateSource, 'core');
        const core = coreRankEstimate(estimateMemory(comparablePlanFor(plan, { ...report.plan, parallel: { ...report.plan.parallel, dp: ranks } })).stages[0]);
        // The core's ideal split (Rajbhandari et al. 2020): 4Ψ + 4Ψ + 8Ψ/N_shard bytes for fp32 Adam.
        assert.equal(core.optimizerStatesBytes, (8 * TINY_PSI) / (mode === 'zero1' ? ranks : 1));
        assert.ok(report.ranks.every((r) => r.estimated?.modelStatesBytes !== undefined));
        for (const r of cmp.ranks) {
          for (const t of r.terms) {
            if (t.withinTolerance === undefined) continue;
            assert.ok(t.withinTolerance, `rank ${r.rank} ${t.term}: measured ${t.measured}, expected ${t.expected} (core ${t.estimated})`);
          }
        }
        for (const r of report.ranks) {
          // DDP all-reduces every gradient once per step: 4Ψ bytes in fp32 (torch/nn/parallel/distributed.py).
          assert.equal(r.collectives?.ddp_bucket_allreduce?.payloadBytes, 4 * TINY_PSI);
          if (mode === 'zero1') {
            // ZeroRedundancyOptimizer._sync_params: one broadcast per parameter tensor, 4Ψ bytes in all.
            assert.equal(r.collectives?.broadcast?.payloadBytes, 4 * TINY_PSI);
            assert.equal(r.collectives?.broadcast?.calls, TINY_TENSORS);
            assert.equal(r.commBytesPerStep, 8 * TINY_PSI);
          } else {
            assert.deepEqual(Object.keys(r.collectives ?? {}), ['ddp_bucket_allreduce']);
          }
          assert.ok((r.peakAllocatedBytes ?? 0) >= (r.modelStatesBytes ?? 0));
        }
        // The optimizer shards of ZeRO-1 add up to the replicated 8Ψ (+ 4 B step scalar per tensor).
        const opt = report.ranks.reduce((a, r) => a + (r.optimizerStatesBytes ?? 0), 0);
        assert.equal(opt, mode === 'zero1' ? 8 * TINY_PSI + 4 * TINY_TENSORS : ranks * (8 * TINY_PSI + 4 * TINY_TENSORS));
      });
    }
  }

  test('a GQA / SwiGLU / RMSNorm / rotary / q-k-norm / tied model in bf16 autocast: Ψ as the core counts it, fp32 grads all-reduced', async () => {
    assert.equal(countParams(FAMILY).parameters, FAMILY_PSI);
    const plan = makePlan({ model: FAMILY, training: { microBatch: 2, seqLen: 16, precision: 'bf16-mixed', optimizer: 'adamw' }, parallel: { dp: 2 } });
    const out = await probeAndCompare({ plan, ranks: 2, mode: 'ddp', export: { device: 'cpu', steps: 2 }, timeoutMs: 120_000 });
    assert.ok(out.ok, !out.ok ? `${out.code}: ${out.message}\n${out.outputTail ?? ''}` : '');
    assert.equal(out.report.parameters, FAMILY_PSI);
    for (const r of out.report.ranks) {
      // torch autocast keeps fp32 weights and gradients: 4Ψ each, 8Ψ of AdamW state, a 4Ψ all-reduce.
      assert.equal(r.parametersBytes, 4 * FAMILY_PSI);
      assert.equal(r.commBytesPerStep, 4 * FAMILY_PSI);
    }
    // Replicated, the totals agree with the core (2Ψ weights + 2Ψ grads + 12Ψ optimizer and masters = 16Ψ).
    for (const r of out.comparison.ranks) {
      const states = r.terms.find((t) => t.term === 'modelStates');
      assert.ok(states?.withinTolerance, JSON.stringify(states));
    }
  });

  test('FSDP FULL_SHARD runs where torch supports it on CPU, otherwise the report says why', async () => {
    const plan = tinyPlan(2, 3, 'fsdp');
    const out = await runProbe({ plan, ranks: 2, mode: 'fsdp-full-shard', export: { device: 'cpu', steps: 2 }, timeoutMs: 120_000 });
    if (isProbeFailure(out)) {
      assert.ok(out.report, `${out.code}: ${out.message}\n${out.outputTail ?? ''}`);
      assert.equal(out.report.ok, false);
      assert.ok(['unsupported-on-device', 'torch-too-old'].includes(out.report.errors[0].code), out.report.errors[0].code);
      assert.match(out.message, /FSDP|torch/);
    } else {
      // Full shard: every rank holds Ψ/N of the fp32 parameters (flat-parameter padding aside).
      for (const r of out.ranks) assert.ok(Math.abs((r.parametersBytes ?? 0) / ((4 * TINY_PSI) / 2) - 1) < 0.01);
    }
  });

  test('a world size that does not match the plan fails with layout-mismatch', async () => {
    const exported = exportProbePlan(tinyPlan(4), { ranks: 4, device: 'cpu' });
    assert.ok(!isExportProblem(exported));
    const out = await runProbe({ plan: { ...exported.probePlan, device: 'cpu' }, ranks: 2, timeoutMs: 120_000 });
    assert.ok(isProbeFailure(out));
    assert.equal(out.code, 'layout-mismatch');
    assert.match(out.message, /data-parallel size is 4 but torchrun started 2/);
  });

  test('an interpreter without torch is reported as torch-missing', { skip: !existsSync('/usr/bin/python3') }, async () => {
    // `python3 -S` does not load site-packages, so it cannot see torch.
    const fake = join(mkdtempSync(join(tmpdir(), 'shardlens-nopy-')), 'python-without-torch');
    writeFileSync(fake, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n');
    chmodSync(fake, 0o755);
    const out = await runProbe({ plan: tinyPlan(2), ranks: 2, python: fake });
    assert.ok(isProbeFailure(out) && out.code === 'torch-missing', JSON.stringify(out));
    const none = await runProbe({ plan: tinyPlan(2), ranks: 2, python: '/nonexistent/python3' });
    assert.ok(isProbeFailure(none) && none.code === 'python-not-found');
  });

  test('cancel stops the launcher and every rank', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shardlens-cancel-'));
    const outPath = join(dir, 'report.json');
    const ac = new AbortController();
    const out = await runProbe({
      plan: tinyPlan(2), ranks: 2, out: outPath, signal: ac.signal, export: { device: 'cpu', steps: 200 },
      onProgress: (p) => { if (p.phase === 'launch') setTimeout(() => ac.abort(), 1500); },
    });
    assert.ok(isProbeFailure(out) && out.code === 'cancelled', JSON.stringify(out));
    // Wait for the processes to go (polling, at most 10 s) instead of sleeping a fixed time and hoping.
    const leftover = (): string => {
      try {
        return execFileSync('pgrep', ['-f', outPath], { encoding: 'utf8' }).trim();
      } catch { return ''; /* pgrep exits 1 when nothing matches. */ }
    };
    let left = leftover();
    for (const end = Date.now() + 10_000; left && Date.now() < end; left = leftover()) await new Promise((r) => setTimeout(r, 100));
    assert.equal(left, '', `processes left behind: ${left}`);
  });
});
