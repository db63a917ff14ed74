/**
 * One test per diagnostic kind, each on a small document: the code, the severity and the range (the key the problem
 * is about) over the in-process LSP connection.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Diagnostic } from 'vscode-languageserver';
import { startClient, type Client } from './harness';

let c: Client;
before(async () => {
  // A DeepSpeed JSON does not name its model or cluster; the editor settings supply them (Llama 2 7B, Touvron et al.
  // 2023; 8 × H100 SXM), so nothing that decides fit is assumed.
  c = await startClient({ model: 'llama-2-7b', cluster: { gpu: 'H100-SXM', gpusPerNode: 8, nodes: 1 } });
});
after(() => c.dispose());

let n = 0;
async function diagnose(name: string, text: string): Promise<Diagnostic[]> {
  const uri = `file:///ws/d${n++}/${name}`;
  const d = c.diagnostics(uri);
  await c.open(uri, text);
  return d;
}

/** Text of the line a diagnostic starts on. */
function lineOf(text: string, d: Diagnostic): string {
  return text.split('\n')[d.range.start.line] ?? '';
}

interface Case {
  readonly name: string;
  readonly file: string;
  readonly text: string;
  readonly code: string;
  readonly severity: 1 | 2 | 3;
  /** A string the diagnostic's first line must contain (the key it belongs to). */
  readonly at: string;
}

const SCRIPT = readFileSync('test/server/fixtures/pretrain_llama.sh', 'utf8');
// A small Megatron MoE launch, one flag group per line so each diagnostic's line is the flag's.
const MOE_SCRIPT = [
  'torchrun --nproc_per_node 8 pretrain_gpt.py \\',
  '    --num-layers 8 --hidden-size 2048 --num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 \\',
  '    --num-experts 64 --moe-router-topk 8 --moe-ffn-hidden-size 768 --expert-model-parallel-size 8 \\',
  '    --micro-batch-size 1 --global-batch-size 64 --bf16',
  '',
].join('\n');

