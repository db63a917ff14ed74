/**
 * Communication volumes and times against first principles and the papers:
 * nccl-tests PERFORMANCE.md bus-bandwidth factors; ZeRO (Rajbhandari et al. 2020 §7): DDP all-reduce 2Ψ, ZeRO-1/2
 * reduce-scatter + all-gather 2Ψ, ZeRO-3 3Ψ, FSDP without reshard after forward 2Ψ (Llama 3 §3.3.2);
 * Megatron TP 2 all-reduces forward + 2 backward per layer per micro-batch of b·s·h (Narayanan et al. 2021 §3.2);
 * PP b·s·h per micro-batch per boundary each way (§2.2); placement tiers from the axis order and GPUs per node.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { collectivesPerStep } from '../../../shared/time/collectives';
import { busFactor, collectiveSeconds } from '../../../shared/comm/links';
import type { Collective } from '../../../shared/comm/types';
import { countParams } from '../../../shared/model/params';
import { A100, gpt, plan } from '../sim/fixtures';

describe('nccl-tests bus bandwidth conventions', () => {
  const rows: [Parameters<typeof busFactor>[0], number, number][] = [
    ['all-reduce', 8, (2 * 7) / 8], ['all-reduce', 2, 1], ['all-gather', 8, 7 / 8], ['reduce-scatter', 4, 3 / 4],
    ['all-to-all', 8, 7 / 8], ['send-recv', 2, 1], ['all-reduce', 1, 0],
  ];
  for (const [kind, n, f] of rows) test(`${kind} n=${n}: factor ${f}`, () => assert.equal(busFactor(kind, n), f));
  test('large message: Simple protocol, base + steps·hop + S·factor/busbw (NCCL tuning.cc model)', () => {
    // 1 GB all-reduce over 8 ranks at 100 GB/s bus bandwidth across the network: 1.75 GB / 100 GB/s = 17.5 ms, plus
    // Simple's 8.4 µs base and 14 ring steps of a 5 µs hop.
    assert.ok(Math.abs(collectiveSeconds('all-reduce', 1e9, 8, 1e11, 5e-6, 'ring') - (0.0175 + 8.4e-6 + 14 * 5e-6)) < 1e-12);
  });
  test('small message: the LL protocol wins (3.6 µs base, 0.47 µs NVLink hops, half the bandwidth capped at 87.7 GB/s)', () => {
    // 64 KB all-reduce over 8 ranks on NVLink at 360 GB/s: LL = 3.6 + 14·0.47 µs + 114,688 B / min(180, 87.7) GB/s.
    const ll = 3.6e-6 + 14 * 0.47e-6 + (65536 * 1.75) / 87.7e9;
    assert.ok(Math.abs(collectiveSeconds('all-reduce', 65536, 8, 360e9, 4e-6, 'ring', 'nvlink') - ll) < 1e-12);
  });
});

/** Bytes on the wire per rank: Σ S·count·busFactor. */
function wire(cs: readonly Collective[], group = 'dp'): number {
  return cs.filter((c) => c.group === group).reduce((a, c) => a + c.bytesPerRank * busFactor(c.kind, c.groupSize), 0);
}

describe('ZeRO / FSDP volumes relative to DDP (one micro-batch, N = 8, 2-byte grads and params)', () => {
  const model = gpt(12, 1024, 16);
  const mk = (sharding: object) => collectivesPerStep(plan({
    model, training: { microBatch: 1, gradAccum: 1, seqLen: 1024, precision: 'bf16-mixed', gradDtype: 'bf16' },
    parallel: { dp: 8, sharding }, cluster: { gpu: A100, gpusPerNode: 8 },
  }));
  const ddp = mk({ style: 'ddp', stage: 0 });
  const psi = countParams(model).parameters;
  test('DDP all-reduce message is Ψ·2 bytes (whole model on one stage)', () => {
    const ar = ddp.find((c) => c.id === 'dp-grad-allreduce');
    assert.ok(ar);
    assert.equal(ar.bytesPerOccurrence, psi * 2);
    assert.equal(ar.kind, 'all-reduce');
    assert.equal(ar.tier, 'nvlink');
  });
  const ratios: [string, object, number][] = [
    ['ZeRO-1', { style: 'deepspeed', stage: 1 }, 1], ['ZeRO-2', { style: 'deepspeed', stage: 2 }, 1],
    ['ZeRO-3', { style: 'deepspeed', stage: 3 }, 1.5], ['FSDP FULL_SHARD', { style: 'fsdp', stage: 3, reshardAfterForward: true }, 1.5],
    ['FSDP2 reshard_after_forward=False', { style: 'fsdp2', stage: 3, reshardAfterForward: false }, 1],
  ];
  for (const [name, sharding, ratio] of ratios) {
    test(`${name}: ${ratio}× DDP volume`, () => {
      const r = wire(mk(sharding)) / wire(ddp);
      assert.ok(Math.abs(r - ratio) < 1e-12, `${r}`);
    });
  }
  test('HSDP: shard-group collectives plus a replicate all-reduce of Ψ/N_shard', () => {
    const cs = mk({ style: 'fsdp', stage: 3, shardGroupSize: 4 });
    const rep = cs.find((c) => c.id === 'hsdp-replicate-allreduce');
    assert.ok(rep);
    assert.equal(rep.groupSize, 2);
    assert.equal(cs.find((c) => c.id === 'zero3-param-all-gather')?.groupSize, 4);
  });
});

