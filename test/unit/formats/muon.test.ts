/**
 * Muon as the frameworks spell it: Megatron-LM `--optimizer muon` (megatron/training/arguments.py choices adam, sgd,
 * muon, …), DeepSpeed `"optimizer": {"type": "Muon"}` (deepspeed/runtime/engine.py MUON_OPTIMIZER), and trainer names
 * containing "muon" (Axolotl `optimizer: muon`). It used to be read as nothing, so the plan said AdamW; now the plan
 * holds Muon's states and says its step is timed as the momentum update only.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { memoryHost } from './helpers';
import { estimateStepTime } from '../../../shared/time/estimate';

describe('Muon', () => {
  before(async () => { await initFormats(); });

  test('Megatron --optimizer muon, DeepSpeed "type": "Muon" and Axolotl optimizer: muon are read as Muon', () => {
    const mlm = parseConfig('/ws/train.sh', 'torchrun pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 8 --optimizer muon\n');
    assert.equal(mlm.facts['training.optimizer']?.value, 'muon');
    const ds = parseConfig('/ws/ds_config.json', '{"train_micro_batch_size_per_gpu": 1, "optimizer": {"type": "Muon", "params": {"lr": 0.02}}, "zero_optimization": {"stage": 2}}');
    assert.equal(ds.facts['training.optimizer']?.value, 'muon');
    const ax = parseConfig('/ws/axolotl.yaml', 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nsequence_len: 2048\noptimizer: muon\n');
    assert.equal(ax.facts['training.optimizer']?.value, 'muon');
  });

  test('the plan holds Muon and says its Newton-Schulz step is not timed', () => {
    const g = loadConfigGraph('/ws/train.sh', memoryHost({ '/ws/train.sh': 'torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 8 --micro-batch-size 1 --optimizer muon\n' }));
    assert.equal(g.resolved.plan?.training.optimizer, 'muon');
    const info = estimateStepTime(g.resolved.plan!).problems.find((p) => p.code === 'muon-step-timing');
    assert.equal(info?.severity, 'info');
    assert.match(info!.message, /Newton-Schulz/);
  });

  test('a Megatron optimizer choice ShardLens does not model is warned at its value, never taken silently as the default', () => {
    const text = 'torchrun pretrain_gpt.py --num-layers 8 --hidden-size 1024 --num-attention-heads 8 --optimizer soap\n';
    const r = parseConfig('/ws/train.sh', text);
    const d = r.diagnostics.find((x) => x.code === 'unmodelled-value');
    assert.equal(d?.severity, 'warning');
    assert.match(d!.message, /--optimizer soap/);
    assert.equal(d?.range.start.character, text.indexOf('soap'));
    // The same for a trainer's optimizer name (Axolotl's optimizer: lomo, a fused-update optimizer with no states).
    const yaml = 'base_model: meta-llama/Llama-3.1-8B\nmicro_batch_size: 1\nsequence_len: 2048\noptimizer: lomo\n';
    const ax = parseConfig('/ws/axolotl.yaml', yaml).diagnostics.find((x) => x.code === 'unmodelled-value');
    assert.equal(ax?.severity, 'warning');
    assert.equal(ax?.range.start.line, 3);
    // hybridep is read with the flex dispatcher: no such warning for it.
    const flex = parseConfig('/ws/train.sh', 'torchrun pretrain_gpt.py --num-layers 8 --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep\n');
    assert.ok(!flex.diagnostics.some((x) => x.code === 'unmodelled-value'));
  });
});
