/**
 * A Megatron launch of a released model's exact shape that leaves the output layer tied by Megatron's default
 * (megatron/training/arguments.py: embeddings and output weights are shared unless --untie-embeddings-and-output-weights)
 * while the released model has its own output layer (Llama 3 8B's config.json: tie_word_embeddings false) gets an info
 * (shared/plan/resolve.ts `tiedUnlikeItsShape`). Parameter counts from the shapes: Llama 3 8B has 8,030,261,248
 * parameters (the model card's 8.03 B), its output layer 128,256 × 4,096 = 525,336,576 of them.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { countParams } from '../../../shared/model/params';
import { TIED_UNLIKE_SHAPE } from '../../../shared/plan/resolve';
import { memoryHost } from './helpers';

const SCRIPT = readFileSync('test/server/fixtures/pretrain_llama3_tied.sh', 'utf8');

function load(text: string) {
  const path = '/ws/run.sh';
  const g = loadConfigGraph(path, memoryHost({ [path]: text }));
  assert.ok(g.resolved.plan, 'the script resolves');
  return { plan: g.resolved.plan, note: g.resolved.problems.find((p) => p.code === TIED_UNLIKE_SHAPE) };
}

describe("a released shape tied by Megatron's default", () => {
  before(async () => { await initFormats(); });

  test('Llama 3 8B without the flag: tied, 525 M parameters fewer, and an info that says so', () => {
    const { plan, note } = load(SCRIPT);
    assert.equal(plan.model.tiedEmbeddings, true);
    assert.equal(countParams(plan.model).parameters, 8_030_261_248 - 525_336_576);
    assert.ok(note, 'the info is given');
    assert.equal(note.severity, 'info');
    assert.match(note.message, /Llama-3-8B's shape/);
    assert.match(note.message, /0\.53 B parameters fewer/);
    assert.match(note.message, /--untie-embeddings-and-output-weights/);
  });

  test('with --untie-embeddings-and-output-weights: the released model, no info', () => {
    const { plan, note } = load(SCRIPT.replace('--use-distributed-optimizer', '--use-distributed-optimizer --untie-embeddings-and-output-weights'));
    assert.equal(plan.model.tiedEmbeddings, false);
    assert.equal(countParams(plan.model).parameters, 8_030_261_248);
    assert.equal(note, undefined);
  });

  test('a shape no released model has, and a released model that is tied (Llama 3.2 1B), get no info', () => {
    assert.equal(load(SCRIPT.replace('--hidden-size 4096', '--hidden-size 4000')).note, undefined);
    // Llama 3.2 1B: 16 layers of 2,048, 32 heads, 8 KV heads, FFN 8,192, tie_word_embeddings true.
    const small = SCRIPT.replace('--num-layers 32 --hidden-size 4096', '--num-layers 16 --hidden-size 2048').replace('--ffn-hidden-size 14336', '--ffn-hidden-size 8192');
    const { plan, note } = load(small);
    assert.equal(plan.model.tiedEmbeddings, true);
    assert.equal(note, undefined);
  });
});
