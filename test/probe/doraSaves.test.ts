// What PEFT's DoRA adds to what a layer keeps for backward (docs/engine-memory.md#lora-adapters): a small transformers
// Llama under CPU autocast with adapters on all seven projections, use_dora off and on (probe/oracle/dora_saves.py),
// beside ShardLens's per-token adapter saves. Expected values: torch's measurement at two token counts, whose
// difference is the per-token part (per-layer constants such as the magnitude's scale vectors cancel).
// Skipped with a message when no Python with torch ≥ 2.4 and peft exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, peftMissing, peftPython, runOracle } from './fixtures/python';
import { loraAdapterBytesPerToken, type LoraSaves } from '../../shared/memory/loraSaves';

const python = peftPython;
const missing = peftMissing;
if (!python && !ci) console.log(`# DoRA saves skipped: ${missing}`);

describe('DoRA on a Llama layer: what torch keeps (torch ≥ 2.4, peft)', { skip: ci ? false : !python }, () => {
  test('each adapted projection keeps its base output and its adapter output, B bytes per output element each', () => {
    if (!python) assert.fail(`CI=true but ${missing}`);
    const h = 64, f = 128, r = 4, T1 = 64, T2 = 128;
    const m = runOracle<{ lora: [number, number]; dora: [number, number] }>(python!, 'dora_saves', [h, f, r, T1, T2]);
    const measuredPerToken = ((m.dora[1] - m.dora[0]) - (m.lora[1] - m.lora[0])) / (T2 - T1);
    // The probe's model: 4 heads of 16 and 2 KV heads (k and v 32 wide), bf16 under autocast (B = 2).
    const saves = (dora: boolean): LoraSaves => ({ targets: new Set(['q', 'k', 'v', 'o', 'gate', 'up', 'down']), rank: r, dropout: false, fusedQkv: false, baseSavesInputs: false, dora });
    const widths = { h, q: h, f, kv: 32 };
    assert.equal(loraAdapterBytesPerToken(saves(true), widths, 2) - loraAdapterBytesPerToken(saves(false), widths, 2), measuredPerToken);
    assert.ok(measuredPerToken > 0, 'DoRA keeps more than LoRA');
  });
});
