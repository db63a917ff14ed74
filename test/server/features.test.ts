/**
 * Inlay hints, hover, code lenses, completion and the custom analysis request over the in-process LSP connection,
 * with one fixture per format (test/server/fixtures, modelled on real files of the corpus).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { InlayHint } from 'vscode-languageserver';
import { formatBytes } from '../../shared/units';
import { LspMethods, type AnalysisChangedParams, type AnalysisSimulation } from '../../shared/protocol';
import { posOf, startClient, type Client } from './harness';

const DIR = resolve('test/server/fixtures');
const uriOf = (name: string) => pathToFileURL(`${DIR}/${name}`).toString();
const read = (name: string) => readFileSync(`${DIR}/${name}`, 'utf8');
const label = (h: InlayHint) => (typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join(''));

/** Llama 2 7B has 6,738,415,616 parameters (Touvron et al. 2023; the Hugging Face safetensors index). */
const PSI_LLAMA2_7B = 6_738_415_616;

let c: Client;

/** Opens `text` at `uri`, waits for its analysis and returns the hover's markdown at `needle` ('' without one). */
async function hoverMarkdown(uri: string, text: string, language: string, needle: string, delta: number): Promise<string> {
  const d = c.diagnostics(uri);
  await c.open(uri, text, language);
  await d;
  const h = await c.hover(uri, posOf(text, needle, delta));
  return h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
}
before(async () => {
  // DeepSpeed JSON does not name a model; the setting supplies it.
  c = await startClient({ model: 'llama-2-7b' });
});
after(() => c.dispose());

async function openFixture(name: string): Promise<{ uri: string; text: string }> {
  const uri = uriOf(name);
  const text = read(name);
  const d = c.diagnostics(uri);
  await c.open(uri, text);
  await d;
  return { uri, text };
}

/** Hints on the line that contains `needle`. */
function hintsAt(hints: InlayHint[], text: string, needle: string): string[] {
  const line = posOf(text, needle, 0).line;
  return hints.filter((h) => h.position.line === line).map(label);
}

interface HintCase {
  readonly file: string;
  /** needle on a line → pattern some hint on that line must match. */
  readonly at: readonly (readonly [string, RegExp])[];
}

// Which key carries which figure (issue 4 §3): model states at the sharding key, activations at the micro batch,
// per-stage peaks at TP/PP (when > 1), communication at the keys that cause it, the verdict on the first line.
const VERDICT = /^≈[\d.]+ (GiB|MiB)\/GPU (✓ fits|✗ > [\d.]+ GiB|[≤>] [\d.]+ GiB if assumed)/;
const HINTS: readonly HintCase[] = [
  { file: 'ds_zero2.json', at: [['{', VERDICT], ['"stage"', /^states ≈.*\/GPU · ×[\d.]+ rep\.$/], ['"stage"', /^DP ≈[\d.]+ GiB(\/step)?$/], ['train_micro_batch_size_per_gpu', /^act\. ≈/]] },
  { file: 'pretrain_llama.sh', at: [['#!/bin/bash', VERDICT], ['--use-distributed-optimizer', /^states ≈/], ['TP_SIZE=', /^stages ≈[\d.]+ · [\d.]+ GiB$/], ['TP_SIZE=', /^TP ≈/], ['PP_SIZE=', /^PP ≈/], ['MICRO_BATCH_SIZE=', /^act\. ≈/]] },
  { file: 'llama3_8b.toml', at: [['local_batch_size', /^act\. ≈/], ['flavor', /params$/]] },
  { file: 'accelerate_fsdp.yaml', at: [['fsdp_sharding_strategy', /^states ≈/]] },
  { file: 'axolotl.yaml', at: [['deepspeed:', /^states ≈/], ['base_model', VERDICT], ['micro_batch_size', /^act\. ≈/]] },
  { file: 'llamafactory.yaml', at: [['deepspeed:', /^states ≈/], ['per_device_train_batch_size', /^act\. ≈/]] },
  { file: 'nanotron.yaml', at: [['micro_batch_size', /^act\. ≈/], ['tp: 2', /^TP ≈/]] },
  { file: 'config.json', at: [['{', VERDICT]] },
  // Launch dialects (issue 12): the value a DeepSpeed-Chat flag takes through a variable, verl's Megatron actor TP.
  { file: 'dschat_step1.sh', at: [['ZERO_STAGE=3', /^states ≈/], ['--per_device_train_batch_size', /^act\. ≈/]] },
  { file: 'verl_grpo.sh', at: [['ppo_micro_batch_size_per_gpu', /^act\. ≈/], ['megatron.tensor_model_parallel_size', /^TP ≈/]] },
];

