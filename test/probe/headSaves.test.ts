// What a frozen output head keeps (docs/engine-memory.md#lora-adapters): a small transformers Llama under CPU autocast
// with PEFT LoRA on q and v, its head frozen or trained as a modules_to_save copy (probe/oracle/head_saves.py), beside
// ShardLens's output-layer saves. Expected values: torch's measurement at two token counts, whose difference is the
// per-token part. Skipped with a message when no Python with torch ≥ 2.4 and peft exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, peftMissing, peftPython, runOracle } from './fixtures/python';
import { outputLayerInputBytes, type ActivationShape } from '../../shared/memory/activations';

const python = peftPython;
const missing = peftMissing;
if (!python && !ci) console.log(`# head saves skipped: ${missing}`);

describe('a frozen LM head under LoRA keeps no input (torch ≥ 2.4, peft)', { skip: ci ? false : !python }, () => {
  test('training the head (modules_to_save) adds its input, B·h per token; frozen, nothing', () => {
    if (!python) assert.fail(`CI=true but ${missing}`);
    const h = 64, f = 128, T1 = 64, T2 = 128;
    const m = runOracle<{ frozen: [number, number]; trained: [number, number] }>(python!, 'head_saves', [h, f, T1, T2]);
    const measuredPerToken = ((m.trained[1] - m.trained[0]) - (m.frozen[1] - m.frozen[0])) / (T2 - T1);
    // The probe's model in bf16 under autocast: a 16-bit residual stream (S = B = 2), one sequence.
    const shape = { actBytes: 2, streamBytes: 2, sLocal: 1, b: 1, h, sp: false, tp: 1, impl: 'hf' } as unknown as ActivationShape;
    assert.equal(outputLayerInputBytes(shape, false, true) - outputLayerInputBytes(shape, false, false), measuredPerToken);
    assert.equal(measuredPerToken, 2 * h);
  });
});
