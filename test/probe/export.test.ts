// Pure parts of the torchrun probe integration: plan export and scaling, expected volumes, partition, cluster commands.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { makePlan } from '../../shared/plan/defaults';
import {
  clusterCommands, expectedCollectives, expectedModelStates, exportProbePlan, isExportProblem, localArgv, modeForPlan,
  probeParameters, shellQuote, zeroRedundancyPartition,
} from '../../validation/torch/index';
import { LLAMA3_8B, TINY, TINY_PSI, tinyPlan } from './fixtures/plans';

describe('exportProbePlan', () => {
  test('a small model is kept at full size with the plan’s batch and a dp-only layout', () => {
    const r = exportProbePlan(tinyPlan(2), { ranks: 2 });
    assert.ok(!isExportProblem(r));
    assert.equal(r.probePlan.scaling.scaled, false);
    assert.equal(probeParameters(r.probePlan.model), TINY_PSI);
    assert.deepEqual(r.probePlan.training, { microBatch: 2, seqLen: 32, precision: 'fp32', optimizer: 'adam' });
    assert.equal(r.probePlan.parallel.dp, 2);
    assert.equal(r.comparablePlan.parallel.dp, 2);
    assert.equal(r.comparablePlan.parallel.sharding.shardGroupSize, 2);
    // PyTorch DDP's default bucket_cap_mb (torch/nn/parallel/distributed.py) survives the elements ↔ bytes round trip.
    assert.equal(r.probePlan.parallel.bucketCapMb, 25);
  });

  test('Llama-3-8B is scaled under the budget, keeping heads, KV heads and the family, and says so', () => {
    const plan = makePlan({ model: LLAMA3_8B, training: { microBatch: 8, seqLen: 8192 }, parallel: { dp: 8 } });
    const r = exportProbePlan(plan, { ranks: 2, maxParameters: 20e6 });
    assert.ok(!isExportProblem(r));
    const m = r.probePlan.model;
    assert.ok(probeParameters(m) <= 20e6, `Ψ ${probeParameters(m)}`);
    // The GQA group (4 query heads per KV head) survives; the head dimension stays at least 8.
    assert.equal(m.heads / m.kvHeads, 4);
    assert.ok(m.headDim >= 8);
    assert.equal(m.gatedMlp, true);
    assert.equal(m.norm, 'rmsnorm');
    assert.equal(r.probePlan.scaling.scaled, true);
    assert.equal(r.probePlan.scaling.original.parameters, 8_030_261_248);
    assert.match(r.probePlan.scaling.note, /scaled from 8,030,261,248/);
    assert.equal(r.probePlan.training.seqLen, 256);
    assert.ok(r.notes.some((n) => /Batch scaled/.test(n)));
    assert.equal(r.comparablePlan.model.layers, m.layers);
  });

  test('tensor or pipeline parallel plans are refused unless the data-parallel-only layout is asked for', () => {
    const plan = makePlan({ model: TINY, parallel: { dp: 2, tp: 2 } });
    const strict = exportProbePlan(plan, { ranks: 2 });
    assert.ok(isExportProblem(strict));
    assert.equal(strict.code, 'layout-mismatch');
    assert.match(strict.message, /tp=2/);
    const loose = exportProbePlan(plan, { ranks: 2, layout: 'data-parallel-only' });
    assert.ok(!isExportProblem(loose));
    assert.equal(loose.probePlan.parallel.tp, 1);
    assert.ok(loose.notes.some((n) => /tp=2 not reproduced/.test(n)));
  });

  test('a DeepSpeed plan without its JSON gets its ZeRO stage and precision when DeepSpeed runs', () => {
    const plan = makePlan({ model: TINY, training: { precision: 'bf16-mixed' }, parallel: { dp: 2, sharding: { style: 'deepspeed', stage: 2 } } });
    const r = exportProbePlan(plan, { ranks: 2, deepspeedAvailable: true });
    assert.ok(!isExportProblem(r));
    assert.equal(r.probePlan.parallel.mode, 'deepspeed');
    assert.deepEqual(r.probePlan.deepspeedConfig, { zero_optimization: { stage: 2 }, bf16: { enabled: true } });
  });

  test('bad ranks and MoE models become problems, not exceptions', () => {
    const r = exportProbePlan(tinyPlan(2), { ranks: 0 });
    assert.ok(isExportProblem(r) && r.code === 'layout-mismatch');
    const moe = makePlan({ model: { ...TINY, moe: { experts: 4, topK: 2, expertFfnSize: 64, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false } } });
    const m = exportProbePlan(moe, { ranks: 2 });
    assert.ok(isExportProblem(m) && m.code === 'unsupported-plan');
  });

  // The torch mode of each sharding: ZeRO stage 1 → ZeroRedundancyOptimizer; FSDP strategies map by name.
  const modes = [
    [{ style: 'ddp', stage: 0 }, false, 'ddp'],
    [{ style: 'ddp', stage: 1 }, false, 'zero1'],
    [{ style: 'deepspeed', stage: 2 }, false, 'fsdp-shard-grad-op'],
    [{ style: 'deepspeed', stage: 3 }, false, 'fsdp-full-shard'],
    [{ style: 'deepspeed', stage: 3 }, true, 'deepspeed'],
    [{ style: 'fsdp', stage: 3, fsdpStrategy: 'FULL_SHARD' }, false, 'fsdp-full-shard'],
    [{ style: 'fsdp', stage: 0, fsdpStrategy: 'NO_SHARD' }, false, 'fsdp-no-shard'],
    [{ style: 'fsdp', stage: 3, fsdpStrategy: 'HYBRID_SHARD' }, false, 'fsdp-hybrid-shard'],
    [{ style: 'megatron-distopt', stage: 1 }, false, 'zero1'],
  ] as const;
  for (const [sharding, ds, mode] of modes) {
    test(`modeForPlan ${JSON.stringify(sharding)}${ds ? ' with DeepSpeed' : ''} → ${mode}`, () => {
      assert.equal(modeForPlan(makePlan({ model: TINY, parallel: { dp: 2, sharding } }), ds), mode);
    });
  }
});

