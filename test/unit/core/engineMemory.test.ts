// Engine-specific memory read from real launch flags (issue 13 §3), each expected value from first principles with
// the engine source named: Megatron's fused cross-entropy, --fp8-param-gather, Transformer Engine's fp8 GEMM inputs,
// --grad-reduce-in-bf16, and torchtitan's compiled loss.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { estimateMemory } from '../../../shared/memory/estimate';
import type { Plan } from '../../../shared/plan/types';
import { planOfText } from './helpers';

const planOf = (name: string, text: string, gpus = '8xH100'): Promise<Plan> => planOfText(name, text, gpus);

/** A Megatron Llama-3-8B launch on one node (Megatron-LM examples/llama shape), with extra flags. */
const megatron = (extra: string) => [
  'torchrun --nproc_per_node 8 pretrain_gpt.py', '--num-layers 32 --hidden-size 4096 --ffn-hidden-size 14336',
  '--num-attention-heads 32 --group-query-attention --num-query-groups 8 --kv-channels 128 --swiglu',
  '--normalization RMSNorm --untie-embeddings-and-output-weights --disable-bias-linear --position-embedding-type rope',
  '--seq-length 8192 --max-position-embeddings 8192 --micro-batch-size 1 --global-batch-size 128 --bf16',
  '--attention-dropout 0.0 --hidden-dropout 0.0 --use-distributed-optimizer --vocab-size 128256 --tokenizer-type NullTokenizer',
  extra,
].join(' \\\n  ') + '\n';

describe('engine memory from launch flags', () => {
  test('--cross-entropy-loss-fusion is read: no fp32 copy of the logits (megatron/core/fusions/fused_cross_entropy.py)', async () => {
    const plain = await planOf('plain.sh', megatron(''));
    const fused = await planOf('fused.sh', megatron('--cross-entropy-loss-fusion'));
    assert.equal(fused.training.lossFusion, 'native');
    // n = s·V logits. The loss's forward copies: vocab-parallel 2n bf16 + 4n fp32 softmax, fused 2n; its backward adds
    // 2n in both (the bf16 cast of the in-place gradient; the fused gradient beside the saved logits): 4n less in all.
    const n = 8192 * 128_256;
    const last = (p: Plan) => estimateMemory(p).stages[0].peaks!.activations + estimateMemory(p).stages[0].peaks!.temporaries;
    assert.ok(Math.abs(last(plain) - last(fused) - 4 * n) < 0.01 * n, `${(last(plain) - last(fused)) / n}·n`);
  });

  test('--fp8-param-gather keeps the linear weights in 1 byte, the embedding and head in 2 (TE Float8Tensor parameters)', async () => {
    const bf16 = estimateMemory(await planOf('fp8.sh', megatron('--fp8-format hybrid'))).stages[0];
    const fp8 = estimateMemory(await planOf('fp8pg.sh', megatron('--fp8-format hybrid --fp8-param-gather'))).stages[0];
    // Linear weights of Llama-3-8B: 32 · (2·4096² + 2·4096·1024 + 3·4096·14,336) = 6,979,321,856; one byte fewer each
    // in the parameters and one byte fewer in the fp8 cache (the weight is the fp8 copy; only its transpose is extra).
    const linear = 32 * (2 * 4096 ** 2 + 2 * 4096 * 1024 + 3 * 4096 * 14_336);
    const norms = 32 * 2 * 4096;
    assert.ok(Math.abs(bf16.terms.parameters!.bytes - fp8.terms.parameters!.bytes - (linear + norms)) < 1e-6 * linear);
    assert.ok(Math.abs(bf16.terms.fp8WeightCache!.bytes - fp8.terms.fp8WeightCache!.bytes - (linear + norms)) < 1e-6 * linear);
  });

  test('Transformer Engine saves the fp8 casts of the GEMM inputs: 3·sbh + sb·f bytes fewer per layer (Llama-3-8B)', async () => {
    const bf16 = estimateMemory(await planOf('bf16.sh', megatron(''))).stages[0];
    const fp8 = estimateMemory(await planOf('fp8b.sh', megatron('--fp8-format hybrid'))).stages[0];
    // QKV input, MLP input and projection input (h = a·d = 4096) and the fc2 input (f = 14,336), 1 byte fewer each.
    const sb = 8192;
    const perLayer = 3 * sb * 4096 + sb * 14_336;
    assert.equal(bf16.peaks!.activations - fp8.peaks!.activations, 32 * perLayer);
  });

  test('--grad-reduce-in-bf16: a bf16 main_grad, and the optimizer step\'s fp32 copy of the shard exists only at the step', async () => {
    const s = estimateMemory(await planOf('bf16grad.sh', megatron('--grad-reduce-in-bf16'))).stages[0];
    const psi = s.parametersPerRank;
    assert.equal(s.terms.gradients!.bytes, 2 * psi);
    // The fp32 copy is 4 bytes per master parameter (Ψ/8 each): not live with the activations at the loss peak.
    assert.equal(s.terms.gradAccumBuffer, undefined);
  });

  test('torchtitan: compile.components with "loss" compiles the loss (its backward\'s temporaries 2n instead of the eager 8n)', async () => {
    const toml = (components: string) => `[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\nseq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 8\n[activation_checkpoint]\nmode = "full"\n[compile]\nenable = true\n${components}`;
    const eager = await planOf('eager.toml', toml('components = ["model"]\n'));
    const compiled = await planOf('compiled.toml', toml('components = ["model", "loss"]\n'));
    assert.equal(eager.training.lossFusion, 'none');
    assert.equal(compiled.training.lossFusion, 'compiled');
    // Without components torchtitan compiles both (config/job_config.py Compile.components default ["model", "loss"]),
    // and so did training.compile from April 2025 (build_loss_fn, PR #1033); compile off leaves the loss eager.
    const plain = await planOf('plain.toml', toml(''));
    assert.equal(plain.training.lossFusion, 'compiled');
    assert.equal(plain.sources['training.lossFusion']?.kind, 'derived');
    const older = await planOf('older.toml', toml('').replace('[compile]\nenable = true\n', '').replace('seq_len = 8192\n', 'seq_len = 8192\ncompile = true\n'));
    assert.equal(older.training.compile, true);
    assert.equal(older.training.lossFusion, 'compiled');
    assert.notEqual((await planOf('off.toml', toml('').replace('enable = true', 'enable = false'))).training.lossFusion, 'compiled');
    const t = (p: Plan) => estimateMemory(p).stages[0].peaks!.temporaries;
    const n = 8192 * 128_256;
    // Eager: nll_loss's and log_softmax's fp32 gradients, 8n; compiled: the logits' bf16 gradient, 2n (+ the per-token
    // logsumexp), next to the head's unsharded bf16 weight gradient as FSDP2 makes it, 2·V·h = 1n at s = h·2 = 8192.
    assert.ok(Math.abs(t(eager) - 8 * n) < 0.01 * n && Math.abs(t(compiled) - 3 * n) < 0.01 * n, `${t(eager) / n}·n, ${t(compiled) / n}·n`);
  });
});
