/**
 * Issue 16, medium: wrong answers delivered with confidence. Each input gets a clear message at the right place, the
 * same verdict in the CLI and the editor, and exit 2 for bad input. CLI cases run the CLI from source; editor cases
 * analyse the same text the way the language server does and read the code lens the user sees.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { analyzeDocument } from '../../server/analysis/analyze';
import { core, initCore } from '../../server/analysis/core';
import { createHost } from '../../server/analysis/host';
import { buildCodeLenses } from '../../server/features/codeLens';
import { verdictOf } from '../../server/features/verdict';
import { normalizeSettings } from '../../server/settings';
import { parseConfig } from '../../formats/index';
import { DS_CONFIG, runCli, tempTree } from '../cli/helpers';

before(async () => { await initCore(); });

/** A small Megatron launcher; `extra` flags are appended. */
const megatron = (extra: string) => `#!/bin/bash\ntorchrun pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --micro-batch-size 1 ${extra}\n`;

/** The verdict and top code lens the editor shows for a file's text. */
function editorVerdict(dir: string, name: string, text: string) {
  const uri = pathToFileURL(join(dir, name)).toString();
  const a = analyzeDocument({ uri, version: 1, text, settings: normalizeSettings({}) }, createHost(() => undefined, () => dir), core());
  const v = verdictOf(a);
  return { verdict: v ? (a.memory?.fits ? 'fits' : 'does-not-fit') : 'cannot-estimate', lens: String(buildCodeLenses(a)[0]?.command?.title ?? '') };
}