describe('expected volumes and partitions', () => {
  test('ZeroRedundancyOptimizer’s sorted greedy partition, worked by hand', () => {
    // Sorted 10, 7, 5, 3, 1: 10 → r0; 7 → r1; 5 → r1 (7 < 10) = 12; 3 → r0 (10 < 12) = 13; 1 → r1 = 13.
    assert.deepEqual(zeroRedundancyPartition([3, 10, 1, 7, 5], 2), [13, 13]);
    // Ties go to the lowest rank (torch's _get_min_index returns the first minimum).
    assert.deepEqual(zeroRedundancyPartition([4, 4, 4], 4), [4, 4, 4, 0]);
  });

  test('per-rank model states follow the ZeRO paper with fp32 Adam (4 + 4 + 8 bytes per parameter)', () => {
    assert.deepEqual(expectedModelStates(1000, 0, 4, 'fp32', 'adam'), { parametersBytes: 4000, gradientsBytes: 4000, optimizerStatesBytes: 8000 });
    assert.deepEqual(expectedModelStates(1000, 1, 4, 'fp32', 'adam'), { parametersBytes: 4000, gradientsBytes: 4000, optimizerStatesBytes: 2000 });
    assert.deepEqual(expectedModelStates(1000, 3, 4, 'fp32', 'sgd'), { parametersBytes: 1000, gradientsBytes: 1000, optimizerStatesBytes: 0 });
  });

  test('collectives torch issues per step: DDP 4Ψ all-reduce; ZeroRedundancyOptimizer adds a 4Ψ broadcast; FULL_SHARD gathers blocks twice', () => {
    assert.deepEqual(expectedCollectives('ddp', 1000, 'fp32'), { ddp_bucket_allreduce: 4000 });
    assert.deepEqual(expectedCollectives('zero1', 1000, 'fp32'), { ddp_bucket_allreduce: 4000, broadcast: 4000 });
    assert.deepEqual(expectedCollectives('fsdp-full-shard', 1000, 'fp32'), { all_gather: 8000, reduce_scatter: 4000 });
    // With a 300-parameter root unit that stays gathered: forward 1000 + backward 700 parameters, 4 B each.
    assert.deepEqual(expectedCollectives('fsdp-full-shard', 1000, 'fp32', 300), { all_gather: 6800, reduce_scatter: 4000 });
    assert.deepEqual(expectedCollectives('fsdp-shard-grad-op', 1000, 'fp32'), { all_gather: 4000, reduce_scatter: 4000 });
  });
});

