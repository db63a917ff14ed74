/**
 * MoE dispatch by dispatcher (shared/comm/dispatch.ts), from first principles: how many other nodes a token's k experts
 * land on, what NCCL's all-to-all, Megatron's all-gather dispatcher and DeepEP/HybridEP move and at which rate, and the
 * Megatron flags that choose among them (megatron/training/arguments.py: --moe-token-dispatcher-type defaults to
 * allgather; flex runs --moe-flex-dispatcher-backend, deepep by default).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import collectives from '../../../data/collectives.json';
import { dispatchPass, remoteNodesPerToken, routedRemoteNodes } from '../../../shared/comm/dispatch';
import { axisLink } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import type { GpuSpec, ModelSpec } from '../../../shared/plan/types';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateStepTime } from '../../../shared/time/estimate';
import fitted from '../../../data/time/fitted.json';
import { gpt, plan } from '../sim/fixtures';

const H100 = findGpu('h100-sxm') as GpuSpec;

describe('other nodes a token reaches: (N − 1)·(1 − C(E − E/N, k)/C(E, k))', () => {
  for (const [E, k, N, want, why] of [
    [128, 1, 2, 0.5, 'one expert: on the other node half the time'],
    [8, 2, 2, 1 - (4 * 3) / (8 * 7), 'two of eight: misses the other node with 4·3/(8·7)'],
    [16, 16, 4, 3, 'every expert: every other node'],
    [64, 4, 1, 0, 'one node: nothing crosses'],
  ] as const) {
    test(`${E} experts, top ${k}, ${N} node(s): ${why}`, () => {
      assert.ok(Math.abs(remoteNodesPerToken(E, k, N) - want) < 1e-12, String(remoteNodesPerToken(E, k, N)));
    });
  }
});

describe('group-limited routing bounds the nodes a token reaches (DeepSeek-V3 §2.1.2)', () => {
  const v3 = { experts: 256, topK: 8, expertFfnSize: 2048, sharedExperts: 1, sharedExpertFfnSize: 2048, denseFirstLayers: 3, layerFrequency: 1, sharedExpertGate: false };
  test('256 experts, top 8, over 8 nodes: unlimited, 7·(1 − Π(224 − i)/(256 − i)) other nodes', () => {
    let miss = 1;
    for (let i = 0; i < 8; i++) miss *= (224 - i) / (256 - i);
    assert.ok(Math.abs(routedRemoteNodes(v3, 8) - 7 * (1 - miss)) < 1e-12);
  });
  test('8 groups (one per node), 4 chosen: 4 nodes per token, the own node among them half the time, 3.5 others', () => {
    assert.ok(Math.abs(routedRemoteNodes({ ...v3, routerGroups: 8, routerGroupTopK: 4 }, 8) - 3.5) < 1e-12);
  });
  test('groups spanning several nodes (8 groups over 16 nodes) are not a bound the model takes', () => {
    assert.equal(routedRemoteNodes({ ...v3, routerGroups: 8, routerGroupTopK: 4 }, 16), routedRemoteNodes(v3, 16));
  });
});

describe('one dispatch + combine on an EP group', () => {
  const moe = (experts: number): ModelSpec => ({
    ...gpt(8, 2048, 16),
    moe: { experts, topK: 8, expertFfnSize: 768, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false },
  });
  const T = 4096, k = 8, h = 2048, B = 2;
  const twoNodes = plan({ model: moe(128), parallel: { dp: 16, ep: 16 }, cluster: { gpu: H100, gpusPerNode: 8 } });
  const link = axisLink(twoNodes, 'ep');
  const adapter = 50e9 * collectives.busEfficiency.network; // 400 Gb/s per GPU at NCCL's 0.9.

  test('HybridEP over two nodes: each token crosses once to the other node (≈ T·h·B), not k/2 times', () => {
    const R = remoteNodesPerToken(128, k, 2);
    const t = dispatchPass(twoNodes, 'hybridep', T, twoNodes.model.moe!, h, B, link).seconds;
    const wire = 2 * (T * h * B * R) / adapter;
    assert.ok(t >= wire && t < wire * 1.02 + 1e-4, `${t} s vs ${wire} s`);
  });

  test('NCCL all-to-all over the same nodes sends half of T·k·h·B through the adapter: about k/2 = 4× HybridEP', () => {
    const a2a = dispatchPass(twoNodes, 'alltoall', T, twoNodes.model.moe!, h, B, link).seconds;
    const wire = 2 * (T * k * h * B / 2) / adapter;
    // Plus NCCL's n − 1 = 15 pairwise steps per all-to-all, each a network hop of at most 10 µs.
    assert.ok(a2a >= wire && a2a - wire <= 2 * 15 * 10e-6, `${a2a} s vs ${wire} s`);
    const hy = dispatchPass(twoNodes, 'hybridep', T, twoNodes.model.moe!, h, B, link).seconds;
    assert.ok(a2a / hy > 3.5 && a2a / hy < 4.5, `ratio ${a2a / hy}`);
  });

  test('Megatron\'s all-gather dispatcher moves ep/k times the all-to-all\'s bytes (EP 8 in a node, top 2: 4×)', () => {
    const inNode = plan({ model: { ...moe(8), moe: { ...moe(8).moe!, topK: 2 } }, parallel: { dp: 8, ep: 8 }, cluster: { gpu: H100, gpusPerNode: 8 } });
    const l = axisLink(inNode, 'ep');
    const ag = dispatchPass(inNode, 'allgather', T, inNode.model.moe!, h, B, l);
    const a2a = dispatchPass(inNode, 'alltoall', T, inNode.model.moe!, h, B, l);
    assert.equal(ag.bytes / a2a.bytes, 8 / 2);
    assert.ok(ag.seconds > 3 * a2a.seconds, `${ag.seconds} vs ${a2a.seconds}`);
  });

  test('a group of one moves nothing', () => {
    const one = plan({ model: moe(8), parallel: { dp: 8, ep: 1 }, cluster: { gpu: H100, gpusPerNode: 8 } });
    assert.deepEqual(dispatchPass(one, 'hybridep', T, one.model.moe!, h, B, axisLink(one, 'ep')), { bytes: 0, seconds: 0 });
  });
});

describe('the dispatcher a launch names', () => {
  before(async () => { await initFormats(); });
  const base = '--num-layers 4 --hidden-size 1024 --num-attention-heads 8 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 1 --global-batch-size 16 --bf16 --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8';
  const resolved = (flags: string) => resolvePlan(parseConfig('/x/train.sh', `torchrun --nproc_per_node 8 pretrain_gpt.py ${base} ${flags}\n`), []);
  for (const [flags, want] of [
    ['', 'allgather'],
    ['--moe-token-dispatcher-type alltoall', 'alltoall'],
    ['--moe-token-dispatcher-type alltoall_seq', 'alltoall'],
    ['--moe-token-dispatcher-type flex', 'deepep'],
    ['--moe-token-dispatcher-type flex --moe-enable-deepep', 'deepep'],
    ['--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep', 'hybridep'],
  ] as const) {
    test(`${flags || 'no dispatcher flag'} → ${want}`, () => {
      assert.equal(resolved(flags).plan?.parallel.epDispatcher, want);
    });
  }
  test('an unknown flex backend is a warning at its value, and the dispatcher stays DeepEP', () => {
    const text = `torchrun pretrain_gpt.py ${base} --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend nvshmem\n`;
    const c = parseConfig('/x/train.sh', text);
    const d = c.diagnostics.find((x) => /moe-flex-dispatcher-backend/.test(x.message));
    assert.ok(d && d.severity === 'warning', JSON.stringify(c.diagnostics));
    assert.equal(d.range?.start.character, text.indexOf('nvshmem'));
    assert.equal(resolvePlan(c, []).plan?.parallel.epDispatcher, 'deepep');
  });
  test('--moe-router-num-groups / --moe-router-group-topk are the model\'s routing groups', () => {
    const plan = resolved('--moe-router-num-groups 4 --moe-router-group-topk 2').plan!;
    assert.equal(plan.model.moe?.routerGroups, 4);
    assert.equal(plan.model.moe?.routerGroupTopK, 2);
    assert.equal(resolved('').plan!.model.moe?.routerGroups, undefined);
  });
  test('a torchtitan MoE run dispatches by NCCL all-to-all', () => {
    const c = parseConfig('/x/a.toml', '[model]\nname = "deepseek_v3"\nflavor = "16B"\n[parallelism]\nexpert_parallel_degree = 8\ndata_parallel_shard_degree = 8\n', 'torchtitan');
    assert.equal(resolvePlan(c, []).plan?.parallel.epDispatcher, 'alltoall');
  });
});

describe('torchtitan names its dispatch backend', () => {
  before(async () => { await initFormats(); });
  const toml = (backend: string) => `[model]\nname = "deepseek_v3"\nflavor = "16B"\n[parallelism]\nexpert_parallel_degree = 8\ndata_parallel_shard_degree = 8\nexpert_parallel_comm_backend = "${backend}"\n`;
  for (const [backend, want] of [['standard', 'alltoall'], ['deepep', 'deepep'], ['hybridep', 'hybridep']] as const) {
    test(`expert_parallel_comm_backend = "${backend}" → ${want}`, () => {
      assert.equal(resolvePlan(parseConfig('/x/a.toml', toml(backend), 'torchtitan'), []).plan?.parallel.epDispatcher, want);
    });
  }
  test('an unknown backend is a warning at its value', () => {
    const text = toml('nccl2');
    const c = parseConfig('/x/a.toml', text, 'torchtitan');
    const d = c.diagnostics.find((x) => /expert_parallel_comm_backend/.test(x.message));
    assert.ok(d && d.severity === 'warning', JSON.stringify(c.diagnostics));
    assert.equal(d.range?.start.line, text.split('\n').findIndex((l) => l.startsWith('expert_parallel_comm_backend')));
  });
});

describe('Megatron EP overlap (--overlap-moe-expert-parallel-comm)', () => {
  before(async () => { await initFormats(); });
  // Eight experts on eight GPUs of one node, hidden 4096: the all-to-alls over NVLink are far shorter than the layer's
  // compute, so merged 1F1B hides them but for overlapCost of their time (exposedBehind: max(0, c − g) + cost·min(c, g)).
  const flags = '--num-layers 4 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 --num-experts 8 --moe-router-topk 2 --expert-model-parallel-size 8 --moe-token-dispatcher-type alltoall --pipeline-model-parallel-size 2 --num-virtual-stages-per-pipeline-rank 2';
  const planOf = (extra: string) => resolvePlan(parseConfig('/x/train.sh', `torchrun --nproc_per_node 8 pretrain_gpt.py ${flags} ${extra}\n`), []).plan!;
  const ep = (extra: string) => estimateStepTime(planOf(extra)).collectives.find((c) => c.id === 'ep-all-to-all')!;
  test('the flag is read as the plan\'s EP overlap', () => {
    assert.equal(planOf('--overlap-moe-expert-parallel-comm').parallel.epCommOverlap, true);
    assert.equal(planOf('').parallel.epCommOverlap, false);
  });
  test('exposed: all of it without the flag, overlapCost of it with (the compute is longer)', () => {
    const plain = ep(''), merged = ep('--overlap-moe-expert-parallel-comm');
    assert.ok(plain.seconds > 0 && Math.abs(merged.seconds - plain.seconds) < 1e-12, 'the same all-to-alls either way');
    assert.ok(Math.abs(plain.exposedSeconds - plain.seconds) / plain.seconds < 1e-9, `${plain.exposedSeconds} of ${plain.seconds}`);
    assert.equal(merged.overlapped, true);
    const share = merged.exposedSeconds / merged.seconds;
    assert.ok(Math.abs(share - fitted.params.overlapCost) < 1e-6, `exposed share ${share}, overlapCost ${fitted.params.overlapCost}`);
  });
});
