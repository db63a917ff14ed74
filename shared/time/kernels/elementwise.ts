/**
 * HBM bytes of the memory-bound kernels of one transformer layer, per micro-batch on one rank: norms, residual adds,
 * dropout, rotary embedding, the MLP activation and layout copies, counted as fused read+write passes over their
 * tensors times the passes the engine needs (data/time/kernels.json `elementwise`); seconds = bytes / (HBM · fraction).
 */
import kernels from '../../../data/time/kernels.json';
import type { ModelSpec, Plan } from '../../plan/types';
import { precisionRegimeOf } from '../../memory/engine';
import { usesLigerKernel } from '../../plan/liger';

/**
 * How a layer's elementwise ops run: 'fused' (Megatron with TE/Apex), 'compiled' (Inductor), 'eager' (PyTorch ops one
 * by one in an engine's own model code), 'hf' and 'hf-amp' (transformers' eager model code in 16 bits, or with fp32
 * weights under autocast, whose residual stream, norms and rotary tables stay fp32).
 */
export type Fusion = 'eager' | 'compiled' | 'fused' | 'hf' | 'hf-amp';
const E = kernels.elementwise;
type Passes = (typeof E.passes)['eager'];

/**
 * How the engine runs elementwise ops: fused kernels under Megatron (TE/Apex), Inductor under torch.compile,
 * transformers' eager code for Hugging Face models (under autocast with fp32 weights: 'hf-amp'), else eager.
 */
export function fusionOf(plan: Plan): Fusion {
  if (plan.engine === 'megatron') return 'fused';
  if (plan.training.compile) return 'compiled';
  // Only trainers that load transformers' models state it (shared/plan/derived.ts modelImplForFormat); an engine's
  // own model code (llm-foundry's MPT, LitGPT, GPT-NeoX) and files that do not say stay 'eager'.
  if (plan.training.modelImpl !== 'hf') return 'eager';
  // The residual stream is fp32 where the embedding and norms are: fp32 weights under autocast, and a quantized base
  // (PEFT's prepare_model_for_kbit_training casts the layers it does not quantize to fp32); LoRA on a 16-bit base
  // keeps it 16-bit.
  const base = plan.lora?.baseDtype;
  const fp32Stream = !plan.lora || base === 'fp32' || base === 'nf4' || base === 'int8';
  return autocastsWeights(plan) && fp32Stream ? 'hf-amp' : 'hf';
}

/** How the provenance names each mode's pass counts (data/time/kernels.json `elementwise`). */
const FUSION_LABEL: Readonly<Record<Fusion, string>> = {
  eager: "eager PyTorch ops, the engine's own model code",
  compiled: 'torch.compile (Inductor fuses each chain)',
  fused: 'Megatron with Transformer Engine and Apex fused kernels',
  hf: "transformers' eager model code in 16 bits, counted op by op (probe/oracle/layer_traffic.py)",
  'hf-amp': "transformers' eager model code with fp32 weights under autocast (fp32 residual stream and norms, fp32 weights cast at each use), counted op by op (probe/oracle/layer_traffic.py)",
};

/** What the provenance adds for Liger's kernels and fused loss (empty without them). */
export function ligerLabel(plan: Pick<Plan, 'engine' | 'training' | 'lora'>, f: Fusion): string {
  const ops = ligerOpsOf(plan, f);
  const names = ops && (f === 'hf' || f === 'hf-amp') ? [ops.norm && 'RMSNorm', ops.rope && 'RoPE', ops.glu && 'SwiGLU'].filter(Boolean) : [];
  const loss = plan.training.lossFusion === 'liger' ? "Liger's fused linear cross-entropy (chunked head and loss in the forward)"
    : plan.training.lossFusion === 'cce' ? 'Cut Cross-Entropy (no logits in HBM; its backward forms them again, timed without its gradient filter: an upper bound)' : '';
  const parts = [names.length ? `Liger's ${names.join(', ')} kernels` : '', loss].filter(Boolean);
  return parts.length ? `; ${parts.join('; ')}` : '';
}

/** The words the provenance uses for a plan's elementwise passes. */
export function fusionLabel(f: Fusion, upcastNorm: boolean): string {
  return f === 'eager' && upcastNorm ? `${FUSION_LABEL.eager}, RMSNorm upcast to fp32 (counted op by op)` : FUSION_LABEL[f];
}

/** PyTorch ops one at a time (an engine's eager model code or transformers'): no kernel fuses a chain. */
export function isEager(f: Fusion): boolean {
  return f === 'eager' || f === 'hf' || f === 'hf-amp';
}

/** The per-op pass multipliers of a fusion mode, forward. */
export function passesOf(f: Fusion): Passes {
  return E.passes[f];
}

