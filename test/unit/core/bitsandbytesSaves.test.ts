/**
 * Whether a frozen bitsandbytes linear keeps its input for the backward, by release (shared/memory/loraSaves.ts
 * `bitsandbytesSavesInput`), and what that is worth in a QLoRA block. Sources: bitsandbytes/autograd/_functions.py,
 * MatMul4Bit.forward `ctx.tensors = (A, B)` in 0.42.0, 0.43.0 and 0.43.1, `(None, B)` in 0.43.2, 0.43.3 and 0.50.2 (the wheels' source; on a
 * CPU, 0.50.2's backward node of a Linear4bit holds `[None, packed weight]`); MatMul8bitLt.forward
 * `ctx.tensors = (CAt, subA, A)` whenever the input needs a gradient, in 0.42.0 and 0.50.2.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { stageNumbers } from '../../../shared/memory/fast';
import { bitsandbytesSavesInput } from '../../../shared/memory/loraSaves';
import type { LoraSpec } from '../../../shared/plan/types';
import { llamaPlan } from './helpers';

describe('bitsandbytes: the base linears\' inputs', () => {
  const cases: readonly [bits: 4 | 8, version: string | undefined, saves: boolean][] = [
    [4, undefined, false], // the current release
    [4, '0.50.2', false],
    [4, '0.43.3', false],
    [4, '0.43.2', false],
    [4, '0.43.1', true],
    [4, '0.43.0', true],
    [4, '0.42.0', true],
    [4, '0.41.3.post2', true],
    [4, '1.0.0', false],
    [8, undefined, true],
    [8, '0.42.0', true],
    [8, '0.50.2', true],
  ];
  for (const [bits, version, saves] of cases) {
    test(`${bits}-bit, ${version ?? 'current release'}: ${saves ? 'keeps' : 'does not keep'} its input`, () => {
      assert.equal(bitsandbytesSavesInput(bits, version), saves);
    });
  }

  test('a 4-bit Llama 3 8B block with q and v adapters keeps the MLP norm\'s output and the gated product only before 0.43.2', () => {
    // Without dropout the q/v adapters read the attention norm's output, which the block keeps either way; a base that
    // keeps its inputs adds the MLP norm's output (gate/up's input, h = 4,096) and the gated product (down's input,
    // f = 14,336), 2 bytes each, per token and layer: 2·(4,096 + 14,336) × 4,096 tokens × 32 layers. Pure bf16 (as
    // QLoRA trains: the base in bf16 compute, no autocast, whose per-linear casts would add more copies).
    const lora: LoraSpec = { rank: 16, targets: ['q', 'v'], baseDtype: 'nf4', dropout: 0 };
    const over = { training: { microBatch: 1, seqLen: 4096, precision: 'bf16' as const, recompute: 'none' as const } };
    const now = stageNumbers(llamaPlan({ lora: { ...lora, baseSavesInputs: bitsandbytesSavesInput(4) }, ...over }), 0)!;
    const old = stageNumbers(llamaPlan({ lora: { ...lora, baseSavesInputs: bitsandbytesSavesInput(4, '0.42.0') }, ...over }), 0)!;
    assert.equal(old.layerActPerMicrobatch - now.layerActPerMicrobatch, 2 * (4096 + 14336) * 4096 * 32);
  });
});