// ZeRO paper §3: replicated mixed-precision Adam holds 16 bytes per parameter; a 7B-parameter model on 80 GB GPUs
// cannot hold 16·7e9 = 112 GB, so stage 0 does not fit whatever the activations.
const CASES: readonly Case[] = [
  {
    name: 'peak above GPU memory', file: 'ds_config.json', code: 'does-not-fit', severity: 1, at: '"stage"',
    text: '{\n  "train_micro_batch_size_per_gpu": 16,\n  "zero_optimization": {\n    "stage": 0\n  }\n}\n',
  },
  {
    // DeepSpeed's ZeRO config is a pydantic model with extra="forbid" (deepspeed/runtime/zero/config.py).
    name: 'unknown key in a strict DeepSpeed section', file: 'ds_config.json', code: 'ds-unknown-key', severity: 1, at: '"stagee"',
    text: '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": {\n    "stage": 2,\n    "stagee": 3\n  }\n}\n',
  },
  {
    name: 'fp16 and bf16 both enabled', file: 'ds_config.json', code: 'ds-fp16-bf16', severity: 1, at: 'enabled',
    text: '{\n  "train_micro_batch_size_per_gpu": 1,\n  "fp16": { "enabled": true },\n  "bf16": { "enabled": true },\n  "zero_optimization": { "stage": 2 }\n}\n',
  },
  {
    // cpu_offload was replaced by offload_optimizer (DeepSpeed zero/config.py, deprecated field).
    name: 'deprecated key', file: 'ds_config.json', code: 'ds-deprecated-key', severity: 2, at: '"cpu_offload"',
    text: '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": {\n    "stage": 2,\n    "cpu_offload": true\n  }\n}\n',
  },
  {
    // The HF integration (transformers integrations/deepspeed.py) fills "auto" only for the keys it knows; the ZeRO
    // stage is not one of them, so DeepSpeed receives the string and rejects it.
    name: 'unresolved "auto"', file: 'ds_config.json', code: 'ds-auto-unresolved', severity: 2, at: '"auto"',
    text: '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": {\n    "stage": "auto"\n  }\n}\n',
  },
  {
    // DeepSpeed runtime/config.py: train_batch_size = micro × accumulation × world size; 4 × 8 × 8 = 256 ≠ 100.
    name: 'batch identity broken', file: 'ds_config.json', code: 'batch-identity', severity: 1, at: 'train_',
    text: '{\n  "train_batch_size": 100,\n  "train_micro_batch_size_per_gpu": 4,\n  "gradient_accumulation_steps": 8,\n  "zero_optimization": { "stage": 2 }\n}\n',
  },
  {
    // Megatron splits attention heads over TP ranks: 32 heads cannot be split 3 ways.
    name: 'TP does not divide the heads', file: 'pretrain.sh', code: 'tp-divides-heads', severity: 1, at: 'TP_SIZE',
    text: SCRIPT.replace('TP_SIZE=${TP_SIZE:-2}', 'TP_SIZE=${TP_SIZE:-3}'),
  },
  {
    // Pipeline stages hold whole layers: 32 layers over 3 stages is uneven without an explicit split.
    name: 'PP does not divide the layers', file: 'pretrain.sh', code: 'pp-divides-layers', severity: 1, at: 'PP_SIZE',
    text: SCRIPT.replace('PP_SIZE=2', 'PP_SIZE=3').replace('GPUS_PER_NODE=8', 'GPUS_PER_NODE=6'),
  },
  {
    // gpt-oss's attention sinks (Megatron softmax_type learnable) are timed as plain attention: a warning at the flag.
    name: 'attention sinks timed as plain attention', file: 'pretrain_moe.sh', code: 'attention-sink-timing', severity: 2, at: '--softmax-type',
    text: MOE_SCRIPT.replace('--bf16', '--bf16 \\\n    --softmax-type learnable'),
  },
  {
    // A full-iteration CUDA graph takes the host out of the step: the MoE note is an info at the graph flag.
    name: 'MoE under a full-iteration CUDA graph', file: 'pretrain_moe.sh', code: 'moe-host-timing', severity: 3, at: '--cuda-graph-impl',
    text: MOE_SCRIPT.replace('--bf16', '--bf16 \\\n    --cuda-graph-impl full_iteration'),
  },
  {
    // Without one, the host work of routing is left out of a dropless MoE step: a warning at the expert count.
    name: 'MoE host work left out', file: 'pretrain_moe.sh', code: 'moe-host-timing', severity: 2, at: '--num-experts',
    text: MOE_SCRIPT,
  },
  {
    // Axolotl's multipack keeps each sample's attention to itself: attention is timed for whole sequences (an info).
    name: 'packed samples timed as whole sequences', file: 'axolotl.yaml', code: 'packed-attention-timing', severity: 3, at: 'sample_packing',
    text: 'base_model: meta-llama/Llama-2-7b-hf\nsequence_len: 4096\nsample_packing: true\nflash_attention: true\nmicro_batch_size: 1\ngradient_accumulation_steps: 4\nbf16: true\n',
  },
  {
    name: 'FP8 attention timed at 16-bit rates', file: 'pretrain_moe.sh', code: 'megatron-fp8-attention-timing', severity: 2, at: '--fp8-dot-product-attention',
    text: MOE_SCRIPT.replace('--bf16', '--bf16 --fp8-format e4m3 \\\n    --fp8-dot-product-attention'),
  },
  {
    // torch.optim.AdamW without fused=True steps with foreach (torch/optim/adam.py): a 3B bf16 full fine-tune with
    // activation checkpointing peaks at that step, one bf16 state (6 GB) above its weights, gradients and states.
    name: 'foreach AdamW step as the peak', file: '3B_full_single_device.yaml', code: 'foreach-step-peak', severity: 3, at: 'torch.optim.AdamW',
    text: 'model:\n  _component_: torchtune.models.llama3_2.llama3_2_3b\nbatch_size: 1\ndtype: bf16\nenable_activation_checkpointing: True\n'
      + 'tokenizer:\n  max_seq_len: 1024\noptimizer:\n  _component_: torch.optim.AdamW\n  lr: 2e-5\n',
  },
  {
    // The Trainer's accumulation under FSDP2: every micro-batch but the last keeps the whole unsharded gradient
    // (accelerator.no_sync, FSDPParam.to_accumulated_grad_if_needed), said at the accumulation key.
    name: 'FSDP2 gradients carried unsharded under no_sync', file: 'axolotl.yaml', code: 'no-sync-gradients', severity: 3, at: 'gradient_accumulation_steps',
    text: 'base_model: meta-llama/Llama-3.1-8B\nsequence_len: 2048\nmicro_batch_size: 1\ngradient_accumulation_steps: 4\nbf16: true\n'
      + 'gradient_checkpointing: true\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n',
  },
  {
    // Megatron ties the output layer to the input embedding unless --untie-embeddings-and-output-weights
    // (megatron/training/arguments.py); Llama 3 8B (tie_word_embeddings false) has its own: an info at the hidden size.
    name: 'a released shape tied by Megatron\'s default', file: 'pretrain_llama3.sh', code: 'tied-head-untied-shape', severity: 3, at: '--hidden-size',
    text: readFileSync('test/server/fixtures/pretrain_llama3_tied.sh', 'utf8'),
  },
];