/**
 * Whether the layer's weights are fp32 and cast to 16 bits by autocast at every use (the 'amp' regime: the HF Trainer,
 * Accelerate or Lightning with `bf16`/`fp16` mixed precision and no engine that casts the model whole).
 */
export function autocastsWeights(plan: Pick<Plan, 'engine' | 'training'>): boolean {
  return precisionRegimeOf(plan) === 'amp';
}

/**
 * Which autocast casts a 16-bit linear's weight gets: the forward cast wherever the weight is fp32 (a trained weight in
 * the 'amp' regime, or a frozen base stored in fp32; a 16- or 4-bit base needs none), and the gradient's cast back only
 * where the weight trains.
 */
export function autocastCasts(plan: Pick<Plan, 'engine' | 'training' | 'lora'>, trains: boolean): { fwd: boolean; bwd: boolean } {
  const fwd = autocastsWeights(plan) && (trains || plan.lora?.baseDtype === 'fp32');
  return { fwd, bwd: fwd && trains };
}

/**
 * HBM bytes of autocast's weight casts for `weights` elements: each fp32 weight is read and written as a 16-bit copy
 * at every forward use (4 + 2 bytes per element, `_to_copy` in torch's autocast; the copy is not cached across
 * forwards), and a trainable weight's 16-bit gradient is cast back to fp32 in backward (2 + 4). Measured:
 * probe/oracle/layer_traffic.py. Zero outside the 'amp' regime (a model cast whole, FSDP's or DeepSpeed's
 * 16-bit parameters, Megatron's bf16 copies).
 */
export function autocastWeightCastBytes(weights: number): number {
  return 6 * weights;
}

/** Per-rank widths of one layer: TP-sharded heads and FFN, and the tokens the replicated (norm-region) ops see. */
export interface LayerWidths {
  /** Tokens of the micro-batch on this rank (b·s/cp). */
  readonly tokens: number;
  /** Tokens of the norm/residual/dropout region: tokens/tp under sequence parallelism, else tokens. */
  readonly normTokens: number;
  readonly qHeads: number;
  readonly kvHeads: number;
  /** FFN width of the MLP on this rank. */
  readonly ffn: number;
}

/**
 * Bytes of a layer's memory-bound kernels, forward or backward: 2 norms (2·Tn·h·B each; `upcastNorm` for an RMSNorm
 * written as x.float() … type_as(x), as torchtitan's of 2024 and torchtune's, and Gemma's; 4 norms in Gemma 2 and 3), 2 residual adds (3·Tn·h·B), dropout on
 * both branches when active (Tn·h·(2B+1)), rotary on q and k (2·T·(a+g)·d·B), q/k norms, the MLP activation (gated:
 * 3·T·f·B, plain 2·T·f·B) and q/k/v copies (2·T·(a+2g)·d·B), each × its passes
 * (Korthikanti et al. 2022 Table 2 tensors). Under multi-head latent attention, rotary on the a·d_r query columns and
 * the shared d_r key, the two latent RMSNorms (2·Tn·(r_q + r_kv)·B) and the Q, K, V copies at their own widths
 * (2·T·a·(2·d_qk + d_v)·B). transformers' eager code has backward passes of its own, counted op by op with torch's
 * dispatcher (data/time/kernels.json `backwardPasses`, probe/oracle/layer_traffic.py); the other modes move
 * backwardFactor × their forward.
 */
export function layerElementwiseBytes(m: ModelSpec, w: LayerWidths, actBytes: number, f: Fusion, pass: 'fwd' | 'bwd' = 'fwd', upcastNorm = false, liger?: LigerOps): number {
  const { P, scale } = passTableWith(f, pass, liger);
  const B = actBytes;
  const h = m.hiddenSize;
  const d = m.headDim;
  // Gemma's RMSNorm computes in fp32 to its end (GemmaRMSNorm): it moves what an upcasting norm moves.
  const norm = m.norm === 'rmsnorm' ? (upcastNorm || m.normFp32 ? P.rmsnormUpcast : P.rmsnorm) : P.layernorm;
  // Gemma 2 and 3 norm each block four times (their attention and MLP outputs too).
  const norms = m.sandwichNorms ? 4 : 2;
  let bytes = norms * norm * 2 * w.normTokens * h * B + 2 * P.residual * 3 * w.normTokens * h * B;
  if (m.dropout !== false) bytes += 2 * P.dropout * w.normTokens * h * (2 * B + 1);
  const mla = m.mla;
  if (mla) {
    // MLA (shared/model/mla.ts): rotary on the queries' d_r columns and the one shared rotary key, RMSNorms of the
    // latents on the sequence shard, and the copies that build K (no-position part and broadcast rotary key), Q and V.
    if (m.positions === 'rotary') bytes += P.rotary * 2 * w.tokens * (w.qHeads + 1) * mla.qkRopeHeadDim * B;
    bytes += norm * 2 * w.normTokens * (mla.qLoraRank + mla.kvLoraRank) * B;
    bytes += P.transposes * 2 * w.tokens * w.qHeads * (2 * (mla.qkNopeHeadDim + mla.qkRopeHeadDim) + mla.vHeadDim) * B;
  } else {
    bytes += softmaxHeadBytes(m, w, B, P, norm);
  }
  if (mla && m.qkNorm) bytes += norm * 2 * w.tokens * (w.qHeads + w.kvHeads) * d * B;
  bytes += activationTerm(P, m.gatedMlp, w.tokens * w.ffn, B);
  return scale * bytes;
}

