/**
 * Facts the step-time model needs from launch files: torch.compile, FP8 recipe and FP8 parameter gather, context
 * parallelism, TP communication overlap, and llm-foundry MPT model configs. Files are the published runs copied into
 * data/calibration/measured-runs/ (torchtitan benchmarks/llama3_h100_202412_torchtitan.md, NeMo 24.07
 * performance_summary.md, llm-foundry benchmarking README). Expected values: torchtitan job_config.py (compile.enable,
 * quantize.linear.float8 with torchao's tensorwise default), Megatron-LM arguments.py (--fp8-recipe default "delayed"),
 * llm-foundry MPTConfig (ffn = expansion_ratio · d_model, learned_pos_emb default true, no_bias).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { modelFromHfConfig } from '../../../shared/model/hfConfig';
import { countParams } from '../../../shared/model/params';
import { memoryHost } from './helpers';

const RUNS = resolve(__dirname, '../../../data/calibration/measured-runs');
const read = (name: string) => readFileSync(resolve(RUNS, name), 'utf8');
const factsOf = (name: string) => parseConfig(resolve(RUNS, name), read(name)).facts;

describe('torchtitan: compile and float8', () => {
  before(async () => { await initFormats(); });

  test('compile.enable, converters = ["float8"] and [quantize.linear.float8], CP from [parallelism]', () => {
    const f = factsOf('tt24_t2_8b_fsdp4_cp2.toml');
    assert.equal(f['training.compile']?.value, true);
    assert.equal(f['training.compile']?.source.kind, 'explicit');
    assert.equal(f['training.precision']?.value, 'fp8-mixed');
    assert.equal(f['training.fp8.recipe']?.value, 'tensorwise');
    assert.equal(f['training.fp8.recipe']?.source.kind, 'default');
    assert.equal(f['training.fp8.paramGather']?.value, false);
    assert.equal(f['training.fp8.paramGather']?.source.kind, 'explicit');
    assert.equal(f['parallel.cp']?.value, 2);
  });

  test('recipe_name rowwise and an fp8 all-gather; compile off by default', () => {
    const text = '[model]\nname = "llama3"\nflavor = "8B"\nconverters = ["quantize.linear.float8"]\n'
      + '[quantize.linear.float8]\nrecipe_name = "rowwise"\nenable_fsdp_float8_all_gather = true\n';
    const f = parseConfig('/w/train_configs/a.toml', text, 'torchtitan').facts;
    assert.equal(f['training.precision']?.value, 'fp8-mixed');
    assert.equal(f['training.fp8.recipe']?.value, 'rowwise');
    assert.equal(f['training.fp8.paramGather']?.value, true);
    assert.equal(f['training.compile']?.value, false);
    assert.equal(f['training.compile']?.source.kind, 'default');
  });

  test('an unknown recipe name is reported, not guessed', () => {
    const text = '[model]\nconverters = ["float8"]\n[quantize.linear.float8]\nrecipe_name = "fastest"\n';
    const parsed = parseConfig('/w/train_configs/b.toml', text, 'torchtitan');
    assert.ok(parsed.diagnostics.some((d) => d.code === 'invalid-value' && d.paths.includes('training.fp8.recipe')));
    assert.equal(parsed.facts['training.fp8.recipe']?.source.kind, 'default');
  });

  test('the resolved plan carries compile and the FP8 spec', () => {
    const name = 'tt24_t4_70b_2d-asynctp.toml';
    const path = resolve(RUNS, name);
    const g = loadConfigGraph(path, memoryHost({ [path]: read(name) }, RUNS), { settings: { gpu: 'h100-sxm', worldSize: 256, gpusPerNode: 8, nodes: 32 } });
    const plan = g.resolved.plan;
    assert.ok(plan);
    assert.equal(plan.training.compile, true);
    assert.deepEqual(plan.training.fp8, { recipe: 'tensorwise', paramGather: false });
    assert.equal(plan.parallel.tpCommOverlap, true);
    assert.equal(plan.parallel.tp, 8);
  });
});

describe('torchtitan: gradient reduce dtype and optimizer implementation', () => {
  before(async () => { await initFormats(); });
  const tt = (body: string) => parseConfig('/w/train_configs/c.toml', `[model]\nname = "llama3"\nflavor = "8B"\n${body}`, 'torchtitan');

  test('mixed_precision_reduce names the reduce-scatter dtype; torchtitan\'s default is float32 (job_config.py)', () => {
    assert.equal(factsOf('mpt_13b_s2048_8gpu.toml')['training.gradDtype']?.value, 'fp32');
    assert.equal(factsOf('mpt_13b_s2048_8gpu.toml')['training.gradDtype']?.source.kind, 'explicit');
    const d = tt('').facts['training.gradDtype'];
    assert.equal(d?.value, 'fp32');
    assert.equal(d?.source.kind, 'default');
    assert.equal(tt('[training]\nmixed_precision_reduce = "bfloat16"\n').facts['training.gradDtype']?.value, 'bf16');
    const bad = tt('[training]\nmixed_precision_reduce = "fp4"\n');
    assert.ok(bad.diagnostics.some((x) => x.code === 'invalid-value' && x.paths.includes('training.gradDtype')));
  });

  test('optimizer.implementation, and the older optimizer.fused flag (false: foreach; torchtitan #881)', () => {
    assert.equal(factsOf('mpt_7b_s2048_8gpu.toml')['training.optimizerImpl']?.value, 'for-loop');
    assert.equal(tt('[optimizer]\nfused = true\n').facts['training.optimizerImpl']?.value, 'fused');
    assert.equal(tt('[optimizer]\nfused = false\n').facts['training.optimizerImpl']?.value, 'foreach');
    assert.equal(tt('').facts['training.optimizerImpl'], undefined, 'unstated: the engine default applies');
    const bad = tt('[optimizer]\nimplementation = "turbo"\n');
    assert.ok(bad.diagnostics.some((x) => x.code === 'invalid-value' && x.paths.includes('training.optimizerImpl')));
  });

  test('MPT-30B has 56 heads of 128 (llm-foundry scripts/train/yamls/pretrain/mpt-30b.yaml: d_model 7168, n_heads 56)', () => {
    const cfg = JSON.parse(read('models/mpt-30b-s2048/config.json')) as Record<string, unknown>;
    const { model } = modelFromHfConfig(cfg);
    assert.equal(model?.heads, 56);
    assert.equal(model?.headDim, 128);
  });
});

describe('Megatron: gradient dtype by precision (megatron/training/arguments.py)', () => {
  before(async () => { await initFormats(); });
  const mg = (flags: string) => parseConfig('/w/run.sh', `torchrun pretrain_gpt.py ${flags} --num-layers 2\n`, 'megatron-script').facts;

  test('--fp16 reduces and accumulates gradients in fp16 unless --accumulate-allreduce-grads-in-fp32', () => {
    assert.equal(mg('--fp16')['training.gradDtype']?.value, 'fp16');
    assert.equal(mg('--fp16')['training.fp32GradAccum']?.value, false);
    assert.equal(mg('--fp16 --accumulate-allreduce-grads-in-fp32')['training.gradDtype']?.value, 'fp32');
    assert.equal(mg('--fp16 --accumulate-allreduce-grads-in-fp32')['training.fp32GradAccum']?.value, true);
  });

  test('--bf16 forces fp32 accumulation and all-reduce ("bfloat16 requires gradient accumulation and all-reduce in fp32")', () => {
    assert.equal(mg('--bf16')['training.gradDtype']?.value, 'fp32');
    assert.equal(mg('--bf16')['training.fp32GradAccum']?.value, true);
    assert.equal(mg('--bf16 --grad-reduce-in-bf16')['training.gradDtype']?.value, 'bf16');
  });
});

describe('Megatron / NeMo: FP8 flags', () => {
  before(async () => { await initFormats(); });

  test('--fp8-format hybrid after --bf16, recipe default delayed, CP and --tp-comm-overlap', () => {
    const f = factsOf('nemo2407_llama3_70b.sh');
    assert.equal(f['training.precision']?.value, 'fp8-mixed');
    assert.equal(f['training.fp8.recipe']?.value, 'delayed');
    assert.equal(f['training.fp8.recipe']?.source.kind, 'default');
    assert.equal(f['training.fp8.paramGather']?.value, false);
    assert.equal(f['parallel.cp']?.value, 2);
    assert.equal(f['parallel.tpCommOverlap']?.value, true);
  });

  test('--fp8-recipe and --fp8-param-gather, in either order with --bf16', () => {
    const script = 'torchrun pretrain_gpt.py --fp8-format e4m3 --fp8-recipe tensorwise --fp8-param-gather --bf16 --num-layers 2\n';
    const f = parseConfig('/w/run.sh', script, 'megatron-script').facts;
    assert.equal(f['training.precision']?.value, 'fp8-mixed');
    assert.equal(f['training.fp8.recipe']?.value, 'tensorwise');
    assert.equal(f['training.fp8.paramGather']?.value, true);
  });

  test('--account-for-embedding/loss-in-pipeline-split: 126 layers on PP 16 as 7 + 14·8 + 7 (Llama 3 405B)', () => {
    // megatron/core/transformer/transformer_block.py: (126 + 1 + 1) / 16 = 8 per stage, the embedding and the loss
    // taking one each on the first and last stage.
    const script = 'torchrun pretrain_gpt.py --num-layers 126 --hidden-size 16384 --num-attention-heads 128 --pipeline-model-parallel-size 16 '
      + '--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split --bf16\n';
    const path = '/w/run405.sh';
    const g = loadConfigGraph(path, memoryHost({ [path]: script }, '/w'), { settings: { gpu: 'h100-sxm', worldSize: 16384, gpusPerNode: 8, nodes: 2048 } });
    assert.deepEqual(g.resolved.plan?.parallel.stageLayers, [7, ...Array<number>(14).fill(8), 7]);
  });

  test('bf16 without FP8 gets no FP8 recipe', () => {
    const f = parseConfig('/w/run.sh', 'torchrun pretrain_gpt.py --bf16 --num-layers 2\n', 'megatron-script').facts;
    assert.equal(f['training.precision']?.value, 'bf16-mixed');
    assert.equal(f['training.fp8.recipe'], undefined);
  });
});

describe('llm-foundry MPT config.json', () => {
  // mpt-7b as in llm-foundry scripts/train/yamls/pretrain/mpt-7b.yaml: d_model 4096, n_heads 32, n_layers 32,
  // expansion_ratio 4, max_seq_len 2048, vocab 50368, no_bias true.
  const mpt7b = { model_type: 'mpt', d_model: 4096, n_heads: 32, n_layers: 32, expansion_ratio: 4, max_seq_len: 2048, vocab_size: 50368, no_bias: true, learned_pos_emb: true, attn_config: { attn_impl: 'flash', alibi: false } };

  test('ModelSpec from MPT keys', () => {
    const { model, problems } = modelFromHfConfig(mpt7b);
    assert.deepEqual(problems, []);
    assert.ok(model);
    assert.equal(model.hiddenSize, 4096);
    assert.equal(model.layers, 32);
    assert.equal(model.heads, 32);
    assert.equal(model.kvHeads, 32);
    assert.equal(model.ffnSize, 16384);
    assert.equal(model.positions, 'learned');
    assert.equal(model.maxPositions, 2048);
    assert.equal(model.attnBias, 'none');
    assert.equal(model.mlpBias, false);
    assert.equal(model.tiedEmbeddings, true);
    assert.equal(model.gatedMlp, false);
    // llm-foundry scripts/train/benchmarking/README.md reports 6,658,859,008 parameters for MPT-7B at seq 2048;
    // the count agrees to 0.05 % (LayerNorm bias and vocabulary padding details are not published).
    const n = countParams(model).parameters;
    assert.ok(Math.abs(n / 6_658_859_008 - 1) < 5e-4, `${n}`);
  });

  test('grouped-query attention, gated FFN and ALiBi', () => {
    const { model } = modelFromHfConfig({ ...mpt7b, learned_pos_emb: false, attn_config: { attn_type: 'grouped_query_attention', kv_n_heads: 8, alibi: true }, ffn_config: { ffn_type: 'mptglu' } });
    assert.ok(model);
    assert.equal(model.kvHeads, 8);
    assert.equal(model.gatedMlp, true);
    assert.equal(model.positions, 'alibi');
  });

  test('an opened MPT config.json gives model facts', () => {
    const f = parseConfig('/w/mpt/config.json', JSON.stringify(mpt7b), 'hf-config').facts;
    assert.equal(f['model.hiddenSize']?.value, 4096);
    assert.equal(f['model.ffnSize']?.value, 16384);
    assert.equal(f['model.positions']?.value, 'learned');
    assert.equal(f['model.maxPositions']?.value, 2048);
    assert.equal(f['model.attnBias']?.value, 'none');
    assert.equal(f['model.tiedEmbeddings']?.value, true);
  });
});