describe('TP, PP, EP collectives per step', () => {
  const b = 2, s = 2048, h = 4096, L = 8, m = 4;
  const mk = (extra: object, recompute: 'none' | 'full' = 'none') => collectivesPerStep(plan({
    model: gpt(L, h, 32), training: { microBatch: b, gradAccum: m, seqLen: s, recompute },
    parallel: { tp: 8, dp: 1, ...extra }, cluster: { gpu: A100, gpusPerNode: 8 },
  }));
  test('TP: 4 all-reduces per layer per micro-batch of b·s·h·2 bytes, on NVLink', () => {
    const tp = mk({}).find((c) => c.group === 'tp');
    assert.ok(tp);
    assert.equal(tp.countPerStep, 4 * L * m);
    assert.equal(tp.bytesPerOccurrence, b * s * h * 2);
    assert.equal(tp.tier, 'nvlink');
    assert.equal(tp.overlapped, false);
  });
  test('TP with full recomputation: 6 per layer per micro-batch', () => {
    assert.equal(mk({}, 'full').find((c) => c.group === 'tp')?.countPerStep, 6 * L * m);
  });
  test('TP of 16 over nodes of 8 crosses the network', () => {
    const cs = collectivesPerStep(plan({ model: gpt(L, h, 32), parallel: { tp: 16 }, cluster: { gpu: A100, gpusPerNode: 8 } }));
    assert.equal(cs.find((c) => c.group === 'tp')?.tier, 'network');
  });
  test('PP: first stage sends m activations, middle stages 2m (activations + gradients), b·s·h·2 bytes (÷t with SP)', () => {
    const cs = mk({ pp: 4 });
    const pp = cs.filter((c) => c.group === 'pp');
    assert.equal(pp.find((c) => c.stage === 0)?.countPerStep, m);
    assert.equal(pp.find((c) => c.stage === 1)?.countPerStep, 2 * m);
    assert.equal(pp[0].bytesPerOccurrence, b * s * h * 2);
    assert.equal(mk({ pp: 4, sp: true }).find((c) => c.group === 'pp')?.bytesPerOccurrence, (b * s * h * 2) / 8);
    assert.equal(pp[0].tier, 'network');
  });
  test('PP interleaved with v = 2: every stage sends 2·m·v', () => {
    const cs = mk({ pp: 2, vpp: 2, schedule: 'interleaved' });
    assert.equal(cs.find((c) => c.group === 'pp' && c.stage === 0)?.countPerStep, 2 * m * 2);
  });
  test('EP: 4 all-to-alls per MoE layer per micro-batch of b·s·k·h·2 bytes', () => {
    const moe = { experts: 8, topK: 2, expertFfnSize: 1024, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false };
    const cs = collectivesPerStep(plan({
      model: { ...gpt(L, 1024, 16), moe }, training: { microBatch: b, gradAccum: m, seqLen: s },
      parallel: { dp: 8, ep: 8 }, cluster: { gpu: A100, gpusPerNode: 8 },
    }));
    const a2a = cs.find((c) => c.group === 'ep');
    assert.ok(a2a);
    assert.equal(a2a.countPerStep, 4 * L * m);
    assert.equal(a2a.bytesPerOccurrence, b * s * 2 * 1024 * 2);
  });
  test('offload goes over PCIe', () => {
    const cs = collectivesPerStep(plan({
      model: gpt(L, 1024, 16), parallel: { dp: 8, sharding: { style: 'deepspeed', stage: 2, offloadOptimizer: 'cpu' } },
      cluster: { gpu: A100, gpusPerNode: 8 },
    }));
    assert.equal(cs.find((c) => c.id === 'offload-optimizer')?.tier, 'pcie');
  });
  test('every collective is finite, non-negative, with a formula and citation', () => {
    for (const c of [...mk({ pp: 4 }), ...mk({ pp: 2, vpp: 2, schedule: 'interleaved' })]) {
      for (const x of [c.seconds, c.exposedSeconds, c.bytesPerRank, c.busBandwidth]) assert.ok(Number.isFinite(x) && x >= 0, `${c.id}`);
      assert.ok(c.exposedSeconds <= c.seconds + 1e-15);
      assert.ok(c.formula.length > 0 && c.citation.length > 0);
    }
  });
});

test('LoRA: data parallelism reduces the adapter gradients only, r·(d_in + d_out) per adapted projection (Hu et al. 2021)', () => {
  const h = 1024, L = 8, r = 16;
  const cs = collectivesPerStep(plan({
    model: gpt(L, h, 16), training: { gradDtype: 'bf16' }, parallel: { dp: 8 }, lora: { rank: r, targets: ['q', 'v'] },
    cluster: { gpu: A100, gpusPerNode: 8 },
  }));
  // q and v of an MHA model are h×h: each adapter holds r·(h + h) parameters; 2 bytes per bf16 gradient.
  assert.equal(cs.find((c) => c.id === 'dp-grad-allreduce')?.bytesPerOccurrence, L * 2 * r * (h + h) * 2);
});