/** Rotary on q and k, the q/k/v copies and the q/k norms of a (non-MLA) softmax-attention layer, at pass counts P. */
function softmaxHeadBytes(m: ModelSpec, w: LayerWidths, B: number, P: Passes, norm: number): number {
  const d = m.headDim;
  let bytes = P.transposes * 2 * w.tokens * (w.qHeads + 2 * w.kvHeads) * d * B;
  if (m.positions === 'rotary') bytes += P.rotary * 2 * w.tokens * (w.qHeads + w.kvHeads) * d * B;
  if (m.qkNorm) bytes += norm * 2 * w.tokens * (w.qHeads + w.kvHeads) * d * B;
  return bytes;
}

/**
 * The part of layerElementwiseBytes a layer has only when it runs softmax attention (rotary, q/k/v copies, q/k norms):
 * what a Gated DeltaNet layer does not move (shared/time/kernels/gatedDeltaNet.ts moves its own).
 */
export function softmaxAttentionElementwiseBytes(m: ModelSpec, w: LayerWidths, actBytes: number, f: Fusion, pass: 'fwd' | 'bwd' = 'fwd', upcastNorm = false, liger?: LigerOps): number {
  if (m.mla) return 0;
  const { P, scale } = passTableWith(f, pass, liger);
  const norm = m.norm === 'rmsnorm' ? (upcastNorm || m.normFp32 ? P.rmsnormUpcast : P.rmsnorm) : P.layernorm;
  return scale * softmaxHeadBytes(m, w, actBytes, P, norm);
}

/**
 * The pass counts of a mode for a pass: its own backward table where it has one (transformers' code, counted op by
 * op), else its forward counts scaled by backwardFactor.
 */
function passTable(f: Fusion, pass: 'fwd' | 'bwd'): { P: Passes; scale: number } {
  const bwdPasses = (E.backwardPasses as Partial<Record<Fusion, Passes>>)[f];
  if (pass === 'fwd') return { P: passesOf(f), scale: 1 };
  return bwdPasses ? { P: bwdPasses, scale: 1 } : { P: passesOf(f), scale: E.backwardFactor };
}

/** Liger-Kernel's kernels that replace transformers' eager ops (TrainingSpec.ligerKernels), and the stream's bytes per element. */
export interface LigerOps {
  readonly norm: boolean;
  readonly rope: boolean;
  readonly glu: boolean;
  /** The residual stream's bytes per element over the compute dtype's (2 under autocast with fp32 weights, else 1). */
  readonly streamRatio: number;
}

/** Liger's kernels of a plan as the elementwise terms take them (undefined without any). */
export function ligerOpsOf(plan: Pick<Plan, 'engine' | 'training' | 'lora'>, f: Fusion): LigerOps | undefined {
  const t = plan.training;
  if (t.ligerKernels === undefined) return undefined;
  return {
    norm: usesLigerKernel(t, 'rms_norm'), rope: usesLigerKernel(t, 'rope'), glu: usesLigerKernel(t, 'swiglu'),
    // transformers' residual stream is fp32 under autocast with fp32 weights (fusionOf: 'hf-amp').
    streamRatio: f === 'hf-amp' ? 2 : 1,
  };
}

/**
 * Passes of Liger's kernels in the units of layerElementwiseBytes' terms (norm 2·B, rotary 2·B, gated activation 3·B
 * per element), forward and backward, from what each Triton kernel reads and writes (liger_kernel/ops at 0.8.2):
 * RMSNorm reads X and writes Y in the stream's dtype S (S/B), its backward reads dY and X and writes dX (1.5·S/B; the
 * weight's partial sums are per SM); on an fp32 stream (autocast with fp32 weights) each linear after a norm casts its
 * fp32 output again, 2.5 casts a norm on average (q, k, v after one, gate and up after the other): 2.5 × (4 + 2) bytes
 * forward, and backward each cast's gradient cast back (2 + 4) and summed in fp32 (12 per add, one fewer than the
 * casts): (42 + 24)/2 bytes, all per element and in passes of 2·B = 4 bytes (3.75 and 8.25); RoPE rewrites q and k in
 * place (1, and 1 for dq, dk); SwiGLU reads the gate and up outputs and writes their product (1), its backward reads
 * dc, a, b and writes da, db (5/3).
 */