describe('diagnostics', () => {
  for (const k of CASES) {
    test(k.name, async () => {
      const ds = await diagnose(k.file, k.text);
      const d = ds.find((x) => x.code === k.code);
      assert.ok(d, `no ${k.code} among ${ds.map((x) => x.code).join(', ')}`);
      assert.equal(d.severity, k.severity);
      assert.equal(d.source, 'shardlens');
      assert.ok(lineOf(k.text, d).includes(k.at), `${k.code} is on "${lineOf(k.text, d)}", expected the line with ${k.at}`);
    });
  }

  test('peak above GPU memory names the peak and the GPU', async () => {
    const ds = await diagnose('ds_config.json', CASES[0].text);
    const d = ds.find((x) => x.code === 'does-not-fit');
    assert.match(String(d?.message), /^Does not fit: needs ~[\d.]+ GiB\/GPU, .*H100.* has [\d.]+ GiB/);
  });

  test('resting on assumed inputs, "does not fit" is a warning that names them, with fixes that set them', async () => {
    // The same file with no cluster in the settings: the GPU type and count are assumed (shared/plan/resolve.ts).
    const bare = await startClient({ model: 'llama-2-7b' });
    try {
      const uri = 'file:///ws/assumed/ds_config.json';
      const d = bare.diagnostics(uri);
      await bare.open(uri, CASES[0].text);
      const fit = (await d).find((x) => x.code === 'does-not-fit');
      assert.ok(fit);
      assert.equal(fit.severity, 2, 'a warning, not an error');
      assert.match(String(fit.message), /^Needs ~[\d.]+ GiB\/GPU of [\d.]+ GiB if 8×.*H100.* \(assumed\) — set it\.$/);
      const fixes = await bare.actions(uri, [fit]);
      assert.equal(fixes[0]?.command?.command, 'shardlens.selectCluster', fixes.map((x) => x.title).join(' | '));
      assert.equal(fixes[0]?.isPreferred, true);
    } finally {
      bare.dispose();
    }
  });

  test('a world-size problem lands on the parallelism keys, not on a batch key', async () => {
    // nanotron runs DP × TP × PP processes (dp 4 × tp 2 × pp 1 = 8); a 16-GPU world cannot hold that layout.
    const sized = await startClient({ model: 'llama-2-7b', worldSize: 16, cluster: { gpu: 'H100-SXM' } });
    try {
      const text = readFileSync('test/server/fixtures/nanotron.yaml', 'utf8');
      const uri = 'file:///ws/world/nanotron.yaml';
      const d = sized.diagnostics(uri);
      await sized.open(uri, text);
      const w = (await d).find((x) => x.code === 'world-size-mismatch');
      assert.ok(w, 'no world-size-mismatch');
      assert.match(lineOf(text, w), /^\s*(tp|pp|dp):/, `on "${lineOf(text, w)}"`);
    } finally {
      sized.dispose();
    }
  });

  test('a DeepSpeed file named by a YAML but missing is one warning at the reference, saying what is unknown', async () => {
    const text = 'model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: full\ndeepspeed: ds_z3_missing.json\nper_device_train_batch_size: 1\nbf16: true\n';
    const ds = await diagnose('llamafactory.yaml', text);
    const missing = ds.filter((x) => x.code === 'reference-missing');
    assert.equal(missing.length, 1);
    assert.equal(missing[0].severity, 2);
    assert.ok(lineOf(text, missing[0]).startsWith('deepspeed:'), `on "${lineOf(text, missing[0])}"`);
    assert.match(String(missing[0].message), /ZeRO stage, optimizer and parameter offload.* are therefore unknown: the estimate uses no ZeRO sharding/);
    const fit = ds.find((x) => x.code === 'does-not-fit');
    if (fit) assert.equal(fit.severity, 2, 'the verdict rests on the missing file');
  });

  test('LLaMA-Factory\'s own examples/deepspeed/ds_z3_config.json, absent: ZeRO-3 as an assumption, said at the reference', async () => {
    // LLaMA-Factory examples/deepspeed/ds_z3_config.json (hiyouga/LLaMA-Factory at ff6d4d12e): zero_optimization.stage 3, no offload.
    const text = 'model_name_or_path: meta-llama/Llama-2-7b-hf\nstage: sft\nfinetuning_type: full\ndeepspeed: examples/deepspeed/ds_z3_config.json\nper_device_train_batch_size: 1\nbf16: true\n';
    const ds = await diagnose('llamafactory.yaml', text);
    assert.equal(ds.filter((x) => x.code === 'reference-missing').length, 0);
    const bundled = ds.filter((x) => x.code === 'reference-bundled');
    assert.equal(bundled.length, 1);
    assert.equal(bundled[0].severity, 2);
    assert.ok(lineOf(text, bundled[0]).startsWith('deepspeed:'), `on "${lineOf(text, bundled[0])}"`);
    assert.match(String(bundled[0].message), /read as LLaMA-Factory's file of that name \(ZeRO-3\)/);
    const fit = ds.find((x) => x.code === 'does-not-fit');
    if (fit) assert.match(String(fit.message), /ZeRO stage 3/);
  });

  test('a fitting config has no does-not-fit', async () => {
    const ds = await diagnose('ds_config.json', '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": { "stage": 3 }\n}\n');
    assert.equal(ds.filter((x) => x.code === 'does-not-fit').length, 0);
  });

  test('broken JSON gives a syntax error and no crash', async () => {
    const ds = await diagnose('ds_config.json', '{\n  "train_micro_batch_size_per_gpu": 1,\n  "zero_optimization": { "stage": \n');
    assert.ok(ds.some((x) => x.code === 'syntax'));
  });
});
