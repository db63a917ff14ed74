// What LoRA changes in a block's saved tensors (docs/engine-memory.md#lora-adapters): torch's own autograd, on a
// torchtitan-style block whose linears are trained, frozen, or frozen with adapters (probe/oracle/lora_saves.py), beside
// ShardLens's torchtitan block. Expected values: torch's measurement, differences between variants (the norms', SDPA's
// and SwiGLU's own saves cancel). On a CPU dropout saves its noise tensor in bf16 (at::dropout), 2 bytes per element,
// where a GPU's native_dropout keeps a 1-byte mask: the comparison passes 2 as the mask's bytes.
// Skipped with a message when no Python with torch ≥ 2.4 exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, oracleMissing, oraclePython, runOracle } from './fixtures/python';
import type { ActivationShape } from '../../shared/memory/activations';
import { titanBlockBytes } from '../../shared/memory/blocks';
import { loraAdapterBytesPerToken, type LoraSaves } from '../../shared/memory/loraSaves';

const python = oraclePython;
if (!python && !ci) console.log(`# LoRA saves skipped: ${oracleMissing}`);

describe('LoRA on a Llama block: what torch saves (torch ≥ 2.4)', { skip: ci ? false : !python }, () => {
  test('frozen linears drop their inputs; adapters add theirs back, their dropout copies and A\'s outputs', () => {
    if (!python) assert.fail(`CI=true but ${oracleMissing}`);
    const T = 64, h = 256, f = 512, r = 8;
    const m = runOracle<Record<'full' | 'frozen' | 'all_p0' | 'qv_drop' | 'qv_fused', number>>(python!, 'lora_saves', [T, h, f, r]);
    const shape: ActivationShape = {
      sLocal: T, b: 1, h, heads: 4, kvHeadsEff: 2, headDim: 64, ffn: f, gated: true, tp: 1, sp: false, flash: true,
      actBytes: 2, sKeys: T, dropout: false, impl: 'torchtitan',
    };
    const lora = (targets: string[], dropout: boolean, fusedQkv = false): LoraSaves => ({ targets: new Set(targets), rank: r, dropout, fusedQkv, baseSavesInputs: false, dora: false });
    const all = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'];
    // The frozen base: the block without its linears' inputs (the norm outputs and the product).
    const full = titanBlockBytes(shape);
    assert.equal(full - titanBlockBytes({ ...shape, loraSaves: lora([], false) }), m.full - m.frozen);
    // Adapters on every projection without dropout read the very tensors the base no longer keeps: only A's outputs are new.
    assert.equal(titanBlockBytes({ ...shape, loraSaves: lora(all, false) }) - full, m.all_p0 - m.full);
    // q and v with a dropout each, and through one shared dropout (a fused qkv projection), with the CPU's 2-byte noise.
    const frozen = titanBlockBytes({ ...shape, loraSaves: lora([], false) });
    const widths = { h, q: h, f };
    assert.equal(T * loraAdapterBytesPerToken(lora(['q', 'v'], true), widths, 2, 2), m.qv_drop - m.frozen);
    assert.equal(T * loraAdapterBytesPerToken(lora(['q', 'v'], true, true), widths, 2, 2), m.qv_fused - m.frozen);
    assert.equal(titanBlockBytes({ ...shape, loraSaves: lora(['q', 'v'], true) }) - frozen, T * loraAdapterBytesPerToken(lora(['q', 'v'], true), widths, 2));
  });
});
