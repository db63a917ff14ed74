/**
 * Issue 16, high: the reverse-reference index finds every launcher that references a DeepSpeed JSON however large
 * the workspace. The audit's case: the one launcher lies past the first 400 files walked, so the JSON fell back to
 * Hugging Face defaults (fp32, micro batch 8, sequence 2048) instead of the launcher's bf16, micro 4, sequence 4096.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../formats/index';
import { findReferencing, loadConfigGraph } from '../../server/formats/workspace';
import { axolotl, DS_AUTO, hostOf, manyFiles, workspace } from './workspace';

before(async () => { await initFormats(); });

test('a launcher among 10,000 files is found, and its batch and precision reach the DeepSpeed JSON', { timeout: 120_000 }, () => {
  const ws = workspace();
  try {
    const ds = ws.file('ds_config.json', DS_AUTO);
    const { launcher } = manyFiles(ws, 10_000);
    const host = hostOf(ws);
    assert.deepEqual(findReferencing(ds, host), [launcher]);
    const plan = loadConfigGraph(ds, host).resolved.plan;
    assert.equal(plan?.training.microBatch, 4);
    assert.equal(plan?.training.seqLen, 4096);
    assert.equal(plan?.training.precision, 'bf16-mixed');
  } finally {
    ws.cleanup();
  }
});

test('the index follows file events: a launcher created, changed and deleted after the index was built', () => {
  const ws = workspace();
  try {
    const ds = ws.file('ds_config.json', DS_AUTO);
    const host = hostOf(ws);
    assert.deepEqual(findReferencing(ds, host), []);
    const l = ws.file('new/train.yaml', axolotl('../ds_config.json'));
    host.index?.update(l);
    assert.deepEqual(findReferencing(ds, host), [l]);
    ws.file('new/train.yaml', 'base_model: x\n');
    host.index?.update(l);
    assert.deepEqual(findReferencing(ds, host), []);
    const moved = ws.file('moved/deeper/train.yaml', axolotl('../../ds_config.json'));
    host.index?.update(`${ws.dir}/moved`);
    assert.deepEqual(findReferencing(ds, host), [moved], 'a new folder is walked');
    host.index?.remove(`${ws.dir}/moved`);
    assert.deepEqual(findReferencing(ds, host), []);
  } finally {
    ws.cleanup();
  }
});

test('a DeepSpeed config saved as .conf is found from the launcher that names it', () => {
  const ws = workspace();
  try {
    ws.file('configs/stage3.conf', DS_AUTO);
    const launcher = ws.file('scripts/train.sh', '#!/bin/bash\naccelerate launch --deepspeed_config_file configs/stage3.conf train.py\n');
    const host = hostOf(ws);
    assert.deepEqual(host.mentioning?.('stage3.conf').files, [launcher]);
  } finally {
    ws.cleanup();
  }
});
