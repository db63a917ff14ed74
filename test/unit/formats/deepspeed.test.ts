/**
 * DeepSpeed JSON reader. Expectations come from DeepSpeed's config models (docs/formats/deepspeed.md):
 * unknown keys inside `zero_optimization` are rejected (pydantic extra="forbid"), `cpu_offload` is deprecated
 * in favour of `offload_optimizer`, `max_live_parameters` is the alias of `stage3_max_live_parameters`,
 * `"zero_optimization": true` is legacy stage 1, `bfloat16` the legacy spelling of `bf16`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { detectFormat, parseConfig } from '../../../formats/index';
import { fixture, rangeOf } from './helpers';

describe('DeepSpeed JSON', () => {
  test('detection by name and by content', () => {
    assert.equal(detectFormat('/x/ds_config_zero3.json', '{}'), 'deepspeed');
    assert.equal(detectFormat('/x/zero3_bf16.json', '{}'), 'deepspeed');
    assert.equal(detectFormat('/x/train.json', '{"zero_optimization": {"stage": 1}}'), 'deepspeed');
    assert.equal(detectFormat('/x/other.json', '{"a": 1}'), undefined);
  });

  const { path, text } = fixture('deepspeed/diagnostics.json');
  const f = parseConfig(path, text);
  const diag = (code: string) => f.diagnostics.filter((d) => d.code === code);

  test('values with key and value ranges', () => {
    assert.equal(f.facts['training.globalBatch']?.value, 64);
    assert.deepEqual(f.facts['training.globalBatch']?.keyRange, rangeOf(text, '"train_batch_size"'));
    assert.deepEqual(f.facts['training.globalBatch']?.source.range, rangeOf(text, '64'));
    assert.equal(f.facts['training.globalBatch']?.source.detail, 'diagnostics.json: train_batch_size');
    assert.equal(f.facts['parallel.sharding.stage']?.value, 3);
  });

  test('stage3_ alias accepted and read (3e8 written as a float)', () => {
    assert.equal(f.facts['parallel.sharding.maxLiveParams']?.value, 3e8);
    assert.deepEqual(f.facts['parallel.sharding.maxLiveParams']?.keyRange, rangeOf(text, '"max_live_parameters"'));
    assert.equal(diag('ds-unknown-key').filter((d) => d.message.includes('max_live')).length, 0);
  });

  test('"auto" kept as a sentinel for resolution', () => {
    assert.equal(f.facts['parallel.sharding.prefetchBucketElems']?.value, 'auto');
    assert.equal(f.facts['parallel.sharding.reduceBucketElems']?.value, 'auto');
  });

  test('unknown key inside zero_optimization is an error at the key', () => {
    const d = diag('ds-unknown-key').find((x) => x.message.includes('bogus_key'));
    assert.ok(d);
    assert.equal(d.severity, 'error');
    assert.deepEqual(d.range, rangeOf(text, '"bogus_key"'));
  });

  test('unknown top-level key is only info (DeepSpeed ignores it)', () => {
    const d = diag('ds-unknown-key').find((x) => x.message.includes('my_project_note'));
    assert.equal(d?.severity, 'info');
  });

  test('deprecated cpu_offload warns with its replacement and still reads as optimizer offload', () => {
    const d = diag('ds-deprecated-key')[0];
    assert.equal(d?.severity, 'warning');
    assert.match(d!.message, /offload_optimizer/);
    assert.deepEqual(d!.range, rangeOf(text, '"cpu_offload"'));
    assert.equal(f.facts['parallel.sharding.offloadOptimizer']?.value, 'cpu');
    assert.equal(f.facts['parallel.sharding.offloadParams']?.value, 'cpu');
  });

  test('fp16 and bf16 both enabled is an error on each', () => {
    const ds = diag('ds-fp16-bf16');
    assert.equal(ds.length, 2);
    assert.deepEqual(ds.map((d) => d.range), [rangeOf(text, 'true', 0), rangeOf(text, 'true', 1)]);
  });

  test('legacy forms: zero_optimization true = stage 1, bfloat16 = bf16; a key with a stray space is pointed out', () => {
    const l = fixture('deepspeed/legacy.json');
    const g = parseConfig(l.path, l.text);
    assert.equal(g.facts['parallel.sharding.stage']?.value, 1);
    assert.equal(g.facts['training.precision']?.value, 'bf16-mixed');
    assert.ok(g.diagnostics.some((d) => d.code === 'ds-deprecated-key' && d.message.includes('bf16')));
    const stray = g.diagnostics.find((d) => d.message.includes('stray spaces'));
    assert.equal(stray?.severity, 'warning');
    assert.deepEqual(stray?.range, rangeOf(l.text, '"gradient_accumulation_steps "'));
    assert.equal(g.facts['training.gradAccum'], undefined);
  });

  test('defaults are recorded with the framework and its source file', () => {
    const l = fixture('deepspeed/zero2_auto.json');
    const g = parseConfig(l.path, l.text);
    assert.equal(g.facts['parallel.sharding.offloadParams']?.source.kind, 'default');
    assert.match(g.facts['parallel.sharding.offloadParams']!.source.detail, /DeepSpeed default.*offload_config\.py/);
    assert.equal(g.facts['parallel.sharding.allgatherBucketElems']?.value, 2e8);
  });

  test('offload_param below stage 3 is flagged', () => {
    const g = parseConfig('/x/ds_config.json', '{"zero_optimization": {"stage": 2, "offload_param": {"device": "cpu"}}}');
    assert.ok(g.diagnostics.some((d) => d.code === 'ds-offload-param-stage'));
  });

  test('half-typed JSON gives what can be read plus a syntax error', () => {
    const g = parseConfig('/x/ds_config.json', '{\n  "train_micro_batch_size_per_gpu": 4,\n  "zero_optimization": { "stage": 3, "overl');
    assert.equal(g.facts['training.microBatch']?.value, 4);
    assert.equal(g.facts['parallel.sharding.stage']?.value, 3);
    assert.ok(g.diagnostics.some((d) => d.code === 'syntax' && d.severity === 'error'));
  });

  test('wrong types are reported, not thrown', () => {
    const g = parseConfig('/x/ds_config.json', '{"train_micro_batch_size_per_gpu": "four", "zero_optimization": {"stage": 7, "overlap_comm": "yes"}}');
    assert.equal(g.facts['training.microBatch'], undefined);
    assert.ok(g.diagnostics.some((d) => d.code === 'ds-enum' && d.message.includes('stage')));
    assert.ok(g.diagnostics.some((d) => d.code === 'ds-type' && d.message.includes('overlap_comm')));
  });

  // A value DeepSpeed's pydantic models reject (int/float fields) gets one error at the value naming the whole key,
  // whichever reader reads it: the table's readNum, readStage, the AutoTP size, or the key check for keys not read.
  for (const [name, json, key, message] of [
    ['a read key, not a number', '{"train_micro_batch_size_per_gpu": "abc"}', 'train_micro_batch_size_per_gpu', /train_micro_batch_size_per_gpu should be a number or "auto"/],
    ['a read key, "NaN"', '{"gradient_accumulation_steps": "NaN"}', 'gradient_accumulation_steps', /gradient_accumulation_steps should be a number/],
    ['a read count, a fraction', '{"train_micro_batch_size_per_gpu": 2.5}', 'train_micro_batch_size_per_gpu', /must be a whole number \(got 2\.5\)/],
    ['the ZeRO stage, a word', '{"zero_optimization": {"stage": "three"}}', 'stage', /^zero_optimization\.stage should be a number/],
    ['the ZeRO stage, a fraction', '{"zero_optimization": {"stage": 2.5}}', 'stage', /^zero_optimization\.stage must be a whole number/],
    ['the AutoTP size, a word', '{"tensor_parallel": {"autotp_size": "two"}}', 'autotp_size', /tensor_parallel\.autotp_size should be a number/],
    ['an alias the reader skips for the key', '{"zero_optimization": {"stage": 3, "stage3_prefetch_bucket_size": 1000, "prefetch_bucket_size": "x"}}', 'prefetch_bucket_size', /prefetch_bucket_size must be a number/],
  ] as const) {
    test(`a number DeepSpeed rejects: one error at the value (${name})`, () => {
      const g = parseConfig('/x/ds_config.json', json);
      const col = json.indexOf(`"${key}"`) + key.length + 4;
      const at = g.diagnostics.filter((d) => d.range.start.character === col);
      assert.equal(at.length, 1, JSON.stringify(g.diagnostics));
      assert.equal(at[0].severity, 'error');
      assert.match(at[0].message, message);
    });
  }

  test('"auto" nothing fills: a warning on keys that drive the estimate, info on others', () => {
    const g = parseConfig('/x/ds_config.json', '{"zero_optimization": {"stage": "auto", "offload_param": {"device": "cpu", "buffer_size": "auto"}}}');
    const d = g.diagnostics.filter((x) => x.code === 'ds-auto-unresolved');
    assert.deepEqual(d.map((x) => x.severity), ['warning', 'info']);
  });
});
