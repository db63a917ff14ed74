/**
 * FSDP with a quantized LoRA base (Axolotl's llama-3/qlora-fsdp-70b.yaml): FSDP gathers and fetches the frozen base in
 * its storage (bitsandbytes' quant_storage packs the 4-bit codes into 16-bit elements that FSDP shards), the
 * embedding and head in 16 bits, and the optimizer's offload copies move only what trains, the adapters. The 4-bit
 * block constants are not in that storage: bitsandbytes keeps them in the module's QuantState (bitsandbytes 0.50
 * nn/modules.py, Params4bit `_quantize` sets `module.quant_state`, and `fix_4bit_weight_quant_state_from_module`
 * re-attaches it "for fsdp"), so every rank holds them whole and no gather moves them. Expected sizes from first
 * principles on Llama-3-70B's config.json (hidden 8192, 80 layers, 64 query and 8 K/V heads of 128, MLP 28672,
 * vocabulary 128256, untied); NF4 codes 0.5 bytes per weight and constants (8/64 + 32/(64·256))/8 (Dettmers et al.
 * 2023, QLoRA §3 double quantization); LoRA rank 8 on every linear (lora_target_linear) adds r·(in + out) per linear.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { TimeCache } from '../../../shared/time/cache';
import { estimateMemory } from '../../../shared/memory/estimate';
import type { Plan } from '../../../shared/plan/types';

/** The keys of Axolotl's examples/llama-3/qlora-fsdp-70b.yaml that set the layout. */
const YAML = 'base_model: casperhansen/llama-3-70b-fp16\nmodel_type: LlamaForCausalLM\nload_in_4bit: true\nadapter: qlora\nsequence_len: 512\n'
  + 'lora_r: 8\nlora_alpha: 16\nlora_dropout: 0.05\nlora_target_linear: true\ngradient_accumulation_steps: 4\nmicro_batch_size: 1\n'
  + 'optimizer: adamw_torch_fused\nbf16: auto\ngradient_checkpointing: true\nattn_implementation: flash_attention_2\n'
  + 'fsdp:\n  - full_shard\n  - auto_wrap\nfsdp_config:\n  fsdp_limit_all_gathers: true\n  fsdp_offload_params: true\n  fsdp_use_orig_params: false\n'
  + '  fsdp_cpu_ram_efficient_loading: true\n  fsdp_transformer_layer_cls_to_wrap: LlamaDecoderLayer\n  fsdp_state_dict_type: FULL_STATE_DICT\n  fsdp_sharding_strategy: FULL_SHARD\n';
const h = 8192, L = 80, kv = 1024, f = 28672, V = 128256, r = 8;
const LAYER = h * h + 2 * h * kv + h * h + 3 * h * f + 2 * h;
const REST = 2 * V * h + h;
const CODES = 0.5;
const CONSTANTS = (8 / 64 + 32 / (64 * 256)) / 8;
const ADAPTERS = L * r * ((h + h) * 2 + (h + kv) * 2 + (h + f) * 3);

describe('FSDP traffic of a QLoRA base', () => {
  before(async () => { await initFormats(); });
  const traffic = () => {
    const plan = resolvePlan(parseConfig('file:///ws/qlora-fsdp-70b.yaml', YAML), [], { settings: { gpu: 'h100-sxm', worldSize: 8 } }).plan!;
    return { plan, k: new TimeCache().stageTraffic(plan, 0) };
  };

  test('one gather: the layers as their 4-bit codes, the embedding and head in 16 bits (not every weight in 16 bits)', () => {
    const { plan, k } = traffic();
    assert.equal(plan.lora?.baseDtype, 'nf4');
    const want = L * LAYER * CODES + REST * 2;
    assert.ok(Math.abs(k.agBytes - want) <= 1e-9 * want, `${k.agBytes} vs ${want}`);
    assert.ok(k.agBytes < 0.3 * (L * LAYER + REST) * 2);
  });

  test('the parameter offload fetches the shard in the same storage; the optimizer offload moves the adapters only', () => {
    const { plan, k } = traffic();
    const shard = (L * LAYER * CODES + REST * 2) / 8;
    assert.ok(Math.abs(k.offloadParamBytes - 2 * shard) <= 1e-9 * shard, `${k.offloadParamBytes} vs ${2 * shard}`);
    const gB = plan.training.gradDtype === 'fp32' ? 4 : 2;
    const opt = (ADAPTERS / 8) * (gB + 2);
    assert.ok(Math.abs(k.offloadOptBytes - opt) <= 1e-9 * opt, `${k.offloadOptBytes} vs ${opt}`);
  });

  test("memory: the codes are sharded and offloaded with the shard; the constants stay whole on every GPU", () => {
    const { plan } = traffic();
    const gpu = estimateMemory(plan).stages[0].terms.parameters!.bytes;
    // fsdp_offload_params: the shard (codes, embedding, head, adapters) lives on the host; the constants of every layer stay.
    const want = L * LAYER * CONSTANTS;
    assert.ok(Math.abs(gpu - want) <= 1e-9 * want, `${gpu} vs ${want}`);
  });

  test("memory: bitsandbytes holds its constants whole where torchao's NF4Tensor (torchtune) shards them with the codes", () => {
    const onGpu = YAML.replace('fsdp_offload_params: true', 'fsdp_offload_params: false');
    const bnb = resolvePlan(parseConfig('file:///ws/qlora-fsdp-70b.yaml', onGpu), [], { settings: { gpu: 'h100-sxm', worldSize: 8 } }).plan!;
    const torchao: Plan = { ...bnb, training: { ...bnb.training, modelImpl: 'torchtitan' } };
    const bytes = (p: Plan) => estimateMemory(p).stages[0].terms.parameters!.bytes;
    // bnb: codes/8 + constants; torchao: (codes + constants)/8; everything else the same.
    const want = (L * LAYER * CONSTANTS * 7) / 8;
    const got = bytes(bnb) - bytes(torchao);
    assert.ok(Math.abs(got - want) <= 1e-6 * want, `${got} vs ${want}`);
  });
});
