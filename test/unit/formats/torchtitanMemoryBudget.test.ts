/**
 * torchtitan's memory_budget activation checkpointing (torchtitan/distributed/activation_checkpoint.py MemoryBudgetAC,
 * at b5bcd76c6): torch.compile's partitioner keeps the activation memory at full recomputation's plus
 * memory_budget × (compile's default − full's) (`torch._functorch.config.activation_memory_budget`: 0.0 full
 * recomputation, 1.0 compile's default); the Trainer refuses it unless the model is compiled. ShardLens checkpoints a
 * fraction 1 − b of the blocks whole, so memory follows the budget linearly from full to none. It used to read the
 * mode as plain selective recomputation, silently.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig, parsePythonConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { estimateMemory } from '../../../shared/memory/estimate';
import { layerPolicyCheckpointedBlocks, recomputeEveryOf } from '../../../shared/memory/engine';
import { memoryHost } from './helpers';

const toml = (ac: string, compile = '[compile]\nenable = true\n') =>
  `[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 8\n${compile}[activation_checkpoint]\n${ac}`;
const facts = (text: string) => {
  const f = parseConfig('/ws/train_configs/llama3_8b.toml', text);
  const v = (k: string) => (f.facts as Record<string, { value: unknown } | undefined>)[k]?.value;
  return { f, v };
};

before(() => initFormats());

describe('torchtitan memory_budget', () => {
  test('a budget b checkpoints a fraction 1 − b of the blocks: every 1/(1 − b)-th block', () => {
    for (const [b, every] of [[0.5, 2], [0.75, 4], [0.9, 10], [0.3, 1 / 0.7]] as const) {
      const { f, v } = facts(toml(`mode = "memory_budget"\nmemory_budget = ${b}\n`));
      assert.equal(v('training.recompute'), 'selective');
      assert.equal(v('training.recomputePolicy'), 'torchtitan-layer');
      assert.ok(Math.abs(Number(v('training.recomputeEvery')) - every) < 1e-12, `${b}: ${String(v('training.recomputeEvery'))}`);
      assert.ok(f.diagnostics.some((d) => d.code === 'torchtitan-memory-budget' && /upper bound/.test(d.message)));
      assert.deepEqual(f.diagnostics.filter((d) => d.severity === 'error'), []);
    }
    // 32 blocks at b = 0.3: ⌊32 · 0.7⌋ = 22 checkpointed.
    assert.equal(layerPolicyCheckpointedBlocks(32, recomputeEveryOf({ training: { recomputeEvery: 1 / 0.7 } } as never)), 22);
  });

  test('the default budget is 0.5; 0 is full recomputation and 1 none', () => {
    assert.equal(facts(toml('mode = "memory_budget"\n')).v('training.recomputeEvery'), 2);
    assert.equal(facts(toml('mode = "memory_budget"\nmemory_budget = 0.0\n')).v('training.recompute'), 'full');
    assert.equal(facts(toml('mode = "memory_budget"\nmemory_budget = 1.0\n')).v('training.recompute'), 'none');
  });

  test('what torchtitan refuses is an error: no compiled model, a budget outside [0, 1], an unknown mode', () => {
    const noCompile = facts(toml('mode = "memory_budget"\n', '')).f;
    assert.ok(noCompile.diagnostics.some((d) => d.severity === 'error' && /needs the model compiled/.test(d.message)));
    const lossOnly = facts(toml('mode = "memory_budget"\n', '[compile]\nenable = true\ncomponents = ["loss"]\n')).f;
    assert.ok(lossOnly.diagnostics.some((d) => d.severity === 'error' && /needs the model compiled/.test(d.message)));
    const over = facts(toml('mode = "memory_budget"\nmemory_budget = 1.5\n')).f;
    assert.ok(over.diagnostics.some((d) => d.severity === 'error' && /from 0 \(full recomputation\) to 1/.test(d.message)));
    const typo = facts(toml('mode = "ful"\n')).f;
    assert.ok(typo.diagnostics.some((d) => d.severity === 'error' && /"selective", "full", "none" or "memory_budget"/.test(d.message)));
  });

  test('activation memory falls from no recomputation to full as the budget falls', () => {
    const peak = (ac: string) => {
      const g = loadConfigGraph('/ws/train_configs/llama3_8b.toml', memoryHost({ '/ws/train_configs/llama3_8b.toml': toml(ac) }), { settings: { cluster: { gpu: 'H100-SXM', gpusPerNode: 8, nodes: 1 } } as never });
      assert.ok(g.resolved.plan, JSON.stringify(g.resolved.problems));
      return Math.max(...estimateMemory(g.resolved.plan).stages.map((s) => s.peakAllocatedBytes));
    };
    const seq = [peak('mode = "full"\n'), peak('mode = "memory_budget"\nmemory_budget = 0.5\n'), peak('mode = "memory_budget"\nmemory_budget = 0.9\n'), peak('mode = "none"\n')];
    for (let i = 1; i < seq.length; i++) assert.ok(seq[i]! > seq[i - 1]!, seq.map((x) => (x / 2 ** 30).toFixed(2)).join(' < '));
  });

  test('selective_ac_option "N" reaches the plan (it used to stop at the facts: every option planned as "2")', () => {
    const plan = (ac: string) => {
      const g = loadConfigGraph('/ws/train_configs/llama3_8b.toml', memoryHost({ '/ws/train_configs/llama3_8b.toml': toml(ac) }), { settings: { cluster: { gpu: 'H100-SXM', gpusPerNode: 8, nodes: 1 } } as never });
      assert.ok(g.resolved.plan);
      return g.resolved.plan;
    };
    const three = plan('mode = "selective"\nselective_ac_option = "3"\n');
    const two = plan('mode = "selective"\nselective_ac_option = "2"\n');
    assert.equal(three.training.recomputeEvery, 3);
    // 32 blocks: ⌊32/3⌋ = 10 checkpointed instead of 16, so six more blocks keep all their activations.
    const peak = (p: typeof three) => Math.max(...estimateMemory(p).stages.map((s) => s.peakAllocatedBytes));
    assert.ok(peak(three) > peak(two));
  });

  test('a Python configuration\'s MemoryBudgetAC.Config(memory_budget=…) is read the same way', () => {
    const py = 'from torchtitan.models.llama3 import model_registry\nfrom torchtitan.trainer import Trainer\n\n'
      + 'def f() -> Trainer.Config:\n    return Trainer.Config(\n        model_spec=model_registry("8B"),\n'
      + '        activation_checkpoint=MemoryBudgetAC.Config(memory_budget=0.25),\n        compile=CompileConfig(enable=True),\n    )\n';
    const f = parsePythonConfig('/ws/recipes.py', py, 'f');
    const v = (k: string) => (f.facts as Record<string, { value: unknown } | undefined>)[k]?.value;
    assert.equal(v('training.recomputePolicy'), 'torchtitan-layer');
    assert.ok(Math.abs(Number(v('training.recomputeEvery')) - 1 / 0.75) < 1e-12);
    assert.deepEqual(f.diagnostics.filter((d) => d.severity === 'error'), []);
  });
});