/**
 * VS Code's default `editor.inlayHints.maximumLength`: "Maximum overall length of inlay hints, for a single line"
 * (1.100, src/vs/editor/common/config/editorOptions.ts); past it the hints of the line are cut with "…".
 */
const VSCODE_HINT_LENGTH = 43;

describe('inlay hints per format', () => {
  for (const k of HINTS) {
    test(k.file, async () => {
      const { uri, text } = await openFixture(k.file);
      const hints = await c.hints(uri);
      for (const [needle, re] of k.at) {
        const here = hintsAt(hints, text, needle);
        assert.ok(here.some((h) => re.test(h)), `${k.file}: no hint matching ${re} on the line of ${needle}; got ${JSON.stringify(here)}`);
      }
      // The hints of every line fit VS Code's default length together; the long form is a Markdown tooltip.
      for (const line of new Set(hints.map((h) => h.position.line))) {
        const labels = hints.filter((h) => h.position.line === line).map(label);
        assert.ok(labels.join('').length <= VSCODE_HINT_LENGTH, `${k.file}: line ${line} "${labels.join(' ')}" is ${labels.join('').length} characters`);
      }
      for (const h of hints) {
        const tip = typeof h.tooltip === 'object' ? h.tooltip.value : h.tooltip ?? '';
        assert.ok(tip.length > label(h).length, `${k.file}: "${label(h)}" has no long form (${JSON.stringify(h.tooltip)})`);
      }
    });
  }

  test("verl: the rollout engine's TP gets no training hint", async () => {
    const { uri, text } = await openFixture('verl_grpo.sh');
    assert.deepEqual(hintsAt(await c.hints(uri), text, 'rollout.tensor_model_parallel_size'), []);
  });

  test('ZeRO-2 model states are (2 + 14/N)·Ψ per GPU, and replicated data parallel holds 16·Ψ', async () => {
    // ZeRO paper (Rajbhandari et al. 2020) Table 1 / §5.2: mixed-precision Adam holds 2Ψ + 2Ψ + 12Ψ bytes;
    // ZeRO-2 keeps the fp16 parameters and shards gradients and optimizer states over N_d = 8 GPUs.
    const { uri, text } = await openFixture('ds_zero2.json');
    const hints = (await c.hints(uri)).filter((h) => h.position.line === posOf(text, '"stage"', 0).line);
    const sharded = formatBytes((2 + 14 / 8) * PSI_LLAMA2_7B, 'GiB');
    const replicated = formatBytes(16 * PSI_LLAMA2_7B, 'GiB');
    const states = hints.find((h) => label(h).startsWith('states'));
    assert.equal(states && label(states), `states ≈${sharded}/GPU · ×${(16 / (2 + 14 / 8)).toFixed(1)} rep.`);
    const tip = states && typeof states.tooltip === 'object' ? states.tooltip.value : '';
    assert.match(tip, new RegExp(`${sharded} as sharded here .*; ${replicated} replicated`));
  });

  test('the micro batch\'s hint shows the activations kept for the backward even when the GPU peaks at the optimizer step', async () => {
    // DeepSpeed without ZeRO in bf16 peaks at its step (20Ψ: weights, gradients, fp32 master, Adam and the fp32 gradient
    // casts; shared/memory/deepspeed.ts), when no activation is live. Each of Llama 2 7B's 32 layers keeps at least its
    // input for the backward, b·s·h·2 bytes (Korthikanti et al. 2022 §4: the 2sbh of a layer's input is part of every
    // layer's saved activations): 32 × 1·2048·4096·2 = 0.5 GiB for one sequence of 2,048 tokens.
    const uri = uriOf('ds_zero0_inline.json');
    const text = read('ds_zero2.json').replace('"stage": 2', '"stage": 0').replace('"gradient_accumulation_steps": 8', '"gradient_accumulation_steps": 1')
      .replace('"train_batch_size": 256', '"train_batch_size": 8').replace('"train_micro_batch_size_per_gpu": 4', '"train_micro_batch_size_per_gpu": 1');
    const d = c.diagnostics(uri);
    await c.open(uri, text);
    await d;
    const hints = (await c.hints(uri)).filter((h) => h.position.line === posOf(text, 'train_micro_batch_size_per_gpu', 0).line);
    const act = hints.find((h) => label(h).startsWith('act.'));
    assert.ok(act, JSON.stringify(hints.map(label)));
    const m = /^act\. ≈([\d.]+) (GiB|MiB)/.exec(label(act));
    assert.ok(m, label(act));
    const gib = Number(m[1]) / (m[2] === 'MiB' ? 1024 : 1);
    assert.ok(gib >= 0.5, `${label(act)}: below the 0.5 GiB the layers' inputs alone keep`);
    const tip = typeof act.tooltip === 'object' ? act.tooltip.value : '';
    assert.match(tip, /peaks at the optimizer step/);
  });

  test('hint detail "off" shows nothing and "minimal" only the total', async () => {
    const { uri } = await openFixture('ds_zero2.json');
    c.settings = { model: 'llama-2-7b', hints: { detail: 'minimal' } };
    await c.rpc.sendNotification('workspace/didChangeConfiguration', { settings: {} });
    await c.diagnostics(uri);
    const minimal = await c.hints(uri);
    c.settings = { model: 'llama-2-7b', hints: { detail: 'off' } };
    await c.rpc.sendNotification('workspace/didChangeConfiguration', { settings: {} });
    await c.diagnostics(uri);
    const off = await c.hints(uri);
    c.settings = { model: 'llama-2-7b' };
    await c.rpc.sendNotification('workspace/didChangeConfiguration', { settings: {} });
    await c.diagnostics(uri);
    assert.equal(minimal.length, 1);
    assert.equal(minimal[0]?.position.line, 0);
    assert.equal(off.length, 0);
  });
});