export function ligerPasses(op: 'norm' | 'rope' | 'glu', pass: 'fwd' | 'bwd', streamRatio: number): number {
  const casts = streamRatio > 1 ? (pass === 'fwd' ? 3.75 : 8.25) : 0;
  if (op === 'norm') return (pass === 'fwd' ? 1 : 1.5) * streamRatio + casts;
  if (op === 'rope') return 1;
  return pass === 'fwd' ? 1 : 5 / 3;
}

/**
 * The pass table of a mode with Liger's kernels in place of transformers' eager norms, rotary and activation (only
 * transformers' eager modes: compiled and fused modes fuse those ops already). The result is scaled as the table is.
 */
function passTableWith(f: Fusion, pass: 'fwd' | 'bwd', liger: LigerOps | undefined): { P: Passes; scale: number } {
  const base = passTable(f, pass);
  if (!liger || (f !== 'hf' && f !== 'hf-amp') || !(liger.norm || liger.rope || liger.glu)) return base;
  const { P, scale } = base;
  const ratio = liger.streamRatio;
  const norm = liger.norm ? ligerPasses('norm', pass, ratio) / scale : undefined;
  return {
    P: {
      ...P,
      ...(norm !== undefined ? { rmsnorm: norm, rmsnormUpcast: norm } : {}),
      ...(liger.rope ? { rotary: ligerPasses('rope', pass, ratio) / scale } : {}),
      ...(liger.glu ? { gated: ligerPasses('glu', pass, ratio) / scale } : {}),
    },
    scale,
  };
}

/** The MLP activation at pass counts P: gated (act(gate) · up) 3 tensors, plain 2, over `elements` of B bytes. */
function activationTerm(P: Passes, gated: boolean, elements: number, B: number): number {
  return (gated ? P.gated * 3 : P.plain * 2) * elements * B;
}

/**
 * Bytes of the MLP activation over `elements` = rows × FFN width, for the mode and pass (a MoE layer's experts run it
 * on their routed copies, shared/time/layerCost.ts).
 */
export function activationBytes(f: Fusion, gated: boolean, elements: number, B: number, pass: 'fwd' | 'bwd'): number {
  const { P, scale } = passTable(f, pass);
  return scale * activationTerm(P, gated, elements, B);
}

/** Cross-entropy bytes over the logits of one micro-batch on the last stage: T·V/tp elements × bytes per element. */
export function lossBytes(tokens: number, vocabPerRank: number, f: Fusion): { fwd: number; bwd: number } {
  const P = passesOf(f);
  const n = tokens * vocabPerRank;
  return { fwd: n * P.crossEntropyForward, bwd: n * P.crossEntropyBackward };
}

/** Kernels launched per layer [forward, backward], plus FP8 scale/cast kernels for `fp8Gemms` linears. */
export function kernelsPerLayer(f: Fusion, fp8Gemms: number, eagerAttention: boolean): { fwd: number; bwd: number } {
  const [kf, kb] = E.kernelsPerLayer[f];
  const [ff, fb] = E.fp8KernelsPerGemm[f];
  const [af, ab] = eagerAttention ? E.eagerAttentionKernels : [0, 0];
  return { fwd: kf + fp8Gemms * ff + af, bwd: kb + fp8Gemms * fb + ab };
}

/**
 * HBM bytes of the reduction PyTorch's async TP runs after each fused matmul + reduce-scatter, per collective: the
 * micro-pipelined kernel writes every rank's partial product of the T × n output into one stacked buffer and then sums
 * it in one reduction kernel on the compute stream (torch/distributed/_symmetric_memory/__init__.py
 * `_fused_matmul_reduce_scatter_impl`: `_pipelined_produce_and_all2all`, then `reduce_fn` = torch.sum over the
 * group), reading T·n·B and writing T/tp·n·B. NCCL's reduce-scatter reduces inside the collective instead, so only
 * async TP has this kernel, and it is exposed: the next op needs its result.
 */
export function asyncTpReduceBytes(tokens: number, width: number, tp: number, B: number): number {
  return tp > 1 ? tokens * width * B * (1 + 1 / tp) : 0;
}
