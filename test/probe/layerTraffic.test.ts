// The memory-bound traffic of eager Llama layers (docs/time-model.md, memory-bound kernels): every aten op torch
// dispatches for one forward and backward (probe/oracle/layer_traffic.py) of transformers' LlamaDecoderLayer and of
// torchtitan's 2024 block (upcasting RMSNorm, complex rotary, repeat_kv), beside ShardLens's 'hf', 'hf-amp' and
// 'eager' byte counts (shared/time/kernels/elementwise.ts) and autocast's weight casts.
// Expected values: torch's dispatch. What the pass counts leave out is small and allowed for: the rotary tables'
// reads (T·d per multiply), the per-token fp32 scalars of the norms and the norm weights.
// The pass counts were read off one shape's op list (hidden 2048, 16 heads); the shapes here are others.
// Skipped with a message when no Python with torch ≥ 2.4 and transformers exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, memoizedOracle, oracleMissing, oraclePython, withinBytes as within, type TrafficRun } from './fixtures/python';
import { modelFromHfConfig } from '../../shared/model/hfConfig';
import { autocastWeightCastBytes, kernelsPerLayer, layerElementwiseBytes, type Fusion } from '../../shared/time/kernels/elementwise';

const python = oraclePython;
if (!python && !ci) console.log(`# layer traffic skipped: ${oracleMissing}`);

type Probe = { amp: TrafficRun; bf16: TrafficRun; qwen3_amp: TrafficRun; qwen3_bf16: TrafficRun; titan2024: TrafficRun };
type Shape = { h: number; f: number; a: number; g: number; T: number };

const layerProbe = memoizedOracle<Probe>(python, 'layer_traffic');
const probe = (s: Shape): Probe => layerProbe([s.h, s.f, s.a, s.g, s.T]);

/** ShardLens's bytes for the same layer: the elementwise passes, plus autocast's weight casts under 'hf-amp'. */
function modelled(s: Shape, f: Fusion, upcastNorm = false, family = 'llama'): { fwd: number; bwd: number } {
  const { model } = modelFromHfConfig({
    model_type: family, head_dim: s.h / s.a, hidden_size: s.h, intermediate_size: s.f, num_attention_heads: s.a, num_key_value_heads: s.g,
    num_hidden_layers: 1, vocab_size: 1000,
  });
  assert.ok(model, 'the Llama config reads');
  const w = { tokens: s.T, normTokens: s.T, qHeads: s.a, kvHeads: s.g, ffn: s.f };
  const d = s.h / s.a;
  // q, k, v, o and the MLP's gate, up and down weights.
  const weights = s.h * s.a * d + 2 * s.h * s.g * d + s.a * d * s.h + 3 * s.h * s.f;
  const casts = f === 'hf-amp' ? autocastWeightCastBytes(weights) : 0;
  return {
    fwd: layerElementwiseBytes(model, w, 2, f, 'fwd', upcastNorm) + casts,
    bwd: layerElementwiseBytes(model, w, 2, f, 'bwd', upcastNorm) + casts,
  };
}

describe("eager Llama layers: memory-bound bytes (torch ≥ 2.4, transformers)", { skip: ci ? false : !python }, () => {
  const shapes: Shape[] = [
    { h: 384, f: 1024, a: 6, g: 2, T: 128 },
    { h: 512, f: 1408, a: 8, g: 8, T: 64 },
  ];
  for (const s of shapes) {
    test(`hidden ${s.h}, FFN ${s.f}, ${s.a}/${s.g} heads, ${s.T} tokens: 16-bit and autocast, forward and backward within 2 %`, () => {
      if (!python) assert.fail(`CI=true but ${oracleMissing}`);
      const m = probe(s);
      for (const [f, run] of [['hf', m.bf16], ['hf-amp', m.amp]] as const) {
        const mine = modelled(s, f);
        within(mine.fwd, run.fwd.bytes, 0.02, `${f} forward`);
        within(mine.bwd, run.bwd.bytes, 0.02, `${f} backward`);
      }
    });
  }

  test("transformers' Qwen3 layer: the q/k RMSNorms over each head take the norm's passes, within 3 %", () => {
    if (!python) assert.fail(`CI=true but ${oracleMissing}`);
    const s = shapes[0];
    const m = probe(s);
    for (const [f, run] of [['hf', m.qwen3_bf16], ['hf-amp', m.qwen3_amp]] as const) {
      const mine = modelled(s, f, false, 'qwen3');
      within(mine.fwd, run.fwd.bytes, 0.03, `Qwen3 ${f} forward`);
      within(mine.bwd, run.bwd.bytes, 0.03, `Qwen3 ${f} backward`);
    }
    // The q/k norms are a real share: the Qwen3 layer moves more than the Llama layer of the same shape.
    assert.ok(m.qwen3_bf16.fwd.bytes > 1.25 * m.bf16.fwd.bytes, `${m.qwen3_bf16.fwd.bytes} against ${m.bf16.fwd.bytes}`);
  });

  for (const s of shapes) {
    test(`torchtitan's 2024 block, hidden ${s.h}, ${s.a}/${s.g} heads: the upcasting norm, complex rotary and SwiGLU within 2 %`, () => {
      if (!python) assert.fail(`CI=true but ${oracleMissing}`);
      const run = probe(s).titan2024;
      const mine = modelled(s, 'eager', true);
      // What 'eager' counts that torchtitan does not run: q/k/v copies, 2·T·(a + 2g)·d·B forward and twice that backward
      // (kept for engines whose attention copies them, as llm-foundry's flash_attn_fn unpads), and a second residual
      // pass backward (3·T·h·B per add); what torchtitan runs that 'eager' does not count: repeat_kv's copies of K and V
      // for grouped heads, 2·T·(a + g)·d·B each way.
      const d = s.h / s.a, B = 2;
      const copies = 2 * s.T * (s.a + 2 * s.g) * d * B;
      const repeat = s.a !== s.g ? 2 * s.T * (s.a + s.g) * d * B : 0;
      within(mine.fwd - copies + repeat, run.fwd.bytes, 0.02, 'torchtitan 2024 forward');
      within(mine.bwd - 2 * copies - 2 * 3 * s.T * s.h * B + repeat, run.bwd.bytes, 0.02, 'torchtitan 2024 backward');
    });
  }

  test('the kernels per layer are the ops torch launches (GEMMs included) and the attention kernel', () => {
    if (!python) assert.fail(`CI=true but ${oracleMissing}`);
    const m = probe(shapes[0]);
    assert.deepEqual(kernelsPerLayer('hf', 0, false), { fwd: m.bf16.fwd.kernels + 1, bwd: m.bf16.bwd.kernels + 1 });
    assert.deepEqual(kernelsPerLayer('hf-amp', 0, false), { fwd: m.amp.fwd.kernels + 1, bwd: m.amp.bwd.kernels + 1 });
  });

  test('autocast moves more than the 16-bit layer: fp32 stream, tables and weight casts', () => {
    if (!python) assert.fail(`CI=true but ${oracleMissing}`);
    const m = probe(shapes[0]);
    assert.ok(m.amp.fwd.bytes > 1.5 * m.bf16.fwd.bytes, `${m.amp.fwd.bytes} against ${m.bf16.fwd.bytes}`);
  });
});
