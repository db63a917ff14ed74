/**
 * The kernels LoRA and DoRA adapters add to one adapted projection (W frozen, [in → out] = [i → o] on the rank), and a
 * 4-bit base weight's dequantization: the adapters' matrix products by shape, and the bytes of their data-moving ops.
 *
 * Counted from the implementations' forward code and checked op by op against what torch dispatches for PEFT 0.21
 * (probe/oracle/adapter_traffic.py, test/probe/adapterTraffic.test.ts): PEFT `peft/tuners/lora/layer.py` Linear.forward
 * (`result + lora_B(lora_A(dropout(x))) * scaling`, the input cast to the adapters' dtype first), `dora.py`
 * DoraLinearLayer.forward; torchtune `modules/peft/lora.py` LoRALinear and LitGPT `lora.py` LoRALinear compute the same
 * sum without casts. Bytes count one read of every input and one write of every output of each op.
 */

/** How one adapter runs on a rank. */
export interface AdapterRun {
  /** Bytes of an activation element in the compute dtype (B). */
  readonly B: number;
  /**
   * Bytes of an adapter weight element (a): PEFT keeps adapters in fp32 beside a 16-bit base (get_peft_model's
   * autocast_adapter_dtype, its default), casts the input to fp32 before them and autocast casts it back for the
   * matmul; torchtune, LitGPT and Megatron adapters sit in the compute dtype (a = B, no casts).
   */
  readonly a: number;
  /** Dropout on the adapter's input (p > 0). */
  readonly dropout: boolean;
  /** Inductor fuses the output's scale and add into one kernel (torch.compile). */
  readonly compiled: boolean;
}

/** An M×N×K matrix product. */
export type Gemm = readonly [number, number, number];

/**
 * The adapter's matrix products on T tokens at rank r: forward x·Aᵀ (T×r×i) and (xAᵀ)·Bᵀ (T×o×r); backward B's weight
 * and input gradients (o×r×T, T×r×o) and A's (r×i×T, T×i×r) (Hu et al. 2021 Eq. 3; autograd of the two linears).
 */
export function loraGemms(T: number, i: number, o: number, r: number): { readonly fwd: readonly Gemm[]; readonly bwd: readonly Gemm[] } {
  return { fwd: [[T, r, i], [T, o, r]], bwd: [[o, r, T], [T, r, o], [r, i, T], [T, i, r]] };
}

/**
 * Bytes of a fused dropout on an n-element input of e-byte elements, forward or backward (native_dropout and its
 * backward on CUDA: read e, write e and a 1-byte mask; backward reads the gradient and the mask, writes e): (2e + 1)·n.
 */
export function dropoutBytes(n: number, e: number): number {
  return (2 * e + 1) * n;
}

/**
 * HBM bytes of one LoRA adapter's data-moving ops on its input side, per pass, on T tokens: the input gradient's
 * accumulation into the base linear's, 3·B·T·i (backward); with PEFT's fp32 adapters the input's two casts,
 * 2·(a + B)·T·i, and the weights' casts to the compute dtype, (a + B)·r·(i + o), in each pass (the backward casts the
 * input gradient and the weight gradients back); dropout, (2a + 1)·T·i in each pass.
 */
export function loraInputBytes(T: number, i: number, o: number, r: number, x: AdapterRun): { readonly fwd: number; readonly bwd: number } {
  const casts = x.a !== x.B ? 2 * (x.a + x.B) * T * i + (x.a + x.B) * r * (i + o) : 0;
  const drop = x.dropout ? dropoutBytes(T * i, x.a) : 0;
  return { fwd: casts + drop, bwd: 3 * x.B * T * i + casts + drop };
}

/**
 * HBM bytes of one LoRA adapter's output ops, per pass, on T tokens: forward the scale and the add to the base output,
 * 5·B·T·o (s·BAx reads and writes T·o; Wx + s·BAx reads two and writes one), 3·B·T·o when compiled (one fused kernel);
 * backward the output gradient's scale, 2·B·T·o.
 */
export function loraOutputBytes(T: number, o: number, x: Pick<AdapterRun, 'B' | 'compiled'>): { readonly fwd: number; readonly bwd: number } {
  return { fwd: (x.compiled ? 3 : 5) * x.B * T * o, bwd: 2 * x.B * T * o };
}

/**
 * DoRA's weight pass in every forward of one adapted projection (PEFT DoraLinearLayer: no cache while training), bytes
 * besides its two matrix products (doraWeightGemms): the identity of width i in the adapters' dtype, a·i², cast for
 * the matmul, (a + B)·i² (with fp32 adapters); B·A and W brought to the input's dtype (a, after PEFT's cast), 2·(a +
 * B)·i·o with fp32 adapters; W + s·B·A, a scale (2a·i·o) and an add (3a·i·o); the column norm reads it, a·i·o.
 */
export function doraWeightBytes(i: number, o: number, x: Pick<AdapterRun, 'a' | 'B'>): number {
  const casts = x.a !== x.B ? (x.a + x.B) * (i * i + 2 * i * o) : 0;
  return x.a * i * i + casts + 6 * x.a * i * o;
}

/** DoRA's weight-pass matrix products: the identity through A (i×r×i) and through B (i×o×r) (get_lora_weight). */
export function doraWeightGemms(i: number, o: number, r: number): readonly Gemm[] {
  return [[i, r, i], [i, o, r]];
}

/**
 * Bytes of DoRA's output ops on T tokens, per pass, in place of LoRA's (loraOutputBytes; the input side is LoRA's):
 * forward (m − 1)·Wx and m·(BAx) (each reads B and writes a per element), the scale (2a), their sum (3a), the add to
 * the base output (B + 2a) and, with fp32 adapters, the cast back (a + B): (3B + 9a)·T·o, + (a + B)·T·o with casts;
 * backward the output gradient's casts ((a + B) twice with fp32 adapters), the scale (2a), each product's two
 * gradients (2a, 2a + B) and the magnitude's sum over tokens (a), the two input gradients' casts back ((a + B) twice)
 * and their sum (3B): (12a + 5B)·T·o, + 4·(a + B)·T·o with casts.
 */
export function doraOutputBytes(T: number, o: number, x: Pick<AdapterRun, 'a' | 'B'>): { readonly fwd: number; readonly bwd: number } {
  const casts = x.a !== x.B;
  return {
    fwd: (3 * x.B + 9 * x.a + (casts ? x.a + x.B : 0)) * T * o,
    bwd: (12 * x.a + 5 * x.B + (casts ? 4 * (x.a + x.B) : 0)) * T * o,
  };
}

/**
 * Bytes of dequantizing one 4-bit base weight of n parameters for a matmul (bitsandbytes MatMul4Bit forward and its
 * input-gradient backward, torchao's NF4 linear the same): read the packed weight and its block scales (q bytes per
 * parameter, the memory model's NF4 size), write the B-byte copy the matmul reads.
 */
export function dequantBytes(n: number, q: number, B: number): number {
  return (q + B) * n;
}
