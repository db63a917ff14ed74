/**
 * bitsandbytes' paged optimizers keep their states in CUDA unified memory, paged out to CPU memory when the GPU runs
 * short (bitsandbytes docs "Paged optimizers"; Dettmers et al. 2023, QLoRA §2), outside PyTorch's allocator: the plan
 * says so (training.pagedOptimizer) and the estimate counts the states with the host's memory, not the GPU's peak.
 * Read through a reader (torchtune's `optimizer._component_`) and through a key table (axolotl `optimizer:`).
 * Expected bytes from first principles: 8-bit Adam keeps 2 bytes per trained parameter (Dettmers et al. 2022).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateMemory } from '../../../shared/memory/estimate';
import { countParams } from '../../../shared/model/params';

const TT = 'model:\n  _component_: torchtune.models.llama3_2.llama3_2_3b\ntokenizer:\n  max_seq_len: 2048\nbatch_size: 2\ndtype: bf16\noptimizer:\n  _component_: bitsandbytes.optim.PagedAdamW8bit\n  lr: 2e-5\n';
const URI = 'file:///ws/3B_full_single_device.yaml';

describe('paged optimizers', () => {
  before(async () => { await initFormats(); });

  test('torchtune bitsandbytes.optim.PagedAdamW8bit: 8-bit Adam whose states are paged, stated at the class path', () => {
    const f = parseConfig(URI, TT);
    assert.equal(f.facts['training.optimizer']?.value, 'adam-8bit');
    assert.equal(f.facts['training.pagedOptimizer']?.value, true);
    assert.equal(f.facts['training.pagedOptimizer']?.source.range?.start.line, 7);
  });

  test('the states leave the GPU\'s peak and count with the host: 2 bytes per parameter', () => {
    const paged = resolvePlan(parseConfig(URI, TT), [], { settings: { worldSize: 1, gpu: 'a100-80gb' } }).plan;
    const plain = resolvePlan(parseConfig(URI, TT.replace('PagedAdamW8bit', 'AdamW8bit')), [], { settings: { worldSize: 1, gpu: 'a100-80gb' } }).plan;
    assert.ok(paged && plain);
    assert.equal(plain.training.pagedOptimizer, undefined);
    const psi = countParams(paged.model).parameters;
    const p = estimateMemory(paged), q = estimateMemory(plain);
    assert.equal(p.stages[0].terms.optimizerStates?.bytes ?? 0, 0);
    assert.ok(Math.abs(p.hostBytesPerNode - 2 * psi) <= 1e-9 * psi, `${p.hostBytesPerNode} vs ${2 * psi}`);
    assert.equal(q.hostBytesPerNode, 0);
    assert.ok(q.stages[0].peakAllocatedBytes - p.stages[0].peakAllocatedBytes >= 2 * psi * (1 - 1e-9), 'the GPU peak drops by the states at least');
  });

  test('the Hugging Face launch flag --optim and TRL YAML optim: name a paged optimizer too', () => {
    const sh = '#!/bin/bash\ntorchrun --nproc_per_node 8 run_clm.py --model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 2 --optim paged_adamw_8bit --bf16\n';
    assert.equal(parseConfig('file:///ws/train.sh', sh).facts['training.pagedOptimizer']?.value, true);
    const yaml = 'model_name_or_path: Qwen/Qwen2.5-7B\nper_device_train_batch_size: 2\noptim: paged_adamw_8bit\nbf16: true\nmax_length: 2048\n';
    assert.equal(parseConfig('file:///ws/sft.yaml', yaml).facts['training.pagedOptimizer']?.value, true);
    assert.equal(parseConfig('file:///ws/sft.yaml', yaml.replace('paged_adamw_8bit', 'adamw_torch_fused')).facts['training.pagedOptimizer'], undefined);
  });

  test('axolotl optimizer: paged_adamw_8bit through the key table; adamw_torch is not paged', () => {
    const text = 'base_model: NousResearch/Llama-2-7b-hf\nadapter: qlora\nload_in_4bit: true\nsequence_len: 4096\nmicro_batch_size: 2\ngradient_accumulation_steps: 4\noptimizer: paged_adamw_8bit\n';
    const f = parseConfig('file:///ws/qlora.yml', text);
    assert.equal(f.facts['training.pagedOptimizer']?.value, true);
    assert.equal(f.facts['training.pagedOptimizer']?.source.range?.start.line, 6);
    assert.equal(parseConfig('file:///ws/qlora.yml', text.replace('paged_adamw_8bit', 'adamw_torch')).facts['training.pagedOptimizer'], undefined);
  });
});
