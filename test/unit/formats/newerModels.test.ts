/**
 * The newer model families as real files name them: torchtitan's own train configs (`[model] name`/`flavor` for qwen3,
 * deepseek_v3 and llama4, torchtitan/models/<name>/__init__.py at 238fa99), Hub ids of Gemma 1–3, Qwen2, Qwen (1),
 * DeepSeek-R1-Distill, Mistral-Nemo, MPT and gpt-oss, a Llama 4 config.json whose language model sits in `text_config`,
 * a DeepSeek config.json whose shared experts are given by count only, and EP on a model the file does not name.
 * Expected values: the model cards' totals and transformers' configuration classes.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { countParams } from '../../../shared/model/params';
import { memoryHost } from './helpers';

const titan = (name: string, flavor: string, extra = '') => `[model]\nname = "${name}"\nflavor = "${flavor}"\n\n[training]\nlocal_batch_size = 1\nseq_len = 4096\n\n[parallelism]\ndata_parallel_shard_degree = -1\n${extra}`;

function load(path: string, text: string, settings: Record<string, unknown> = { worldSize: 64 }) {
  return loadConfigGraph(path, memoryHost({ [path]: text }), { settings });
}

describe('newer model families read from the files that name them', () => {
  before(async () => { await initFormats(); });

  const FLAVORS: [string, string, string, number][] = [
    // [model] name, flavor, the preset it is, the model card's total.
    ['qwen3', '32B', 'Qwen3-32B', 32.8e9],
    ['qwen3', '1.7B', 'Qwen3-1.7B', 1.7e9],
    ['qwen3', '235B-A22B', 'Qwen3-235B-A22B', 235e9],
    ['deepseek_v3', '16B', 'DeepSeek-V2-Lite', 15.7e9],
    ['deepseek_v3', '671B', 'DeepSeek-V3', 671e9],
    ['llama4', '17bx16e', 'Llama-4-Scout-17B-16E', 109e9],
    ['llama4', '17bx128e_irope', 'Llama-4-Maverick-17B-128E', 400e9],
  ];
  for (const [name, flavor, want, total] of FLAVORS) {
    test(`torchtitan ${name} flavor ${flavor} is ${want}`, () => {
      const g = load('/ws/train.toml', titan(name, flavor));
      const p = g.resolved.plan!;
      assert.equal(p.model.name, want);
      assert.ok(!g.resolved.problems.some((x) => x.code === 'model-unknown'), JSON.stringify(g.resolved.problems));
      assert.ok(Math.abs(countParams(p.model).parameters / total - 1) <= 0.02);
    });
  }

  // Names as the corpus's files write them (axolotl qlora-fsdp-70b.yaml, qwen2-moe-qlora.yaml; litgpt pretrain/tinyllama.yaml).
  // Fine-tunes named after their base (OpenRLHF's examples, Qwen's 2507 releases) take its architecture; a size in the
  // middle of a name (a distillation into another family) finds nothing rather than a wrong model.
  const NAMES: [string, string][] = [
    ['casperhansen/llama-3-70b-fp16', 'Llama-3-70B'], ['Qwen/Qwen1.5-MoE-A2.7B', 'Qwen1.5-MoE-A2.7B'], ['tiny-llama-1.1b', 'TinyLlama-1.1B'],
    ['OpenRLHF/Llama-3-8b-sft-mixture', 'Llama-3-8B'], ['Qwen/Qwen3-4B-Thinking-2507', 'Qwen3-4B'], ['Qwen/Qwen2.5-3B-Instruct', 'Qwen2.5-3B'],
    ['microsoft/Phi-3-mini-4k-instruct', 'Phi-3-mini-4k'],
    // Hub ids of the widely fine-tuned families (their model cards), base and -it/-Instruct/-Chat variants alike.
    ['google/gemma-2b', 'Gemma-2B'], ['google/gemma-7b-it', 'Gemma-7B'], ['google/gemma-1.1-7b-it', 'Gemma-7B'],
    ['google/gemma-2-2b', 'Gemma-2-2B'], ['google/gemma-2-9b-it', 'Gemma-2-9B'], ['google/gemma-2-27b-it', 'Gemma-2-27B'],
    ['google/gemma-3-1b-pt', 'Gemma-3-1B'], ['google/gemma-3-1b-it', 'Gemma-3-1B'], ['google/gemma-3-4b-it', 'Gemma-3-4B'],
    ['google/gemma-3-12b-pt', 'Gemma-3-12B'], ['google/gemma-3-27b-it', 'Gemma-3-27B'],
    ['Qwen/Qwen2-0.5B', 'Qwen2-0.5B'], ['Qwen/Qwen2-1.5B-Instruct', 'Qwen2-1.5B'], ['Qwen/Qwen2-7B', 'Qwen2-7B'], ['Qwen/Qwen2-72B-Instruct', 'Qwen2-72B'],
    ['Qwen/Qwen-7B', 'Qwen-7B'], ['Qwen/Qwen-7B-Chat', 'Qwen-7B'],
    ['deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B', 'DeepSeek-R1-Distill-Qwen-1.5B'], ['deepseek-ai/DeepSeek-R1-Distill-Qwen-7B', 'DeepSeek-R1-Distill-Qwen-7B'],
    ['deepseek-ai/DeepSeek-R1-Distill-Qwen-14B', 'DeepSeek-R1-Distill-Qwen-14B'], ['deepseek-ai/DeepSeek-R1-Distill-Qwen-32B', 'DeepSeek-R1-Distill-Qwen-32B'],
    ['deepseek-ai/DeepSeek-R1-Distill-Llama-8B', 'DeepSeek-R1-Distill-Llama-8B'], ['deepseek-ai/DeepSeek-R1-Distill-Llama-70B', 'DeepSeek-R1-Distill-Llama-70B'],
    ['mistralai/Mistral-Nemo-Base-2407', 'Mistral-Nemo-12B'], ['mistralai/Mistral-Nemo-Instruct-2407', 'Mistral-Nemo-12B'],
    ['meta-llama/Llama-3.3-70B-Instruct', 'Llama-3.1-70B'], ['meta-llama/Llama-3.2-3B-Instruct', 'Llama-3.2-3B'],
    ['mosaicml/mpt-7b', 'MPT-7B'], ['mosaicml/mpt-7b-instruct', 'MPT-7B'], ['openai/gpt-oss-20b', 'gpt-oss-20b'], ['openai/gpt-oss-120b', 'gpt-oss-120b'],
    // A fine-tune named after a new base takes it (princeton-nlp's SimPO run of Gemma 2).
    ['princeton-nlp/gemma-2-9b-it-SimPO', 'Gemma-2-9B'],
  ];
  for (const [ref, want] of NAMES) {
    test(`"${ref}" is ${want}`, () => {
      const g = load('/ws/train.yaml', `base_model: ${ref}\nmicro_batch_size: 1\nsequence_len: 2048\n`);
      assert.equal(g.resolved.plan!.model.name, want, JSON.stringify(g.resolved.problems));
    });
  }

  test('a size in the middle of a name is no base: DeepHermes-3-Llama-3-8B-Preview stays unknown (and says so), not Llama-3-8B', () => {
    // NousResearch's model names a bundled base (Llama-3-8B) in the middle of its name, after its own family's name.
    const g = load('/ws/train.yaml', 'base_model: NousResearch/DeepHermes-3-Llama-3-8B-Preview\nmicro_batch_size: 1\nsequence_len: 2048\n');
    assert.ok(g.resolved.problems.some((x) => x.code === 'model-unknown'), JSON.stringify(g.resolved.problems));
    assert.notEqual(g.resolved.plan?.model.name, 'Llama-3-8B');
  });

  test('a named model with sliding-window attention says it is costed as full attention; a Llama does not', () => {
    const yaml = (m: string) => `base_model: ${m}\nmicro_batch_size: 1\nsequence_len: 8192\n`;
    const gemma = load('/ws/train.yaml', yaml('google/gemma-2-9b')).resolved.problems.filter((x) => x.code === 'hf-config-sliding-window');
    assert.equal(gemma.length, 1, JSON.stringify(gemma));
    assert.equal(gemma[0]!.severity, 'info');
    assert.match(gemma[0]!.message, /sliding_window: attention slides over a window of 4096 tokens in every other layer.*full causal attention/);
    const oss = load('/ws/train.yaml', yaml('openai/gpt-oss-20b')).resolved.problems.find((x) => x.code === 'hf-config-sliding-window');
    assert.match(oss?.message ?? '', /layer_types: .* 128 tokens in 12 of 24 layers/);
    assert.ok(!load('/ws/train.yaml', yaml('meta-llama/Llama-3.1-8B')).resolved.problems.some((x) => x.code === 'hf-config-sliding-window'));
  });

  test('sequences that fit in one window get no sliding-window note: every query sees every earlier key either way', () => {
    // Gemma 2's window is 4,096 tokens (config.json sliding_window): at 4,096 tokens per sequence it never cuts a
    // query off; at 4,097 the last query loses its first key.
    const notes = (seq: number) => load('/ws/train.yaml', `base_model: google/gemma-2-9b\nmicro_batch_size: 1\nsequence_len: ${seq}\n`).resolved.problems.filter((x) => x.code === 'hf-config-sliding-window');
    assert.equal(notes(4096).length, 0, JSON.stringify(notes(4096)));
    assert.equal(notes(4097).length, 1);
  });

  // picotron's template/base_config.json: AutoConfig.from_pretrained(name) with the block's counts on top.
  test('a named model with the sizes the file states on top: SmolLM-360M at 16 layers, 16 heads, 4 KV heads of 60', () => {
    const cfg = {
      distributed: { tp_size: 1, cp_size: 1, pp_size: 1, dp_size: 1, pp_engine: '1f1b' },
      model: { name: 'HuggingFaceTB/SmolLM-360M-Instruct', num_hidden_layers: 16, num_attention_heads: 16, num_key_value_heads: 4 },
      training: { seq_length: 1024, micro_batch_size: 32, gradient_accumulation_steps: 1 },
    };
    const r = load('/ws/base_config.json', JSON.stringify(cfg, null, 2), {}).resolved;
    const m = r.plan!.model;
    assert.equal(m.hiddenSize, 960); // the named model's width
    assert.equal(m.layers, 16);
    assert.equal(m.heads, 16);
    assert.equal(m.kvHeads, 4);
    assert.equal(m.headDim, 60); // LlamaConfig: head_dim = hidden_size / num_attention_heads when not stated
    assert.equal(r.plan!.sources['model.layers']?.kind, 'explicit');
  });

  test('a Llama 4 config.json: the language model in text_config, dense and expert widths apart, 400B for Maverick', () => {
    const cfg = {
      architectures: ['Llama4ForConditionalGeneration'], model_type: 'llama4',
      text_config: {
        model_type: 'llama4_text', hidden_size: 5120, intermediate_size: 8192, intermediate_size_mlp: 16384, num_attention_heads: 40,
        num_hidden_layers: 48, num_key_value_heads: 8, head_dim: 128, num_local_experts: 128, num_experts_per_tok: 1,
        interleave_moe_layer_step: 2, vocab_size: 202048, max_position_embeddings: 1048576, tie_word_embeddings: false,
      },
    };
    const g = load('/ws/config.json', JSON.stringify(cfg, null, 2));
    assert.ok(!g.resolved.problems.some((x) => x.code === 'hf-not-decoder'), JSON.stringify(g.resolved.problems));
    const m = g.resolved.plan!.model;
    assert.equal(m.ffnSize, 16384);
    assert.equal(m.moe?.expertFfnSize, 8192);
    assert.equal(m.moe?.sharedExperts, 1);
    assert.equal(m.moe?.sharedExpertFfnSize, 8192);
    assert.equal(m.moe?.layerFrequency, 2);
    assert.ok(Math.abs(countParams(m).parameters / 400e9 - 1) <= 0.01);
  });

  test('a Llama 4 config.json under another name is still a model config; broken widths are warnings at their keys', () => {
    const cfg = {
      model_type: 'llama4',
      text_config: { model_type: 'llama4_text', hidden_size: 5120, num_hidden_layers: 48, num_attention_heads: 40, intermediate_size_mlp: -5, num_local_experts: 16, interleave_moe_layer_step: 0 },
    };
    const g = load('/ws/llama4_maverick.json', JSON.stringify(cfg, null, 2));
    assert.equal(g.primary.format, 'hf-config');
    const d = g.primary.diagnostics.map((x) => x.message).join(' | ');
    assert.match(d, /intermediate_size_mlp should be a positive whole number/);
    assert.match(d, /interleave_moe_layer_step should be at least 1/);
    const m = g.resolved.plan!.model;
    assert.ok(m.ffnSize > 0 && (m.moe?.layerFrequency ?? 1) >= 1);
  });

  test('DeepSeek shared experts given by count are each as wide as a routed expert (DeepSeek-V3: 671B)', () => {
    const cfg = {
      model_type: 'deepseek_v3', hidden_size: 7168, intermediate_size: 18432, moe_intermediate_size: 2048, num_hidden_layers: 61,
      num_attention_heads: 128, num_key_value_heads: 128, n_routed_experts: 256, n_shared_experts: 1, num_experts_per_tok: 8,
      first_k_dense_replace: 3, vocab_size: 129280, kv_lora_rank: 512, q_lora_rank: 1536,
    };
    const m = load('/ws/config.json', JSON.stringify(cfg, null, 2)).resolved.plan!.model;
    assert.equal(m.moe?.sharedExperts, 1);
    assert.equal(m.moe?.sharedExpertFfnSize, 2048);
    assert.ok(Math.abs(countParams(m).parameters / 671e9 - 1) <= 0.01, `${countParams(m).parameters}`);
  });

  test('EP on a model nobody named: an info that the stand-in is dense, no EP-without-experts warning, a world that holds the EP group', () => {
    const titanEp = load('/ws/train.toml', titan('no_such_model', 'X', 'expert_parallel_degree = 16\n'), {});
    const t = titanEp.resolved;
    assert.ok(t.problems.some((x) => x.code === 'ep-assumed-dense-model' && x.severity === 'info'), JSON.stringify(t.problems));
    assert.ok(!t.problems.some((x) => x.code === 'ep-without-moe'));
    assert.ok(!t.problems.some((x) => x.code === 'ep-divides-dp'), JSON.stringify(t.problems));
    assert.equal(t.plan!.cluster.gpusPerNode * t.plan!.cluster.nodes, 16);
  });
});
