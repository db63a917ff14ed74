/**
 * The CLI's plain-text output as a shell user meets it: tables whose columns line up whatever the catalog names, and
 * a quiet end when the reader closes the pipe early (`shardlens gpus | head`), as `ls` or `grep` behave.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { cliArgv, runCli, ROOT, tempTree } from './helpers';

describe('CLI text output', () => {
  test('shardlens gpus: every row starts its memory column where the header does', () => {
    const r = runCli(['gpus'], { cwd: ROOT });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.split('\n').filter((l) => /GiB/.test(l));
    const header = r.stdout.split('\n')[0];
    // The header's "memory" is right-aligned over "NN GiB": the unit ends where the header word ends.
    const end = header.indexOf('memory') + 'memory'.length;
    assert.ok(lines.length >= 10, 'the catalog lists at least ten GPUs');
    for (const l of lines) assert.equal(l.indexOf('GiB') + 3, end, `aligned: ${l}`);
  });

  test('a reader that closes the pipe early ends the CLI quietly (no stack trace, exit 0)', async () => {
    const child = spawn(process.execPath, cliArgv(['gpus']), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    // Read the first chunk, then close our end as `head -1` does.
    await new Promise<void>((done) => child.stdout.once('data', () => { child.stdout.destroy(); done(); }));
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    assert.doesNotMatch(stderr, /EPIPE|internal error|at \w+ \(/, stderr);
    assert.equal(code, 0);
  });

  test('estimate: the verdict says what it rests on, in the editor\'s words (assumed cluster and a framework\'s DeepSpeed file)', () => {
    // Llama 3 70B (70.6 B parameters) under ZeRO-3 on 8 GPUs with bf16 and Adam: 16 bytes × 70.6e9 / 8 ≈ 131 GiB of model
    // states per GPU, more than an H100's 79.6 GiB; ZeRO-3 comes from axolotl's deepspeed_configs/zero3_bf16.json,
    // which the workspace does not hold, and the GPUs are assumed.
    const t = tempTree({ '.git/HEAD': 'ref: x\n', 'train.yaml': 'base_model: meta-llama/Meta-Llama-3-70B\nmicro_batch_size: 1\ngradient_accumulation_steps: 1\nsequence_len: 2048\nbf16: true\ndeepspeed: deepspeed_configs/zero3_bf16.json\n' });
    try {
      const r = runCli(['estimate', 'train.yaml'], { cwd: t.dir });
      assert.equal(r.status, 1, r.stderr + r.stdout);
      assert.match(r.stdout, /^DOES NOT FIT: needs ~[\d.]+ GiB\/GPU of 79\.6 GiB if ZeRO stage 3, 8×NVIDIA H100 SXM5 80GB \(assumed\) — set them \(peak on pipeline stage 0, reserved\)\.$/m);
      // The JSON carries the same verdict and what it rests on.
      const j = JSON.parse(runCli(['estimate', 'train.yaml', '--json'], { cwd: t.dir }).stdout);
      assert.equal(j.verdict.conditional, true);
      assert.ok(r.stdout.includes(j.verdict.headline), j.verdict.headline);
      assert.deepEqual(j.verdict.assumed.map((a: { path: string }) => a.path), ['parallel.sharding.stage', 'cluster']);
    } finally {
      t.cleanup();
    }
  });

  test('simulate: a file that plans its steps gets the run\'s wall-clock and GPU-hours (steps × step time × GPUs)', () => {
    const t = tempTree({ '.git/HEAD': 'ref: x\n', 'train.toml': '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\nseq_len = 4096\nsteps = 3000\n[parallelism]\ndata_parallel_shard_degree = 8\n' });
    try {
      const text = runCli(['simulate', 'train.toml', '--gpus', '8xH100'], { cwd: t.dir });
      assert.equal(text.status, 0, text.stderr);
      assert.match(text.stdout, /^Run {2}3,000 steps × [\d.]+ m?s ≈ [\d.]+ (min|h) on 8 GPUs = [\d.]+ GPU-hours \(the steps only/m);
      const j = JSON.parse(runCli(['simulate', 'train.toml', '--gpus', '8xH100', '--json'], { cwd: t.dir }).stdout);
      assert.equal(j.run.steps, 3000);
      assert.equal(j.run.seconds, 3000 * j.stepSeconds);
      assert.ok(Math.abs(j.run.gpuHours - (3000 * j.stepSeconds * 8) / 3600) < 1e-9);
    } finally {
      t.cleanup();
    }
  });
  test('simulate: the plan\'s own checks are reported as estimate reports them (one micro-batch for four pipeline stages)', () => {
    // torchtitan's micro-batches are local_batch_size / pipeline_parallel_microbatch_size = 1 / 1: with PP 4, three
    // of the four stages wait for most of the step (a 1F1B bubble of (p − 1)/m = 3 busy times, Narayanan et al. 2021 §2.2).
    const toml = '[model]\nname = "llama3"\nflavor = "8B"\n[training]\nlocal_batch_size = 1\nseq_len = 4096\n[parallelism]\ndata_parallel_shard_degree = 2\npipeline_parallel_degree = 4\n';
    const t = tempTree({ '.git/HEAD': 'ref: x\n', 'train.toml': toml });
    try {
      const j = JSON.parse(runCli(['simulate', 'train.toml', '--gpus', '8xH100', '--json'], { cwd: t.dir }).stdout);
      assert.equal(j.microbatches, 1);
      const p = j.problems.find((x: { code: string }) => x.code === 'pipeline-underfilled');
      assert.ok(p, JSON.stringify(j.problems.map((x: { code: string }) => x.code)));
      assert.match(p.message, /Only 1 micro-batch for 4 pipeline stages/);
      const text = runCli(['simulate', 'train.toml', '--gpus', '8xH100'], { cwd: t.dir });
      assert.match(text.stdout, /warning .*Only 1 micro-batch for 4 pipeline stages/);
      // The estimate says it once too: each finding appears once whichever command prints it.
      const e = JSON.parse(runCli(['estimate', 'train.toml', '--gpus', '8xH100', '--json'], { cwd: t.dir }).stdout);
      const est = Array.isArray(e) ? e[0] : e;
      assert.equal(est.problems.filter((x: { code: string }) => x.code === 'pipeline-underfilled').length, 1);
    } finally {
      t.cleanup();
    }
  });
  test('estimate: a script that runs no training command gets no verdict, and is not an error (a data preprocessing script)', () => {
    // Megatron-LM's tools/preprocess_data.py tokenises a corpus; nothing in the script says a model, batch or layout, so
    // a memory verdict would rest on assumed defaults alone ("DOES NOT FIT" for a script that trains nothing).
    const prep = '#!/bin/bash\npython tools/preprocess_data.py --input data.json --output-prefix my-gpt2 --tokenizer-type GPT2BPETokenizer --workers 8\n';
    // The same shape of script that also sources an options file with layout flags is something to estimate.
    const opts = '#!/bin/bash\nOPTIONS="--num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 --micro-batch-size 2"\n';
    const t = tempTree({ '.git/HEAD': 'ref: x\n', 'prep.sh': prep, 'CONFIG.sh': opts, 'run.sh': '#!/bin/bash\nsource CONFIG.sh\nmkdir -p out\n' });
    try {
      const r = runCli(['estimate', 'prep.sh'], { cwd: t.dir });
      assert.equal(r.status, 0, r.stderr + r.stdout);
      assert.match(r.stdout, /^No estimate: the script runs no training command/m);
      assert.doesNotMatch(r.stdout, /FITS|DOES NOT FIT|Llama-3\.1-8B/);
      assert.match(r.stdout, /no training command .*nothing to estimate in it/);
      const j = JSON.parse(runCli(['estimate', 'prep.sh', '--json'], { cwd: t.dir }).stdout);
      assert.deepEqual(j.problems.map((p: { code: string }) => p.code), ['no-training-command']);
      // The folder holds it among other scripts: the run stays green.
      const folder = runCli(['estimate', '.'], { cwd: t.dir });
      assert.notEqual(folder.status, 2, folder.stdout);
      // A script that sources layout values (Megatron's sc21 CONFIG.sh pattern) keeps its estimate.
      const run = runCli(['estimate', 'run.sh'], { cwd: t.dir });
      assert.match(run.stdout, /^(FITS|DOES NOT FIT)/m, run.stdout);
      assert.doesNotMatch(run.stdout, /no-training-command|nothing to estimate/);
    } finally {
      t.cleanup();
    }
  });

  test('estimate: a QLoRA config says what its 4-bit base keeps, from the bitsandbytes release its workspace pins', () => {
    // LitGPT's config_hub/finetune/llama-2-7b/qlora.yaml (00af8b0d) in a checkout whose pyproject.toml pins
    // bitsandbytes==0.42.0, as LitGPT's did then: MatMul4Bit keeps its input for the backward before 0.43.2.
    const config = readFileSync(resolve(ROOT, 'data/calibration/checks/litgpt2409/llama-2-7b_qlora.yaml'), 'utf8');
    const t = tempTree({ '.git/HEAD': 'ref: x\n', 'pyproject.toml': '[project.optional-dependencies]\nall = ["bitsandbytes==0.42.0"]\n', 'config_hub/finetune/llama-2-7b/qlora.yaml': config });
    try {
      const r = runCli(['estimate', 'config_hub/finetune/llama-2-7b/qlora.yaml', '--gpus', '1xA100-80GB'], { cwd: t.dir });
      assert.match(r.stdout, /^ {2}lora:$/m, r.stdout);
      assert.match(r.stdout, /^ {4}keepsInputs {2}true +derived: \.\.\/\.\.\/\.\.\/pyproject\.toml:2 pins bitsandbytes==0\.42\.0/m, r.stdout);
      const j = JSON.parse(runCli(['estimate', 'config_hub/finetune/llama-2-7b/qlora.yaml', '--gpus', '1xA100-80GB', '--json'], { cwd: t.dir }).stdout);
      assert.equal(j.lora.keepsInputs.value, true);
      assert.equal(j.lora.rank.value, 32);
      assert.equal(j.lora.baseDtype.value, 'nf4');
    } finally {
      t.cleanup();
    }
  });
});
