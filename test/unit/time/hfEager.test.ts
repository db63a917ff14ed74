/**
 * Which elementwise pass counts a plan gets (shared/time/kernels/elementwise.ts fusionOf): transformers' eager code for
 * the formats whose trainers load transformers' models ('hf', or 'hf-amp' with fp32 weights under autocast), an
 * engine's own eager code otherwise, Inductor under torch.compile, TE/Apex kernels under Megatron. The byte counts
 * themselves are checked against torch's dispatcher in test/probe/layerTraffic.test.ts.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { autocastWeightCastBytes, fusionOf } from '../../../shared/time/kernels/elementwise';
import { estimateStepTime } from '../../../shared/time/estimate';
import fitted from '../../../data/time/fitted.json';

before(() => initFormats());

const planOf = (path: string, text: string) => {
  const p = resolvePlan(parseConfig(path, text), []).plan;
  assert.ok(p, `${path} resolves`);
  return p;
};
const AXOLOTL = (extra: string) => `base_model: meta-llama/Llama-3.1-8B\nsequence_len: 4096\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\nflash_attention: true\n${extra}`;
const TITAN = '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 8\n';
const elementwise = (p: ReturnType<typeof planOf>) => estimateStepTime(p).operatorTerms.find((t) => t.name === 'elementwise')!;

describe('elementwise passes by whose model code runs', () => {
  test('Axolotl with bf16 mixed precision on DDP: transformers under autocast with fp32 weights', () => {
    const p = planOf('/ws/axolotl.yaml', AXOLOTL('bf16: true\n'));
    assert.equal(p.training.modelImpl, 'hf');
    assert.equal(fusionOf(p), 'hf-amp');
    // The hover and Simulate Step say which pass counts the memory-bound term used.
    assert.match(elementwise(p).provenance, /passes: transformers' eager model code with fp32 weights under autocast/);
  });

  test('FSDP with bf16 parameters, or a model loaded in bf16: transformers in 16 bits', () => {
    const fsdp = planOf('/ws/axolotl.yaml', AXOLOTL('bf16: true\nfsdp_version: 2\nfsdp_config:\n  fsdp_offload_params: false\n'));
    assert.equal(fusionOf(fsdp), 'hf');
    // LLaMA-Factory's pure_bf16 loads the model in bf16: no fp32 weights to cast.
    const pure = planOf('/ws/llamafactory.yaml', 'model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: full\ncutoff_len: 4096\npure_bf16: true\n');
    assert.equal(pure.training.precision, 'bf16');
    assert.equal(fusionOf(pure), 'hf');
  });

  test("LoRA on a 16-bit base keeps a 16-bit stream; QLoRA's unquantized layers are cast to fp32 (PEFT prepare_model_for_kbit_training)", () => {
    const lora = planOf('/ws/axolotl.yaml', AXOLOTL('bf16: true\nadapter: lora\nlora_r: 16\nlora_target_linear: true\n'));
    assert.equal(lora.lora?.baseDtype, 'bf16');
    assert.equal(fusionOf(lora), 'hf');
    const qlora = planOf('/ws/axolotl.yaml', AXOLOTL('bf16: true\nadapter: qlora\nload_in_4bit: true\nlora_r: 16\nlora_target_linear: true\n'));
    assert.equal(qlora.lora?.baseDtype, 'nf4');
    assert.equal(fusionOf(qlora), 'hf-amp');
  });

  test('torch_compile is read: true, false, and "auto" (assumed on, with an info at the key)', () => {
    const lf = (v: string) => planOf('/ws/llamafactory.yaml', `model_name_or_path: meta-llama/Llama-3.1-8B\nstage: sft\nfinetuning_type: full\nbf16: true\ntorch_compile: ${v}\n`);
    assert.equal(fusionOf(lf('true')), 'compiled');
    assert.equal(fusionOf(lf('false')), 'hf-amp');
    const auto = parseConfig('/ws/axolotl.yaml', AXOLOTL('bf16: true\ntorch_compile: auto\n'));
    assert.ok(auto.diagnostics.some((d) => d.code === 'compile-auto' && d.severity === 'info'), JSON.stringify(auto.diagnostics));
    assert.equal(fusionOf(resolvePlan(auto, []).plan!), 'compiled');
    const bad = parseConfig('/ws/axolotl.yaml', AXOLOTL('bf16: true\ntorch_compile: sometimes\n'));
    assert.ok(bad.diagnostics.some((d) => d.code === 'invalid-value' && /torch_compile/.test(d.message)));
  });

  test('torch.compile fuses whatever the code; torchtitan runs its own eager code', () => {
    assert.equal(fusionOf(planOf('/ws/axolotl.yaml', AXOLOTL('bf16: true\ntorch_compile: true\n'))), 'compiled');
    assert.equal(fusionOf(planOf('/ws/train_configs/llama3_8b.toml', TITAN)), 'eager');
    assert.equal(fusionOf(planOf('/ws/train_configs/llama3_8b.toml', `${TITAN}[compile]\nenable = true\n`)), 'compiled');
  });

  test('a frozen fp32 base under autocast is cast at every forward: 6 bytes per weight, no gradient cast back', () => {
    // QLoRA's 4-bit base needs no cast; the same plan with the base in fp32 adds, per micro-batch forward, 6 bytes for
    // each weight of q, k, v, o, gate, up and down in every layer and of the LM head, at HBM × memoryFraction.
    const q = planOf('/ws/axolotl.yaml', AXOLOTL('bf16: true\nadapter: qlora\nload_in_4bit: true\nlora_r: 16\nlora_target_linear: true\n'));
    const fp32 = { ...q, lora: { ...q.lora!, baseDtype: 'fp32' as const } };
    assert.equal(fusionOf(fp32), 'hf-amp');
    const m = q.model;
    const layer = m.hiddenSize * (m.heads + 2 * m.kvHeads) * m.headDim + m.heads * m.headDim * m.hiddenSize + 3 * m.hiddenSize * m.ffnSize;
    const bytes = 6 * (m.layers * layer + m.vocabSize * m.hiddenSize);
    const seconds = bytes / (q.cluster.gpu.hbmBandwidth * fitted.params.memoryFraction);
    const a = elementwise(q), b = elementwise(fp32);
    assert.ok(Math.abs((b.forward - a.forward) / seconds - 1) < 1e-9, `${b.forward - a.forward} against ${seconds}`);
    assert.ok(Math.abs(b.backward - a.backward) < 1e-12, 'a frozen weight has no gradient to cast');
  });

  test('autocast casts each fp32 weight to bf16 (read 4, write 2) and its gradient back (read 2, write 4)', () => {
    assert.equal(autocastWeightCastBytes(1000), 6000);
    // Full fine-tuning under autocast moves more memory-bound bytes than the same run on bf16 weights under FSDP.
    const amp = elementwise(planOf('/ws/axolotl.yaml', AXOLOTL('bf16: true\n')));
    const fsdp = elementwise(planOf('/ws/axolotl.yaml', AXOLOTL('bf16: true\nfsdp_version: 2\nfsdp_config:\n  fsdp_offload_params: false\n')));
    assert.ok(amp.forward > fsdp.forward && amp.backward > fsdp.backward, `${amp.forward} ${fsdp.forward}`);
  });
});
