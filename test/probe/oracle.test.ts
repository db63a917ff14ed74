// The fake-tensor oracle (probe/shardlens_oracle.py) on the pinned torch 2.x: what it reports for model states equals
// first principles for each engine's precision regime, and bad input (no torch, torch < 2.4, a layout it cannot build)
// gives a clear message and exit code 2 with nothing written. Skipped with a message when no Python with torch ≥ 2.4
// exists; fails instead when CI=true.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkTorch, ci, oracleMissing, oraclePython } from './fixtures/python';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countParams } from '../../shared/model/params';
import { makePlan } from '../../shared/plan/defaults';
import type { Plan } from '../../shared/plan/types';
import { exportOraclePlan } from '../../validation/torch/oraclePlan';
import { findOraclePython, isOracleFailure, runOracle } from '../../validation/torch/oracleRun';
import type { OraclePlan, OracleReport } from '../../validation/torch/oracleTypes';
import { LLAMA3_8B } from './fixtures/plans';

const python = oraclePython, missing = oracleMissing, check = checkTorch;
if (!python && !ci) console.log(`# oracle tests skipped: ${missing}`);

/** A 2-layer Llama-3-8B-wide model: fake tensors cost nothing, so the full width is kept. */
const MODEL = { ...LLAMA3_8B, layers: 2 };
const PSI = countParams(MODEL).parameters;

function plan(engine: Plan['engine'], style: Plan['parallel']['sharding']['style'], dp: number, extra: { precision?: Plan['training']['precision'] } = {}): Plan {
  return makePlan({
    engine, model: MODEL,
    training: { microBatch: 1, seqLen: 1024, precision: extra.precision ?? 'bf16-mixed', optimizer: 'adamw', gradDtype: engine === 'megatron' ? 'fp32' : 'bf16' },
    parallel: { dp, sharding: { style, stage: style === 'fsdp2' ? 3 : style === 'megatron-distopt' ? 1 : 0 } },
  });
}

function oraclePlanOf(p: Plan): OraclePlan {
  const e = exportOraclePlan(p);
  if ('code' in e) throw new Error(e.message);
  return e.oraclePlan;
}

