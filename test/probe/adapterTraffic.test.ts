// What PEFT's LoRA and DoRA add to a frozen linear's kernels (docs/time-model.md, LoRA adapters): every aten op torch
// dispatches for one bf16 linear under CPU autocast with PEFT's fp32 adapters (probe/oracle/adapter_traffic.py), minus
// the plain frozen linear's, beside ShardLens's byte counts and matrix products. Expected values: torch's dispatch.
// DoRA's ops on its o-element magnitude and norm vectors (a few per pass) are below the count and allowed for.
// Skipped with a message when no Python with torch ≥ 2.4 and peft exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, peftMissing, peftPython, runOracle } from './fixtures/python';
import {
  doraOutputBytes, doraWeightBytes, doraWeightGemms, loraGemms, loraInputBytes, loraOutputBytes, type AdapterRun,
} from '../../shared/time/kernels/adapters';

const python = peftPython;
const missing = peftMissing;
if (!python && !ci) console.log(`# adapter traffic skipped: ${missing}`);

type Pass = { bytes: number; gemms: [number, number, number][] };
type Run = { fwd: Pass; bwd: Pass };

function probe(i: number, o: number, r: number, T: number, dropout: number): { base: Run; lora: Run; dora: Run } {
  return runOracle(python!, 'adapter_traffic', [i, o, r, T, dropout]);
}

/** The products a variant adds to the base linear's, as a sorted list (the base's own matmuls removed once each). */
function added(v: Pass, base: Pass): string[] {
  const rest = v.gemms.map((g) => g.join('×'));
  for (const g of base.gemms) rest.splice(rest.indexOf(g.join('×')), 1);
  return rest.sort();
}
const sorted = (l: readonly (readonly number[])[]) => l.map((g) => g.join('×')).sort();

describe("PEFT adapters' kernels on a frozen linear (torch ≥ 2.4, peft)", { skip: ci ? false : !python }, () => {
  // PEFT keeps the adapters in fp32 (a = 4) beside the bf16 base and runs under autocast (B = 2).
  const x: AdapterRun = { B: 2, a: 4, dropout: false, compiled: false };
  const i = 64, o = 96, r = 4, T = 32;

  test('LoRA: the bytes of every data-moving op and the four backward and two forward products', () => {
    if (!python) assert.fail(`CI=true but ${missing}`);
    const m = probe(i, o, r, T, 0);
    const inp = loraInputBytes(T, i, o, r, x), out = loraOutputBytes(T, o, x);
    assert.equal(inp.fwd + out.fwd, m.lora.fwd.bytes - m.base.fwd.bytes);
    assert.equal(inp.bwd + out.bwd, m.lora.bwd.bytes - m.base.bwd.bytes);
    const g = loraGemms(T, i, o, r);
    assert.deepEqual(added(m.lora.fwd, m.base.fwd), sorted(g.fwd));
    assert.deepEqual(added(m.lora.bwd, m.base.bwd), sorted(g.bwd));
  });

  test('DoRA: the weight pass and the output ops, within the magnitude vectors\' few o-element ops', () => {
    if (!python) assert.fail(`CI=true but ${missing}`);
    const m = probe(i, o, r, T, 0);
    const inp = loraInputBytes(T, i, o, r, x), out = doraOutputBytes(T, o, x);
    const fwd = inp.fwd + out.fwd + doraWeightBytes(i, o, x);
    const bwd = inp.bwd + out.bwd;
    const measuredFwd = m.dora.fwd.bytes - m.base.fwd.bytes, measuredBwd = m.dora.bwd.bytes - m.base.bwd.bytes;
    // The norm's output, m / ‖·‖, m − 1 and the magnitude's gradient: fp32 vectors of o elements, read and written.
    assert.ok(measuredFwd - fwd >= 0 && measuredFwd - fwd <= 48 * o, `forward ${fwd} against ${measuredFwd}`);
    assert.ok(measuredBwd - bwd >= 0 && measuredBwd - bwd <= 48 * o, `backward ${bwd} against ${measuredBwd}`);
    assert.ok(fwd > 5 * (loraInputBytes(T, i, o, r, x).fwd + loraOutputBytes(T, o, x).fwd) / 2, 'DoRA moves several times LoRA\'s bytes');
    const g = loraGemms(T, i, o, r);
    assert.deepEqual(added(m.dora.fwd, m.base.fwd), sorted([...g.fwd, ...doraWeightGemms(i, o, r)]));
    assert.deepEqual(added(m.dora.bwd, m.base.bwd), sorted(g.bwd));
  });

  test('DoRA with dropout runs the base matmul again on the dropped input, and its input gradient', () => {
    if (!python) assert.fail(`CI=true but ${missing}`);
    const m = probe(i, o, r, T, 0.1);
    const g = loraGemms(T, i, o, r);
    assert.deepEqual(added(m.dora.fwd, m.base.fwd), sorted([...g.fwd, ...doraWeightGemms(i, o, r), [T, o, i]]));
    assert.deepEqual(added(m.dora.bwd, m.base.bwd), sorted([...g.bwd, [T, i, o]]));
  });
});
