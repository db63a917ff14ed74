// PEFT's modules_to_save in memory (docs/engine-memory.md#lora-adapters): a small transformers Llama in bf16 with LoRA
// through peft.get_peft_model, one AdamW step on a CPU (probe/oracle/peft_states.py), beside ShardLens's model states
// of the same model and plan (one GPU, torch AMP, AdamW). Expected values: the bytes of the tensors PEFT and torch hold
// after the step (parameters, gradients and optimizer states, distinct storages).
// Skipped with a message when no Python with torch ≥ 2.4 and peft exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, peftMissing, peftPython, runOracle } from './fixtures/python';
import { findGpu } from '../../shared/hardware/gpus';
import { stageNumbers } from '../../shared/memory/fast';
import { modelFromHfConfig } from '../../shared/model/hfConfig';
import { makePlan } from '../../shared/plan/defaults';
import type { GpuSpec, LoraSpec } from '../../shared/plan/types';

const python = peftPython;
const missing = peftMissing;
if (!python && !ci) console.log(`# PEFT states skipped: ${missing}`);

interface States { parameters: number; gradients: number; states: number; trainable: number }

describe('PEFT LoRA model states after one AdamW step (torch ≥ 2.4, peft)', { skip: ci ? false : !python }, () => {
  test('adapters alone, with embed_tokens and lm_head in modules_to_save, and under DoRA, match the estimate byte for byte', () => {
    if (!python) assert.fail(`CI=true but ${missing}`);
    const m = runOracle<{ adapters: States; saved: States; dora: States; config: Record<string, unknown> }>(python!, 'peft_states', ['1000', '64', '2', '4']);
    const model = modelFromHfConfig(m.config, 'tiny-llama').model;
    assert.ok(model, 'the probe\'s config reads');
    const adapters: LoraSpec = { rank: 4, targets: ['q', 'k', 'v', 'o'], baseDtype: 'bf16' };
    const estimate = (lora: LoraSpec) => {
      const plan = makePlan({ model, lora, training: { microBatch: 1, globalBatch: 1, seqLen: 16, precision: 'bf16-mixed', optimizer: 'adamw' } }, findGpu('h100-sxm') as GpuSpec);
      const s = stageNumbers(plan, 0);
      assert.ok(s);
      return { parameters: s.parameters, gradients: s.gradients, states: s.optimizerStates, trainable: s.trainablePerRank };
    };
    // PEFT casts the adapters to fp32 (get_peft_model autocast_adapter_dtype) over the bf16 base; its modules_to_save
    // copies stay in the base's bf16, and so do their gradients and AdamW's exp_avg and exp_avg_sq.
    assert.deepEqual(estimate(adapters), m.adapters);
    assert.deepEqual(estimate({ ...adapters, fullModules: ['embed', 'head'], fullModulesCopied: true }), m.saved);
    // DoRA adds a trained magnitude per output of each adapted projection (lora_magnitude_vector), in the adapters' fp32.
    assert.deepEqual(estimate({ ...adapters, dora: true }), m.dora);
  });
});
