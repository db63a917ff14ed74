/**
 * Seconds of one layer's adapter kernels on a rank, per pass: LoRA's small matrix products and data-moving ops, DoRA's
 * weight pass and output ops, and a 4-bit base's dequantization before each of its matmuls (shared/time/kernels/
 * adapters.ts has the byte counts and their sources). The frozen base linears themselves are timed with the layer.
 */
import type { Plan } from '../plan/types';
import { loraShapes } from '../model/params';
import { dtypeBytes } from '../memory/dtypes';
import { modelImplOf, precisionRegimeOf } from '../memory/engine';
import {
  dequantBytes, doraOutputBytes, doraWeightBytes, doraWeightGemms, loraGemms, loraInputBytes, loraOutputBytes,
  type AdapterRun, type Gemm,
} from './kernels/adapters';
import type { KernelTimers } from './layerCost';

/** The projections of a layer whose base weights QLoRA stores in 4 bits (every linear of the block). */
const LAYER_PROJECTIONS = ['q', 'k', 'v', 'o', 'gate', 'up', 'down'] as const;

/** Row-parallel projections: their input is split over TP ranks (the others split their output). */
const ROW_PARALLEL = new Set(['o', 'down']);

/**
 * How the plan's adapters run: PEFT (Hugging Face models) under autocast keeps them in fp32 and casts around them;
 * torchtune, LitGPT, Megatron and a model cast whole to 16 bits (DeepSpeed, pure bf16) run them in the compute dtype.
 */
export function adapterRunOf(plan: Plan, B: number, compiled: boolean): AdapterRun {
  const peftFp32 = modelImplOf(plan) === 'hf' && precisionRegimeOf(plan) === 'amp' && B < 4;
  return { B, a: peftFp32 ? 4 : B, dropout: (plan.lora?.dropout ?? 0) > 0, compiled };
}

/** An adapted projection's [in, out] on a rank of a TP group of t. */
function perRank(name: string, i: number, o: number, t: number): readonly [number, number] {
  return ROW_PARALLEL.has(name) ? [i / t, o] : [i, o / t];
}

/**
 * Forward and backward seconds of one layer's adapters on T tokens per rank: per adapted projection the LoRA products
 * (loraGemms) and bytes (loraInputBytes plus loraOutputBytes, or DoRA's doraOutputBytes and weight pass with its
 * products); under DoRA with dropout PEFT runs the base matmul again on the dropped input (forward and its input
 * gradient); with a 4-bit base every projection dequantizes its weight before its forward and its input-gradient
 * matmul, and DoRA's weight pass once more. 0 without LoRA.
 */
export function adapterLayerSeconds(plan: Plan, T: number, tp: number, B: number, t: Pick<KernelTimers, 'gemm16' | 'hbm' | 'fusion'>): { fwd: number; bwd: number } {
  const lora = plan.lora;
  if (!lora || !(T > 0)) return { fwd: 0, bwd: 0 };
  const x = adapterRunOf(plan, B, t.fusion === 'compiled');
  const shapes = loraShapes(plan.model);
  const r = lora.rank;
  const q = dtypeBytes(lora.baseDtype);
  const fourBit = q < 1;
  const tpSize = Math.max(1, tp);
  let fwdBytes = 0, bwdBytes = 0;
  const fwdGemms: Gemm[] = [], bwdGemms: Gemm[] = [];
  for (const name of new Set(lora.targets)) {
    for (const [fullIn, fullOut] of shapes[name] ?? []) {
      const [i, o] = perRank(name, fullIn, fullOut, tpSize);
      const g = loraGemms(T, i, o, r);
      fwdGemms.push(...g.fwd);
      bwdGemms.push(...g.bwd);
      const inp = loraInputBytes(T, i, o, r, x);
      const out = lora.dora ? doraOutputBytes(T, o, x) : loraOutputBytes(T, o, x);
      fwdBytes += inp.fwd + out.fwd;
      bwdBytes += inp.bwd + out.bwd;
      if (lora.dora) {
        fwdBytes += doraWeightBytes(i, o, x) + (fourBit ? dequantBytes(i * o, q, B) : 0);
        fwdGemms.push(...doraWeightGemms(i, o, r));
        if (x.dropout) {
          fwdGemms.push([T, o, i]);
          bwdGemms.push([T, i, o]);
        }
      }
    }
  }
  if (fourBit) {
    for (const name of LAYER_PROJECTIONS) {
      for (const [fullIn, fullOut] of shapes[name] ?? []) {
        const [i, o] = perRank(name, fullIn, fullOut, tpSize);
        fwdBytes += dequantBytes(i * o, q, B);
        bwdBytes += dequantBytes(i * o, q, B);
      }
    }
  }
  const gemms = (list: readonly Gemm[]) => list.reduce((s, [m, n, k]) => s + t.gemm16(m, n, k), 0);
  return { fwd: gemms(fwdGemms) + t.hbm(fwdBytes), bwd: gemms(bwdGemms) + t.hbm(bwdBytes) };
}