describe('launch and cluster commands', () => {
  test('the local launch is an argument array: a path with spaces and quotes stays one argument', () => {
    const argv = localArgv('/opt/my probe', 4, "/tmp/it's here/plan.json", 'zero1', '/tmp/out dir/r.json', 120);
    assert.equal(argv[0], '/opt/my probe/torchrun_compat.py');
    assert.equal(argv[argv.indexOf('--plan') + 1], "/tmp/it's here/plan.json");
    assert.equal(argv[argv.indexOf('--nproc_per_node') + 1], '4');
    assert.equal(argv[argv.indexOf('--mode') + 1], 'zero1');
    // Issue 16: a local rendezvous listens on the loopback interface only (not torchrun's --standalone "localhost:0").
    assert.equal(argv[argv.indexOf('--rdzv_endpoint') + 1], '127.0.0.1:0');
    assert.equal(argv[argv.indexOf('--local_addr') + 1], '127.0.0.1');
    assert.equal(argv.includes('--standalone'), false);
  });

  test('shellQuote makes hostile text inert', () => {
    assert.equal(shellQuote('plain/path.json'), 'plain/path.json');
    assert.equal(shellQuote("a b'c;$(rm -rf ~)"), `'a b'\\''c;$(rm -rf ~)'`);
  });

  test('2 nodes × 8 GPUs: one torchrun line per node with the rendezvous, and a Slurm script with srun', () => {
    const r = clusterCommands(tinyPlan(16), 2, 8, { headNode: 'node-a', sharedDir: '/shared/run 1' });
    assert.ok(!('problem' in r));
    assert.equal(r.nodes.length, 2);
    const argv = r.nodes[1].argv;
    assert.equal(argv[argv.indexOf('--nnodes') + 1], '2');
    assert.equal(argv[argv.indexOf('--node_rank') + 1], '1');
    assert.equal(argv[argv.indexOf('--rdzv_endpoint') + 1], 'node-a:29500');
    assert.equal(r.probePlan.parallel.dp, 16);
    assert.match(r.nodes[0].line, /'\/shared\/run 1\/probe\/torchrun_compat.py'/);
    assert.match(r.slurmScript, /#SBATCH --nodes=2/);
    assert.match(r.slurmScript, /srun bash -c/);
    assert.match(r.slurmScript, /\$SLURM_NODEID/);
    assert.equal(JSON.parse(r.planJson).kind, 'shardlens-probe-plan');
  });

  test('bad node counts are a problem', () => {
    const r = clusterCommands(tinyPlan(2), 0, 8);
    assert.ok('problem' in r);
  });
});

describe('probeCommand input checks', () => {
  const aliases = [['FULL_SHARD', 'fsdp-full-shard'], ['zero-redundancy', 'zero1'], ['fsdp-full', 'fsdp-full-shard'], ['hsdp', 'fsdp-hybrid-shard'], ['DDP', 'ddp'], ['zero9', undefined]] as const;
  for (const [text, mode] of aliases) {
    test(`--mode ${text} → ${mode ?? 'rejected'}`, async () => {
      const { parseProbeMode } = await import('../../validation/torch/index');
      assert.equal(parseProbeMode(text), mode);
    });
  }
  const io = () => { const err: string[] = []; return { err, io: { stdout: () => undefined, stderr: (s: string) => { err.push(s); } } }; };
  test('bad --ranks and --mode exit 2 with a message, before anything is launched', async () => {
    const { probeCommand } = await import('../../validation/torch/index');
    const a = io();
    assert.equal(await probeCommand(tinyPlan(2), { ranks: 'two' }, a.io), 2);
    assert.match(a.err.join(''), /--ranks must be a whole number from 1/);
    const b = io();
    assert.equal(await probeCommand(tinyPlan(2), { ranks: 2, mode: 'zero9' }, b.io), 2);
    assert.match(b.err.join(''), /--mode must be one of ddp, zero1/);
    // Issue 16: a step count that is not a number is bad input (exit 2), not a Python traceback from the ranks.
    const c = io();
    assert.equal(await probeCommand(tinyPlan(2), { ranks: 2, steps: 'abc' }, c.io), 2);
    assert.match(c.err.join(''), /--steps must be a whole number from 2 to 1000 \(got abc\)/);
  });
});