describe('fake-tensor oracle (torch ≥ 2.4)', { skip: ci ? false : !python }, () => {
  let reports: OracleReport[] = [];
  before(async () => {
    if (!python) assert.fail(`CI=true but ${missing}`);
    const out = await runOracle([
      oraclePlanOf(plan('fsdp2', 'fsdp2', 8)),
      oraclePlanOf(plan('megatron', 'megatron-distopt', 8)),
      oraclePlanOf(plan('ddp', 'ddp', 4)),
      oraclePlanOf(plan('fsdp2', 'fsdp2', 4, { precision: 'bf16' })),
      oraclePlanOf(makePlan({ engine: 'deepspeed', model: MODEL, training: { microBatch: 1, seqLen: 1024, precision: 'bf16-mixed', optimizer: 'adamw' }, parallel: { dp: 8, sharding: { style: 'deepspeed', stage: 2 } } })),
    ], { python: python!, timeoutMs: 300_000 });
    assert.ok(!isOracleFailure(out), isOracleFailure(out) ? `${out.code}: ${out.message}\n${out.outputTail ?? ''}` : '');
    reports = out as OracleReport[];
    for (const r of reports) assert.ok(r.ok, `${r.name}: ${r.error?.code}: ${r.error?.message}`);
  });

  // Every Llama-3 dimension is a multiple of 8, so FSDP2's dim-0 shards carry no padding.
  test('FSDP2 (torchtitan regime): fp32 shards 4Ψ/N and AdamW states 8Ψ/N (+ 4-byte step per tensor)', () => {
    const s = reports[0].ranks[0].static;
    assert.equal(s.parameters, (4 * PSI) / 8);
    const tensors = 2 * 9 + 3; // per layer: 2 norms + q, k, v, o + w1, w2, w3; embedding, final norm, output
    assert.equal(s.optimizerStates, (8 * PSI) / 8 + 4 * tensors);
  });

  test('Megatron with the distributed optimizer: bf16 weights 2Ψ, fp32 main_grad 4Ψ, fp32 master 4Ψ/d', () => {
    const s = reports[1].ranks[0].static;
    assert.equal(s.parameters, 2 * PSI);
    assert.equal(s.mainGrad, 4 * PSI);
    assert.equal(s.masterWeights, 4 * Math.ceil(PSI / 8));
    assert.equal(s.optimizerStates, 8 * Math.ceil(PSI / 8) + 4);
    // The main_grad buffer is the gradient: its peak is at least that buffer, and no second fp32 copy exists.
    const g = reports[1].ranks[0].peaks.gradients;
    assert.ok(g >= 4 * PSI && g < 4 * PSI + 2 * PSI, `gradients peak ${g}`);
  });

  test('DDP with autocast: fp32 weights 4Ψ, AdamW 8Ψ, one bucket copy of the fp32 gradients 4Ψ', () => {
    const s = reports[2].ranks[0].static;
    assert.equal(s.parameters, 4 * PSI);
    assert.equal(s.engineBuffers, 4 * PSI);
    assert.ok(reports[2].ranks[0].peaks.gradients >= 4 * PSI);
  });

  test('bf16-true (torchtune/LitGPT): bf16 shards 2Ψ/N and bf16 AdamW states 4Ψ/N', () => {
    const s = reports[3].ranks[0].static;
    assert.equal(s.parameters, (2 * PSI) / 4);
    assert.ok(Math.abs(s.optimizerStates - (4 * PSI) / 4) < 1024, `optimizer ${s.optimizerStates}`);
  });

  test('DeepSpeed runs its own engine: ZeRO-2 bf16 flat group 2Ψ, fp32 master partition 4P, AdamW 8P (P = ⌈Ψ/2N⌉·2)', () => {
    const r = reports[4].ranks[0];
    assert.ok(r.notes.some((n) => /DeepSpeed \d+\.\d+\.\d+ engine, ZeRO-2, DeepSpeedZeroOptimizer/.test(n)), r.notes.join('; '));
    // deepspeed/runtime/zero/stage_1_and_2.py: the flat group is padded to a multiple of 2N and split in N partitions.
    const P = Math.ceil(PSI / 16) * 2;
    assert.equal(r.static.parameters, 2 * P * 8);
    assert.equal(r.static.masterWeights, 4 * P);
    assert.equal(r.static.optimizerStates, 8 * P + 4);
  });

  test('the CLI refuses torch < 2.4, a Python without torch, and a layout the oracle cannot build: exit 2, nothing written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'shardlens-oracle-'));
    const out = join(dir, 'report.json');
    const cfg = join(dir, 'config.json');
    writeFileSync(cfg, JSON.stringify({ model_type: 'llama', hidden_size: 256, intermediate_size: 512, num_hidden_layers: 2, num_attention_heads: 4, num_key_value_heads: 4, vocab_size: 1000 }));
    // An interpreter that cannot see site-packages: torch is not importable.
    const bare = join(dir, 'bare-python');
    writeFileSync(bare, `#!/bin/sh\nexec ${python} -I -S "$@"\n`);
    chmodSync(bare, 0o755);
    const cli = (args: string[]) => spawnSync(process.execPath, ['dist/cli.js', 'probe', cfg, '--fake', '--trust', '--out', out, ...args], { encoding: 'utf8', timeout: 300_000 });
    const noTorch = cli(['--python', bare]);
    assert.equal(noTorch.status, 2, noTorch.stderr);
    assert.match(noTorch.stderr, /torch-missing: torch is not importable/);
    if (existsSync('/usr/bin/python3') && /^1\./.test(check('/usr/bin/python3').stdout ?? '')) {
      const old = cli(['--python', '/usr/bin/python3']);
      assert.equal(old.status, 2, old.stderr);
      assert.match(old.stderr, /torch-too-old: torch 1\.\d+.* is older than 2\.4/);
    }
    // Expert parallelism is not reproduced: refused before Python runs.
    const moe = join(dir, 'pretrain_moe.sh');
    writeFileSync(moe, ['torchrun pretrain_gpt.py --num-layers 2 --hidden-size 512 --num-attention-heads 8 --seq-length 512',
      '--max-position-embeddings 512 --micro-batch-size 1 --global-batch-size 8 --bf16 --num-experts 8 --moe-router-topk 2',
      '--expert-model-parallel-size 2 --tokenizer-type NullTokenizer --vocab-size 32000'].join(' \\\n  ') + '\n');
    const ep = spawnSync(process.execPath, ['dist/cli.js', 'probe', moe, '--fake', '--trust', '--gpus', '8xH100', '--out', out, '--python', python!], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(ep.status, 2, ep.stdout + ep.stderr);
    assert.match(ep.stderr, /expert parallelism is not reproduced/);
    assert.ok(!existsSync(out), 'a refused run left a report behind');
  });

  test('a layout torch cannot build says which and why (transformers model with tensor parallelism)', async () => {
    const bad = { ...oraclePlanOf(plan('ddp', 'ddp', 4)), parallel: { ...oraclePlanOf(plan('ddp', 'ddp', 4)).parallel, tp: 2 } };
    const r = await runOracle(bad, { python: python!, timeoutMs: 120_000 });
    assert.ok(!isOracleFailure(r));
    assert.equal(r.ok, false);
    assert.equal(r.error?.code, 'unsupported-layout');
    assert.match(r.error?.message ?? '', /Hugging Face models are reproduced with data parallelism/);
  });

  test('findOraclePython names the interpreter and version it rejected', async () => {
    const r = await findOraclePython(process.execPath);
    assert.ok(isOracleFailure(r));
    assert.equal(r.code, 'python-not-found');
    assert.match(r.message, /install Python 3 and torch ≥ 2\.4/);
  });
});