describe('hover', () => {
  test('on the ZeRO stage: the answer and the "if you change it" deltas first, then formulas with every symbol defined', async () => {
    const { uri, text } = await openFixture('ds_zero2.json');
    const h = await c.hover(uri, posOf(text, '"stage"', 2));
    const md = h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
    const lines = md.split('\n').filter((l) => l.trim());
    assert.match(lines[0] ?? '', /^\*\*ShardLens\*\* · `zero_optimization\.stage` = `2`/);
    // The answer: the figures the key drives and the verdict.
    assert.match(lines[1] ?? '', /^parameters [\d.]+ GiB \+ gradients [\d.]+ GiB .* per GPU · (fits|does not fit|needs).* · step ≈ [\d.]+ m?s$/);
    // ZeRO-3 also shards the 2Ψ fp16 parameters (less memory) and adds a parameter all-gather (more traffic, §7), which
    // cannot make the step shorter.
    assert.equal(lines[2], 'If you change it:');
    assert.ok(lines.slice(3, 6).some((l) => /^- ZeRO stage 2 → 3: −[\d.]+ [GM]iB\/GPU → [\d.]+ GiB, (fits|does not fit) · \+[\d.]+ [GT]iB traffic\/step( · step [\d.]+ m?s → [\d.]+ m?s \(\+[\d.]+ %\))?$/.test(l)), md);
    // The step's operator terms follow the memory formulas, each with its formula, source and where its rates come from.
    assert.match(md, /Step ≈ [\d.]+ m?s\. The busiest stage's operator terms per step/);
    assert.match(md, /- GEMMs \(QKV, output, MLP, LM head, experts\) [\d.]+ m?s = `.*` \(.*; rates: GEMM: /);
    assert.ok(md.indexOf('If you change it:') < md.indexOf('---'), 'the formulas come after the deltas');
    assert.match(md, /- Gradients [\d.]+ GiB = `.*N_shard.*`/);
    // ZeRO-2 shards gradients and optimizer states over the 8 data-parallel GPUs, not the parameters (§5.2).
    assert.match(md, /- `N_shard` = `1 for parameters, 8 for gradients[^`]*`: GPUs the states are sharded over/);
    // No internal plan names, and the key's schema description (VS Code's JSON hover shows it) is not repeated.
    assert.doesNotMatch(md, /Plan input|`(training|parallel|cluster)\.[a-zA-Z.]+`/);
    assert.doesNotMatch(md, /DeepSpeed ZeRO optimization stage/i);
    assert.match(md, /\[More: the full derivation in the dashboard\]\(command:shardlens\.showDerivation\?/);
    // A ZeRO stage and a pipeline stage never share a bare word (issue 11): the peak is on "pipeline stage 0".
    assert.match(md, /Per GPU on pipeline stage 0 \(the peak stage\)/);
    assert.doesNotMatch(md.replace(/pipeline stage|ZeRO stage|peak stage/g, ''), /\bstage \d/);
  });

  test('on the context-parallel degree: the activations and logits it divides, and the step time', async () => {
    const { uri, text } = await openFixture('llama3_8b.toml');
    const h = await c.hover(uri, posOf(text, 'context_parallel_degree', 3));
    const md = h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
    const lines = md.split('\n').filter((l) => l.trim());
    assert.match(lines[0] ?? '', /`parallelism\.context_parallel_degree` = `1`/);
    // CP cuts each sequence into cp shards: the activations and logits per GPU follow it (Korthikanti et al. Table 2 / cp).
    assert.match(lines[1] ?? '', /^activations [\d.]+ GiB \+ output layer and loss [\d.]+ [GM]iB per GPU · .* · step ≈ [\d.]+ m?s$/);
    assert.match(md, /Step ≈ [\d.]+ m?s\. The busiest stage's operator terms per step/);
  });

  test('on a documented key that drives no figure: its documentation', async () => {
    const { uri, text } = await openFixture('ds_zero2.json');
    const h = await c.hover(uri, posOf(text, '"gradient_clipping"', 3));
    const md = h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
    assert.match(md, /`gradient_clipping` \(number\)/);
    assert.match(md, /does not use this key/);
  });

  test('on a flag whose value only the run gives: the assumption that stands in for it, first', async () => {
    // `--micro-batch-size $MBS` with a stated global batch: the estimate runs 1 sequence per GPU and lets the
    // accumulation follow (Megatron: global = micro × DP × accumulation), and the hover says so before the flag's docs.
    const uri = pathToFileURL(`${DIR}/runtime_micro.sh`).toString();
    const text = '#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 32 --hidden-size 4096 \\\n  --num-attention-heads 32 --seq-length 4096 --micro-batch-size $MBS --global-batch-size 1024 --bf16\n';
    const md = await hoverMarkdown(uri, text, 'shellscript', '--micro-batch-size', 3);
    const lines = md.split('\n').filter((l) => l.trim());
    assert.match(lines[1] ?? '', /^The estimate assumes `1`: .*set when the run starts.*global batch of 1024/, md);
    // The inlay hint after `$MBS` says the same where the value is written.
    const hints = (await c.hints(uri)) ?? [];
    const at = hintsAt(hints, text, '$MBS');
    assert.ok(at.some((l) => /^= 1 assumed/.test(l)), JSON.stringify(at));
  });

  test('on a Megatron-Bridge --recipe: the model the recipe builds, not one of the layout values it gives', async () => {
    // llama31_8b_pretrain_config sets CP 2, 8,192 tokens and 512 sequences (data/megatron-bridge/recipes.json); those
    // values come from the recipe's lines, so the launch's `--recipe` is not shown as "= 8192".
    const uri = pathToFileURL(`${DIR}/run_recipe.sh`).toString();
    const text = '#!/bin/bash\ntorchrun --nproc_per_node 8 scripts/training/run_recipe.py --recipe llama31_8b_pretrain_config train.micro_batch_size=2\n';
    const d = c.diagnostics(uri);
    await c.open(uri, text, 'shellscript');
    await d;
    const h = await c.hover(uri, posOf(text, 'llama31_8b', 2));
    const md = h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
    assert.match(md.split('\n')[0] ?? '', /^\*\*ShardLens\*\* · `--recipe` = `meta-llama\/Meta-Llama-3\.1-8B`$/, md);
  });

  test('on a torchtune switch: what the other setting does, and nothing the recipe would refuse', async () => {
    // A single-device Llama 3.1 8B full fine-tune (recipes/configs/llama3_1/8B_full_single_device.yaml, shortened).
    const body = (accum: number) => ['model:', '  _component_: torchtune.models.llama3_1.llama3_1_8b', 'tokenizer:',
      '  _component_: torchtune.models.llama3.llama3_tokenizer', '  max_seq_len: 4096', 'batch_size: 2',
      `gradient_accumulation_steps: ${accum}`, 'dtype: bf16', 'optimizer:', '  _component_: torch.optim.AdamW',
      'loss:', '  _component_: torchtune.modules.loss.LinearCrossEntropyLoss',
      'clip_grad_norm: null', 'compile: False', 'optimizer_in_bwd: False', 'enable_activation_checkpointing: True', ''].join('\n');
    const hover = async (uri: string, text: string, key: string) => {
      const d = c.diagnostics(uri);
      await c.open(uri, text, 'yaml');
      await d;
      const h = await c.hover(uri, posOf(text, key, 2));
      return h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
    };
    const one = body(1);
    const md = await hover('file:///ws/tt-switch/8B_full_single_device.yaml', one, 'optimizer_in_bwd');
    assert.match(md, /^\*\*ShardLens\*\* · `optimizer_in_bwd` = `false`/);
    // One weight's gradient at a time instead of all of them (torchtune optimizer_in_bwd): with the chunked loss the
    // peak is where the gradients are (the torchtune README's "+ optimizer in backward" row falls too).
    assert.match(md, /^- optimizer in the backward off → on: −[\d.]+ [GM]iB\/GPU → [\d.]+ GiB, fits/m, md);
    assert.match(md, /Steps each parameter in the backward/);
    // torchtune raises "Gradient accumulation is not supported with optimizer in bwd": no what-if to offer.
    const eight = await hover('file:///ws/tt-switch8/8B_full_single_device.yaml', body(8), 'optimizer_in_bwd');
    assert.doesNotMatch(eight, /If you change it/);
    const comp = await hover('file:///ws/tt-switch/8B_full_single_device.yaml', one, 'compile:');
    // Fused kernels: the step can only get shorter; the peak here is at the optimizer step, which compile leaves.
    assert.match(comp, /^- torch\.compile off → on: peak unchanged \([\d.]+ GiB\), fits · step [\d.]+ m?s → [\d.]+ m?s \(−[\d.]+ %\)$/m, comp);
    // The optimizer's implementation: with `fused: False` the foreach step holds one more state-sized list (its square
    // roots, torch/optim/adam.py _multi_tensor_adam), bf16 here: the fused step is lower, by at most that list,
    // 2 · 8,030,261,248 bytes = 14.96 GiB (Llama 3.1 8B's published count).
    const foreach = one.replace("  _component_: torch.optim.AdamW\n", "  _component_: torch.optim.AdamW\n  fused: False\n");
    const impl = await hover('file:///ws/tt-fused/8B_full_single_device.yaml', foreach, 'fused');
    const m = /^- optimizer step foreach → fused: −([\d.]+) GiB\/GPU → [\d.]+ GiB, fits/m.exec(impl);
    assert.ok(m, impl);
    // The hover shows three significant digits: 14.96 reads 15.0.
    assert.ok(Number(m[1]) > 0 && Number(m[1]) <= 15.0, m[1]);
  });

  test('on use_liger_kernel: Liger-Kernel off keeps the logits again', async () => {
    // The HF Trainer applies Liger's fused linear cross-entropy with its kernels (transformers trainer.py); off, the
    // logits of 4 × 4,096 tokens × 128,256 entries (Llama 3.2 3B) are made and kept: the peak can only rise.
    const uri = 'file:///ws/liger-hover/sft.yaml';
    const text = 'model_name_or_path: meta-llama/Llama-3.2-3B\nper_device_train_batch_size: 4\nmax_length: 4096\nbf16: true\ngradient_checkpointing: true\nuse_liger_kernel: true\n';
    const md = await hoverMarkdown(uri, text, 'yaml', 'use_liger_kernel', 2);
    assert.match(md, /^- Liger-Kernel on → off: \+[\d.]+ [GM]iB\/GPU → [\d.]+ GiB/m, md);
    assert.equal(md.match(/Liger-Kernel on → off/g)?.length, 1, 'offered once');
  });

  test('on a Megatron YAML field: the field as the file spells it, with its flag\'s documentation', async () => {
    // Megatron-LM's legacy --yaml-cfg layout (examples/gpt3/gpt_config.yaml): each field is the flag of that name.
    const uri = 'file:///ws/myaml/gpt_config.yaml';
    const text = 'language_model:\n  num_layers: 24\n  hidden_size: 1024\n  num_attention_heads: 16\n  attention_dropout: 0.0\n'
      + 'model_parallel:\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\nmicro_batch_size: 2\nglobal_batch_size: 128\nseq_length: 1024\n';
    const d = c.diagnostics(uri);
    await c.open(uri, text, 'yaml');
    await d;
    const md = async (needle: string) => {
      const h = await c.hover(uri, posOf(text, needle, 2));
      return h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
    };
    const layers = await md('num_layers');
    assert.match(layers, /^\*\*ShardLens\*\* · `num_layers` = `24`/, layers);
    assert.match(layers, /Transformer layers \(L\)\./);
    // L multiplies Ψ (every model state) and the activations of the stage (Korthikanti et al. 2022, Table 2 × L).
    assert.match(layers.split('\n').filter((l) => l.trim())[1] ?? '', /^parameters [\d.]+ [GM]iB( \+ [a-z0-9 ]+ [\d.]+ [GM]iB)* \+ activations [\d.]+ [GM]iB per GPU · /);
    assert.match(layers, /- `Ψ_rank` = `\d+`: parameters held by one GPU/);
    const dropout = await md('attention_dropout');
    assert.match(dropout, /`language_model\.attention_dropout` \(float\)/);
  });

  test('on a line without a known key there is no hover', async () => {
    const { uri } = await openFixture('ds_zero2.json');
    assert.equal(await c.hover(uri, { line: 0, character: 0 }), null);
  });
});

describe('code lenses', () => {
  test('the verdict, the step time and at most two actions; assumed inputs one click away', async () => {
    const { uri } = await openFixture('ds_zero2.json');
    const lenses = await c.lenses(uri);
    const titles = lenses.map((l) => l.command?.title ?? '');
    assert.ok(lenses.length <= 4, titles.join(' | '));
    // Nothing in a DeepSpeed JSON names the cluster or the sequence length: the verdict says it rests on assumed
    // inputs (counted when there are several), and opens them.
    assert.match(titles[0] ?? '', /^\$\(warning\) (needs|fits) .*(\(assumed\)|· \d+ assumed inputs)/);
    assert.equal(lenses[0]?.command?.command, 'shardlens.showAssumptions');
    const step = lenses.find((l) => /^step ≈ /.test(l.command?.title ?? ''));
    assert.equal(step?.command?.command, 'shardlens.simulateStep');
    assert.deepEqual(step?.command?.arguments, [uri]);
    assert.ok(lenses.some((l) => l.command?.command === 'shardlens.openDashboard' && l.command.title === 'Dashboard'));
    assert.ok(lenses.some((l) => /^Assumptions \(\d+\)$/.test(l.command?.title ?? '') && l.command?.command === 'shardlens.showAssumptions'));
  });

  test('a file that plans its steps: the step lens adds the run\'s wall-clock, and the steps key\'s hover its GPU-hours', async () => {
    // torchtitan [training] steps = 1000: wall-clock = 1000 × step time, GPU-hours = wall-clock × 8 GPUs / 3600 s.
    const { uri, text } = await openFixture('llama3_8b.toml');
    const title = (await c.lenses(uri)).map((l) => l.command?.title ?? '').find((t) => t.startsWith('step ≈ ')) ?? '';
    const m = /^step ≈ ([\d.]+) (ms|s) · 1,000 steps ≈ ([\d.]+) (min|h)$/.exec(title);
    assert.ok(m, title);
    const step = Number(m[1]) * (m[2] === 'ms' ? 1e-3 : 1);
    const run = Number(m[3]) * (m[4] === 'min' ? 60 : 3600);
    // Within the rounding of what is shown: half a minute of the wall-clock, half a unit of the step's third digit.
    assert.ok(Math.abs(run - 1000 * step) <= 30 + 1000 * step * 0.005, `${run} s vs 1000 × ${step} s`);
    const h = await c.hover(uri, posOf(text, 'steps', 2));
    const md = h && typeof h.contents === 'object' && 'value' in h.contents ? h.contents.value : '';
    const g = /1,000 steps × ([\d.]+) (ms|s) ≈ [\d.]+ (min|h) on 8 GPUs = ([\d.]+) GPU-hours \(the steps only: no evaluation/.exec(md);
    assert.ok(g, md);
    const s2 = Number(g[1]) * (g[2] === 'ms' ? 1e-3 : 1);
    assert.ok(Math.abs(Number(g[4]) / ((1000 * s2 * 8) / 3600) - 1) < 0.01, md);
    assert.match(md, /Step ≈ [\d.]+ m?s\. The busiest stage's operator terms per step/);
  });

  test('with a stored calibration for the GPU, the step lens says the step time is calibrated', async () => {
    const correction = { clusterId: 'h100-sxm', overheadBytes: 0, efficiency: 0.8, warnings: [], source: { device: 'd', mode: 'training log', worldSize: 8, createdAt: 'now', engine: 'torchtitan' } };
    const cal = await startClient({ cluster: { gpu: 'H100-SXM' }, calibration: { 'h100-sxm': correction } });
    try {
      const uri = uriOf('pretrain_llama.sh');
      const d = cal.diagnostics(uri);
      await cal.open(uri, read('pretrain_llama.sh'));
      await d;
      const step = (await cal.lenses(uri)).map((l) => l.command?.title ?? '').find((t) => t.startsWith('step ≈ '));
      assert.match(step ?? '', /^step ≈ [\d.]+ m?s \(calibrated\)/);
    } finally {
      cal.dispose();
    }
  });

  test('when the file and the settings give every deciding input, the verdict is plain and opens the dashboard', async () => {
    // The Megatron script states the model, batch shape and GPU count; the setting gives the GPU type.
    const bare = await startClient({ cluster: { gpu: 'H100-SXM' } });
    try {
      const uri = uriOf('pretrain_llama.sh');
      const d = bare.diagnostics(uri);
      await bare.open(uri, read('pretrain_llama.sh'));
      await d;
      const first = (await bare.lenses(uri))[0]?.command;
      assert.match(first?.title ?? '', /^\$\((check|error)\) (fits|does not fit): .* on 8×/);
      assert.equal(first?.command, 'shardlens.openDashboard');
    } finally {
      bare.dispose();
    }
  });
});

describe('completion', () => {
  test('DeepSpeed keys inside zero_optimization, with documentation', async () => {
    const text = '{\n  "zero_optimization": {\n    "\n  }\n}\n';
    const uri = 'file:///ws/complete/ds_config.json';
    await c.open(uri, text);
    const items = await c.completion(uri, { line: 2, character: 5 });
    const stage = items.find((i) => i.label === 'stage');
    assert.ok(stage, items.map((i) => i.label).join(','));
    assert.match(JSON.stringify(stage.documentation), /stage/i);
    assert.ok(items.some((i) => i.label === 'offload_optimizer'));
  });

  test('DeepSpeed values: the ZeRO stages', async () => {
    const text = '{\n  "zero_optimization": {\n    "stage": \n  }\n}\n';
    const uri = 'file:///ws/complete2/ds_config.json';
    await c.open(uri, text);
    const items = await c.completion(uri, { line: 2, character: 13 });
    assert.deepEqual(items.map((i) => i.label).filter((l) => /^\d$/.test(l)).sort(), ['0', '1', '2', '3']);
  });
});

describe('completion in other formats', () => {
  const CASES: readonly { name: string; file: string; text: string; line: number; character: number; want: string }[] = [
    { name: 'Megatron flags', file: 'train.sh', text: '#!/bin/bash\ntorchrun pretrain_gpt.py \\\n    --tensor-model-parallel-size 2 \\\n    --\n', line: 3, character: 6, want: '--pipeline-model-parallel-size' },
    { name: 'torchtitan keys in [parallelism]', file: 'train.toml', text: '[model]\nname = "llama3"\nflavor = "8B"\n\n[training]\nlocal_batch_size = 1\n\n[parallelism]\n\n', line: 8, character: 0, want: 'tensor_parallel_degree' },
    { name: 'Axolotl top-level keys', file: 'axolotl.yaml', text: 'base_model: meta-llama/Llama-3.1-8B\nsequence_len: 2048\nmicro_batch_size: 1\n\n', line: 3, character: 0, want: 'gradient_accumulation_steps' },
    // Megatron-Bridge override YAML: any field of the flag table, under any section (each field is a flag).
    { name: 'Megatron YAML fields under a section', file: 'override.yaml', text: 'model:\n  tensor_model_parallel_size: 2\n  \ntrain:\n  micro_batch_size: 1\nddp:\n  overlap_grad_reduce: true\n', line: 2, character: 2, want: 'pipeline_model_parallel_size' },
    { name: 'Hugging Face config.json keys', file: 'config.json', text: '{\n  "model_type": "llama",\n  "hidden_size": 4096,\n  "num_hidden_layers": 32,\n  "\n}\n', line: 4, character: 3, want: 'num_key_value_heads' },
    { name: 'LitGPT keys', file: 'lora.yaml', text: 'checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3.1-8B\ntrain:\n  micro_batch_size: 2\n\n', line: 3, character: 0, want: 'lora_dropout' },
    { name: 'torchtune recipe keys', file: 'torchtune.yaml', text: 'model:\n  _component_: torchtune.models.llama3_1.llama3_1_8b\nbatch_size: 2\n\n', line: 3, character: 0, want: 'enable_activation_offloading' },
    { name: 'torchtune LoRA keys under model', file: 'lora.yaml', text: 'model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n  \nbatch_size: 2\n', line: 2, character: 2, want: 'lora_attn_modules' },
  ];
  for (const k of CASES) {
    test(k.name, async () => {
      const uri = `file:///ws/complete-${k.file}/${k.file}`;
      await c.open(uri, k.text);
      const items = await c.completion(uri, { line: k.line, character: k.character });
      const hit = items.find((i) => i.label === k.want);
      assert.ok(hit, `${k.want} not among ${items.map((i) => i.label).slice(0, 20).join(', ')}`);
      assert.ok(hit.documentation, 'no documentation');
    });
  }
});

describe('notifications', () => {
  test('shardlens/analysisChanged summarises each analysed version; closing clears the diagnostics', async () => {
    const uri = 'file:///ws/notify/ds_config.json';
    const d = c.diagnostics(uri);
    await c.open(uri, '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": { "stage": 3 }\n}\n');
    await d;
    const find = () => c.notifications.filter((x) => x.method === LspMethods.analysisChanged).some((x) => (x.params as AnalysisChangedParams).uri === uri);
    for (let i = 0; i < 2000 && !find(); i++) await new Promise((r) => setTimeout(r, 5));
    const n = c.notifications.filter((x) => x.method === LspMethods.analysisChanged).map((x) => x.params as AnalysisChangedParams).find((p) => p.uri === uri);
    assert.ok(n, 'no shardlens/analysisChanged');
    assert.equal(n.version, 1);
    assert.equal(typeof n.fits, 'boolean');
    assert.ok((n.peakBytes ?? 0) > 0 && (n.gpuMemoryBytes ?? 0) > 0);
    const cleared = c.diagnostics(uri);
    await c.close(uri);
    assert.deepEqual(await cleared, []);
  });
});

describe('a script that trains nothing', () => {
  test('a data preprocessing script gets one info and no verdict: no hints, no lenses, a status summary that says it trains nothing', async () => {
    // Megatron-LM's tools/preprocess_data.py tokenises a corpus: the script names no model, batch or layout, so any
    // verdict would rest on assumed defaults alone.
    const uri = 'file:///ws/prep/preprocess.sh';
    const text = '#!/bin/bash\npython tools/preprocess_data.py --input data.json --output-prefix gpt2 --workers 8\n';
    const d = c.diagnostics(uri);
    await c.open(uri, text, 'shellscript');
    const diags = await d;
    assert.deepEqual(diags.map((x) => [x.code, x.severity]), [['no-training-command', 3]]);
    assert.match(String(diags[0].message), /nothing to estimate/);
    assert.deepEqual((await c.hints(uri)).map(label), []);
    assert.deepEqual((await c.lenses(uri)).map((l) => l.command?.title ?? ''), []);
    const a = await c.analysis(uri);
    assert.equal(a?.plan, undefined);
    assert.equal(a?.memory, undefined);
    // The status bar's summary says why there is no figure, so it does not ask for more input.
    const summaries = () => c.notifications.filter((x) => x.method === LspMethods.analysisChanged).map((x) => x.params as AnalysisChangedParams).filter((p) => p.uri === uri);
    for (let i = 0; i < 2000 && !summaries().length; i++) await new Promise((r) => setTimeout(r, 5));
    assert.deepEqual(summaries().map((p) => [p.fits, p.noTraining]), [[null, true]]);
  });
});

describe('shardlens/analysis', () => {
  test('returns the plan, memory with the replicated baseline, collectives, step time and assumptions', async () => {
    const { uri } = await openFixture('pretrain_llama.sh');
    const r = await c.analysis(uri);
    assert.ok(r);
    assert.equal(r.format, 'megatron-script');
    assert.equal(r.plan?.parallel.tp, 2);
    assert.equal(r.plan?.parallel.pp, 2);
    // 8 GPUs / (TP 2 · PP 2) = DP 2.
    assert.equal(r.plan?.parallel.dp, 2);
    assert.equal(r.memory?.stages.length, 2);
    assert.equal(r.replicated?.stages.length, 2);
    assert.ok(r.collectives.some((x) => x.group === 'tp') && r.collectives.some((x) => x.group === 'pp'));
    assert.ok((r.stepTime?.stepSeconds ?? 0) > 0);
    // The simulation is fetched on its own (shardlens/simulate) when a view needs it, never with every analysis.
    assert.equal((r as unknown as Record<string, unknown>).simulation, undefined);
    assert.ok(Array.isArray(r.assumptions) && Array.isArray(r.problems));
  });

  test('says what was read: training, model and cluster inputs with their sources (issue 12)', async () => {
    const { uri, text } = await openFixture('dschat_step1.sh');
    const r = await c.analysis(uri);
    const i = r?.inputs;
    assert.ok(i);
    // The file states micro batch 4, sequence 512, ZeRO via $ZERO_STAGE and 8 GPUs (deepspeed --num_gpus 8).
    assert.equal(i.training.microBatch.value, 4);
    assert.equal(i.training.microBatch.source.kind, 'explicit');
    assert.equal(i.training.microBatch.source.range?.start.line, posOf(text, '--per_device_train_batch_size', 0).line);
    assert.equal(i.training.seqLen.value, 512);
    assert.equal(i.cluster.gpusPerNode.value, 8);
    assert.match(i.cluster.gpu.source.kind, /assumed/);
    // Llama 2 7B has 32 layers (Touvron et al. 2023, Table 1), from the model the file names.
    assert.equal(i.model.layers.value, 32);
  });

  test('shardlens/simulate: 1F1B over 2 stages with the bubble of the closed form', async () => {
    const { uri } = await openFixture('pretrain_llama.sh');
    const sim = await c.rpc.sendRequest<AnalysisSimulation | null>(LspMethods.simulate, { uri });
    assert.ok(sim?.ok);
    assert.equal(sim.result.stages.length, 2);
    // Narayanan et al. 2021 §2.2: the 1F1B bubble is (p − 1)/m; m = 128 / (1 × DP 2) = 64 micro-batches, p = 2.
    // The stages are not equal (embedding on the first, LM head on the last), so allow a factor of two.
    const closed = (2 - 1) / 64;
    assert.ok(sim.result.bubbleFraction > closed / 2 && sim.result.bubbleFraction < closed * 2, String(sim.result.bubbleFraction));
  });

  test('reads a closed file from disk, and returns null for a file that does not exist', async () => {
    // No test opens ds_z2_auto.json; it sets ZeRO stage 2.
    const r = await c.analysis(uriOf('ds_z2_auto.json'));
    assert.equal(r?.format, 'deepspeed');
    assert.equal(r?.version, null);
    assert.equal(r?.plan?.parallel.sharding.stage, 2);
    assert.equal(await c.analysis('file:///nowhere/ds_config.json'), null);
  });
});