describe('bad input: exit 2 in the CLI and no verdict in the editor', () => {
  test('TP = 10⁹: the CLI refuses, and the editor says it cannot estimate (not "✓ Fits")', () => {
    const t = tempTree({ 'pretrain_gpt.sh': megatron('--tensor-model-parallel-size 1000000000') });
    try {
      const r = runCli(['estimate', 'pretrain_gpt.sh'], { cwd: t.dir });
      assert.equal(r.status, 2);
      assert.match(r.stdout, /CANNOT ESTIMATE AS WRITTEN/);
      const e = editorVerdict(t.dir, 'pretrain_gpt.sh', megatron('--tensor-model-parallel-size 1000000000'));
      assert.equal(e.verdict, 'cannot-estimate');
      assert.match(e.lens, /not enough to estimate — see Problems/);
    } finally {
      t.cleanup();
    }
  });

  test('micro batch "NaN": an error at the value, exit 2, no FITS in either place', () => {
    const ds = JSON.stringify({ train_micro_batch_size_per_gpu: 'NaN', zero_optimization: { stage: 2 } });
    const t = tempTree({ 'ds_config.json': ds });
    try {
      const r = runCli(['estimate', 'ds_config.json'], { cwd: t.dir });
      assert.equal(r.status, 2);
      assert.match(r.stdout, /error +\S+ds_config\.json:1:\d+: train_micro_batch_size_per_gpu should be a number/);
      // One error at the value, not a second wording of the same one.
      assert.equal(r.stdout.match(/ds_config\.json:1:\d+: train_micro_batch_size_per_gpu/g)?.length, 1);
      assert.doesNotMatch(r.stdout, /^FITS/m);
      assert.equal(editorVerdict(t.dir, 'ds_config.json', ds).verdict, 'cannot-estimate');
    } finally {
      t.cleanup();
    }
  });

  test('JSON nested 5,000 levels: a diagnostic at the depth, not every key silently dropped', () => {
    const deep = `{"train_micro_batch_size_per_gpu": 4, "x": ${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const facts = parseConfig('/w/ds_config.json', deep, 'deepspeed');
    const d = facts.diagnostics.find((x) => x.code === 'syntax');
    assert.match(d?.message ?? '', /nested more than 64 levels/);
    assert.equal(d?.severity, 'error');
    // The outer object is level 1, so the 64th bracket opens level 65: the first one past the limit.
    assert.equal(d?.range.start.character, deep.indexOf('[') + 63);
    const t = tempTree({ 'ds_config.json': deep });
    try {
      assert.equal(runCli(['estimate', 'ds_config.json'], { cwd: t.dir }).status, 2);
    } finally {
      t.cleanup();
    }
  });

  test('an unrecognised file (even /etc/hostname) is "not a training config", exit 2, no verdict', () => {
    for (const file of ['/etc/hostname', 'notes.yaml']) {
      const t = tempTree({ 'notes.yaml': 'title: my notes\nitems: [1, 2]\n' });
      try {
        const r = runCli(['estimate', file, '--json'], { cwd: t.dir });
        assert.equal(r.status, 2, file);
        assert.match(r.stderr, /not a training config/);
        assert.equal(r.stdout, '');
      } finally {
        t.cleanup();
      }
    }
  });

  test('an invalid config.json is reported as invalid, not as "not found" with Llama-3.1-8B used instead', () => {
    const yaml = 'base_model: ./mymodel\nmicro_batch_size: 2\nsequence_len: 2048\n';
    const t = tempTree({ 'train.yaml': yaml, 'mymodel/config.json': '{"model_type": "llama", "hidden_size": ' });
    try {
      const r = runCli(['estimate', 'train.yaml'], { cwd: t.dir });
      assert.equal(r.status, 2);
      assert.match(r.stdout, /error .*The model config .*mymodel\/config\.json is not valid JSON/);
      assert.doesNotMatch(r.stdout, /Llama-3\.1-8B/);
      assert.equal(editorVerdict(t.dir, 'train.yaml', yaml).verdict, 'cannot-estimate');
    } finally {
      t.cleanup();
    }
  });

  test('params of a config whose sizes overflow: exit 2 with the reason, never "∞ parameters"', () => {
    const t = tempTree({ 'config.json': JSON.stringify({ model_type: 'llama', architectures: ['LlamaForCausalLM'], hidden_size: 1e300, num_hidden_layers: 1e300, num_attention_heads: 8, intermediate_size: 1e300, vocab_size: 1000 }) });
    try {
      const r = runCli(['params', 'config.json'], { cwd: t.dir });
      assert.equal(r.status, 2);
      assert.match(r.stderr, /parameters = Infinity; check hidden_size/);
      assert.doesNotMatch(r.stdout, /∞/);
    } finally {
      t.cleanup();
    }
  });

  test('one dangling symlink does not make `estimate <folder>` reject the whole folder', () => {
    const t = tempTree({ 'configs/ds_config.json': DS_CONFIG });
    try {
      symlinkSync(join(t.dir, 'gone.yaml'), join(t.dir, 'configs/broken.yaml'));
      const r = runCli(['estimate', 'configs', '--json'], { cwd: t.dir });
      assert.notEqual(r.status, 2, r.stderr);
      assert.equal((JSON.parse(r.stdout) as { file: string }).file, join(t.dir, 'configs/ds_config.json'));
    } finally {
      t.cleanup();
    }
  });

  test('probe --steps abc: a clear message and exit 2, before anything is launched (no Python traceback)', () => {
    const t = tempTree({ 'ds_config.json': DS_CONFIG });
    try {
      const r = runCli(['probe', 'ds_config.json', '--trust', '--steps', 'abc'], { cwd: t.dir, env: { SHARDLENS_PYTHON: '/nonexistent/python' } });
      assert.equal(r.status, 2);
      assert.match(r.stderr, /--steps must be a whole number from 2 to 1000 \(got abc\)/);
      assert.doesNotMatch(r.stderr, /Traceback/);
    } finally {
      t.cleanup();
    }
  });

  test('a 2 MB launch script gets the same answer every time: too large, by size', () => {
    const big = megatron('') + '# padding\n'.repeat(2 * 1024 * 1024 / 10);
    const t = tempTree({ 'pretrain_big.sh': big });
    try {
      const runs = [1, 2].map(() => runCli(['estimate', 'pretrain_big.sh'], { cwd: t.dir }));
      for (const r of runs) {
        assert.equal(r.status, 2);
        assert.match(r.stderr, /config files above 1\.0 MiB are not read/);
      }
    } finally {
      t.cleanup();
    }
  });
});

describe('deterministic limits', () => {
  test('the shell reader\'s limit is a step budget: a clock that races ahead does not change the result', () => {
    const script = megatron('--tensor-model-parallel-size 2') + 'echo done\n'.repeat(2000);
    const before = parseConfig('/w/pretrain_gpt.sh', script, 'megatron-script').facts['parallel.tp']?.value;
    const realNow = Date.now;
    const realPerf = performance.now.bind(performance);
    let skew = 0;
    // Every read of the clock jumps 10 s: a wall-clock limit would cancel the parse at once (a loaded machine, sped up).
    Date.now = () => realNow() + (skew += 10_000);
    performance.now = () => realPerf() + (skew += 10_000);
    try {
      const after = parseConfig('/w/pretrain_gpt2.sh', script, 'megatron-script').facts['parallel.tp']?.value;
      assert.equal(before, 2);
      assert.equal(after, 2);
    } finally {
      Date.now = realNow;
      performance.now = realPerf;
    }
  });
});
