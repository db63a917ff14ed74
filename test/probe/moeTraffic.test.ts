// The memory-bound traffic of transformers' MoE blocks (docs/time-model.md, memory-bound kernels): every aten op torch
// dispatches for one forward and backward (probe/oracle/moe_traffic.py) of Qwen3-MoE's and Mixtral's sparse blocks,
// their experts as transformers 5's grouped GEMMs, beside ShardLens's 'hf' routing and activation bytes
// (shared/time/kernels/moeRouting.ts, elementwise.ts activationBytes).
// Expected values: torch's dispatch. The routing coefficients were read off one shape's op list (hidden 256, expert
// FFN 128, 16 experts, top 4, 512 tokens, Qwen3-MoE); the shapes here are others, Mixtral's fp32 weighting included.
// Skipped with a message when no Python with torch ≥ 2.4 and transformers exists; fails instead when CI=true.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ci, memoizedOracle, oracleMissing, oraclePython, withinBytes as within, type TrafficRun } from './fixtures/python';
import { modelFromHfConfig } from '../../shared/model/hfConfig';
import { activationBytes } from '../../shared/time/kernels/elementwise';
import { moeRoutingBytes } from '../../shared/time/kernels/moeRouting';

const python = oraclePython;
if (!python && !ci) console.log(`# MoE traffic skipped: ${oracleMissing}`);

type Probe = { qwen3_moe: TrafficRun; mixtral: TrafficRun };
type Shape = { h: number; f: number; E: number; k: number; T: number };

const moeProbe = memoizedOracle<Probe>(python, 'moe_traffic');
const probe = (s: Shape): Probe => moeProbe([s.h, s.f, s.E, s.k, s.T]);

/** ShardLens's bytes for the block: routing plus the experts' gated activation on the T·k routed copies. */
function modelled(s: Shape, family: 'qwen3_moe' | 'mixtral', pass: 'fwd' | 'bwd'): number {
  const cfg = family === 'mixtral'
    ? { model_type: 'mixtral', hidden_size: s.h, intermediate_size: s.f, num_local_experts: s.E, num_experts_per_tok: s.k }
    : { model_type: 'qwen3_moe', hidden_size: s.h, moe_intermediate_size: s.f, num_experts: s.E, num_experts_per_tok: s.k };
  const { model } = modelFromHfConfig({ ...cfg, num_attention_heads: 4, num_key_value_heads: 4, num_hidden_layers: 1, vocab_size: 1000 });
  assert.ok(model?.moe, `the ${family} config reads as MoE`);
  const route = moeRoutingBytes('hf', model.moe, { tokens: s.T, copies: s.k, hidden: s.h, experts: s.E, gatedFfn: s.f }, 2, pass);
  return route + activationBytes('hf', true, s.T * s.k * s.f, 2, pass);
}

describe("transformers' MoE blocks: memory-bound bytes (torch ≥ 2.10, transformers 5)", { skip: ci ? false : !python }, () => {
  const shapes: Shape[] = [
    { h: 384, f: 192, E: 8, k: 2, T: 256 },
    { h: 512, f: 128, E: 32, k: 8, T: 192 },
  ];
  for (const s of shapes) {
    test(`hidden ${s.h}, expert FFN ${s.f}, ${s.E} experts, top ${s.k}, ${s.T} tokens: Qwen3-MoE and Mixtral within 1 %`, () => {
      if (!python) assert.fail(`CI=true but ${oracleMissing}`);
      const m = probe(s);
      for (const family of ['qwen3_moe', 'mixtral'] as const) {
        within(modelled(s, family, "fwd"), m[family].fwd.bytes, 0.01, `${family} forward`);
        within(modelled(s, family, "bwd"), m[family].bwd.bytes, 0.01, `${family} backward`);
      }
    });
  }

  test("the routing moves several times Megatron's permutation: 2 + 6k and 6 + 11k passes over T·h against 2 + 2k", () => {
    if (!python) assert.fail(`CI=true but ${oracleMissing}`);
    const s = shapes[1];
    const m = probe(s).qwen3_moe;
    // Megatron's permute and unpermute move 2·T·h·B·(1 + k) per pass (moe_utils.py); transformers' code moves more.
    const permute = 2 * s.T * s.h * 2 * (1 + s.k);
    assert.ok(m.fwd.bytes > 2 * permute, `forward ${m.fwd.bytes} against ${permute}`);
    assert.ok(m.bwd.bytes > 4 * permute, `backward ${m.bwd.bytes} against ${permute}`);
    // Every expert GEMM is a grouped one: the router's projection is the only plain matmul.
    assert.equal(m.fwd.gemms.length, 3);
  });
});
