/** Layouts the time model and the simulator cannot run: typed problems instead of a wrong picture. */
import type { Plan, Problem } from '../plan/types';
import { microbatchesPerStep } from './shape';
import { windowSkipsBlocks } from './kernels/attention';
import type { PlanPath } from '../plan/paths';
import { expertsGetFp32Inputs, moeHostRegime } from './moeHost';
import { FITTED_PARAMS } from './params';

/** Most forward passes (stages × micro-batches × chunks) one simulation runs. */
export const MAX_PASSES = 2_000_000;

/** Problem constructor. */
function err(code: string, message: string, paths: PlanPath[]): Problem {
  return { code, severity: 'error', message, paths };
}

/** Whether x is a positive integer. */
function isPositiveInteger(x: number): boolean {
  return Number.isInteger(x) && x >= 1;
}
const posInteger = isPositiveInteger;

/**
 * Checks what a schedule needs: positive degrees and sizes, pp ≤ layers, b·d ≤ B, an explicit stage split that sums to
 * the layers, and for the interleaved schedule m a multiple of p (Narayanan et al. 2021 §2.2.2) and v dividing each stage
 * (even splits) or at most the layers of each stage (explicit splits).
 */
export function layoutProblems(plan: Plan): Problem[] {
  const out: Problem[] = [];
  const par = plan.parallel;
  const tr = plan.training;
  for (const [k, v] of [['tp', par.tp], ['pp', par.pp], ['dp', par.dp], ['cp', par.cp], ['ep', par.ep], ['vpp', par.vpp]] as const) {
    if (!posInteger(v)) out.push(err('bad-degree', `Parallel degree ${k} = ${v} must be a positive integer.`, [`parallel.${k}`]));
  }
  for (const [k, v] of [['microBatch', tr.microBatch], ['seqLen', tr.seqLen], ['globalBatch', tr.globalBatch]] as const) {
    if (!posInteger(v)) out.push(err('bad-size', `training.${k} = ${v} must be a positive integer.`, [`training.${k}`]));
  }
  for (const [k, v] of [['layers', plan.model.layers], ['hiddenSize', plan.model.hiddenSize], ['heads', plan.model.heads], ['headDim', plan.model.headDim]] as const) {
    if (!posInteger(v)) out.push(err('bad-size', `model.${k} = ${v} must be a positive integer.`, [`model.${k}`]));
  }
  if (out.length) return out;
  const p = par.pp;
  if (p > plan.model.layers) {
    out.push(err('pp-exceeds-layers', `${p} pipeline stages for ${plan.model.layers} layers: some stages would hold no layer.`, ['parallel.pp', 'model.layers']));
  }
  if (tr.microBatch * par.dp > tr.globalBatch) {
    out.push(err('micro-batch-too-large',
      `Micro batch ${tr.microBatch} × DP ${par.dp} = ${tr.microBatch * par.dp} exceeds the global batch ${tr.globalBatch}.`,
      ['training.microBatch', 'training.globalBatch', 'parallel.dp']));
  }
  const given = par.stageLayers;
  if (given && (given.length !== p || given.reduce((a, b) => a + b, 0) !== plan.model.layers || given.some((x) => !posInteger(x)))) {
    out.push(err('stage-layers', `The stage split [${given.join(', ')}] must have ${p} positive entries summing to ${plan.model.layers} layers.`, ['parallel.stageLayers']));
  }
  if (par.schedule === 'interleaved') {
    const m = microbatchesPerStep(plan);
    if (m % p !== 0) {
      out.push(err('interleaved-microbatches', `The interleaved schedule needs the micro-batch count (${m}) to be a multiple of the pipeline size (${p}).`,
        ['training.gradAccum', 'parallel.pp']));
    }
    // An even split needs v to divide each stage; an explicit (uneven) split needs at least v layers per stage, its
    // chunks as even as the counts allow (Llama 3 §3.3.2: one layer less on the first and last stage, interleaved).
    if (given ? given.some((x) => x < par.vpp) : !Number.isInteger(plan.model.layers / p / par.vpp) || plan.model.layers / p / par.vpp < 1) {
      out.push(err('vpp-divides-layers', given ? `${par.vpp} virtual chunks need at least ${par.vpp} layers on every stage.` : `${par.vpp} virtual chunks do not divide the layers of each stage.`,
        ['parallel.vpp', 'model.layers']));
    }
  }
  if (par.pp * microbatchesPerStep(plan) * (par.schedule === 'interleaved' ? par.vpp : 1) > MAX_PASSES) {
    out.push(err('simulation-too-large', `More than ${MAX_PASSES} pipeline passes per step; reduce gradient accumulation to simulate.`, ['training.gradAccum']));
  }
  if (!(plan.cluster.gpu.hbmBandwidth > 0)) out.push(err('gpu-data', `GPU ${plan.cluster.gpu.name} has no HBM bandwidth.`, ['cluster.gpu']));
  return out;
}

/**
 * The checks of layoutRunnable that read only the parallel spec, the model and the GPU (a layout's cache entry keeps
 * the answer: the planner evaluates every micro batch and recomputation choice of a layout in a row).
 */
export function layoutChecksRunnable(plan: Plan): boolean {
  const par = plan.parallel;
  const model = plan.model;
  const ok = isPositiveInteger;
  let runnable = ok(par.tp) && ok(par.pp) && ok(par.dp) && ok(par.cp) && ok(par.ep) && ok(par.vpp)
    && ok(model.layers) && ok(model.hiddenSize) && ok(model.heads) && ok(model.headDim)
    && par.pp <= model.layers && plan.cluster.gpu.hbmBandwidth > 0;
  const given = par.stageLayers;
  if (runnable && given) runnable = splitRunnable(plan, given);
  if (runnable && par.schedule === 'interleaved' && !given) runnable = model.layers % (par.pp * par.vpp) === 0;
  return runnable;
}

/**
 * Allocation-free version of layoutProblems for the planner's fast path: true when no error would be reported.
 * `layoutOk` is layoutChecksRunnable's answer when the caller has it cached.
 */
export function layoutRunnable(plan: Plan, layoutOk: boolean = layoutChecksRunnable(plan)): boolean {
  if (!layoutOk) return false;
  const ok = isPositiveInteger;
  const par = plan.parallel;
  const tr = plan.training;
  if (!ok(tr.microBatch) || !ok(tr.seqLen) || !ok(tr.globalBatch) || tr.microBatch * par.dp > tr.globalBatch) return false;
  return par.schedule !== 'interleaved' || microbatchesPerStep(plan) % par.pp === 0;
}

/** An explicit stage split: p positive integers summing to the layers, each at least VPP when interleaved. */
function splitRunnable(plan: Plan, given: readonly number[]): boolean {
  const par = plan.parallel;
  if (given.length !== par.pp) return false;
  let sum = 0;
  for (const x of given) {
    if (!isPositiveInteger(x) || (par.schedule === 'interleaved' && x < par.vpp)) return false;
    sum += x;
  }
  return sum === plan.model.layers;
}

/**
 * What the step time rests on without modelling it, as warnings at the input: torchao's rowwise float8 linears are
 * timed as tensorwise ones (one FP8 GEMM rate), while torchtitan's June-2025 async-TP benchmark measured them 26–34 %
 * slower than tensorwise on the same layouts (pytorch/torchtitan benchmarks/asyncTP_llama3_h100_2025-06_torchtitan.md:
 * Llama 3.1 70B 599.6 vs 809.8 and 624.8 vs 942.4, 8B 3708.5 vs 5078.1 and 3914.9 vs 5570.1 tokens/s/GPU).
 */
export function timeAssumptionWarnings(plan: Plan): Problem[] {
  const out: Problem[] = [];
  const fp8 = plan.training.fp8;
  if (plan.training.precision === 'fp8-mixed' && fp8?.recipe === 'rowwise' && plan.engine !== 'megatron' && plan.engine !== 'nanotron') {
    out.push({
      code: 'fp8-rowwise-timing', severity: 'warning', paths: ['training.fp8.recipe'],
      message: 'Rowwise float8 is timed like tensorwise: torchtitan measured rowwise 26–34 % slower on the same layouts (benchmarks/asyncTP_llama3_h100_2025-06), so the step time here is likely too short.',
    });
  }
  if (plan.model.moe && plan.model.moe.experts > 1) out.push(moeHostProblem(plan));
  if (plan.model.moe && plan.model.moe.experts > 1 && expertsGetFp32Inputs(plan)) out.push(FP32_EXPERTS_WARNING);
  if (plan.model.attentionSinks) out.push(ATTENTION_SINK_WARNING);
  if (plan.training.optimizer === 'muon') out.push(MUON_STEP_INFO);
  const sw = plan.model.slidingWindow;
  if (sw && sw.window < plan.training.seqLen) out.push(slidingWindowTiming(plan, sw));
  if (plan.training.packing === 'varlen' && plan.training.flashAttention) out.push(packedAttentionTiming(plan.training.seqLen, plan.training.sampleTokens));
  return out;
}

/**
 * Packed samples whose attention stays within each sample: the kernel computes Σ lᵢ² / 2 score elements for samples
 * of lᵢ tokens, at most the S² / 2 of one S-token sequence (equal only for one sample per sequence). The sample lengths
 * are in the dataset, not the config, so attention is timed for whole sequences (an upper bound) unless the setting
 * shardlens.sampleTokens states their mean length (kernels/attention.ts packedSamples: equal lengths assumed, a lower
 * bound for that mean); every other term counts tokens and does not depend on how they are split.
 */
function packedAttentionTiming(seq: number, sampleTokens: number | undefined): Problem {
  const S = seq.toLocaleString('en-US');
  if (sampleTokens !== undefined && sampleTokens > 0 && sampleTokens < seq) {
    return {
      code: 'packed-attention-timing', severity: 'info', paths: ['training.packing', 'training.sampleTokens'],
      message: `Packed samples attend only within themselves: attention is timed for samples of ${sampleTokens.toLocaleString('en-US')} tokens (shardlens.sampleTokens), ${(seq / sampleTokens).toFixed(1)} to a ${S}-token sequence, all of that length. A spread of lengths costs more (a sample of l tokens costs l² / 2 score elements): the attention time is a lower bound for that mean.`,
    };
  }
  return {
    code: 'packed-attention-timing', severity: 'info', paths: ['training.packing'],
    message: `Packed samples attend only within themselves, but attention is timed over whole ${S}-token sequences (the sample lengths are in the dataset): the attention time, and so the step time, is an upper bound. A sample of l tokens costs l² / 2 score elements, so samples averaging a quarter of the sequence need about a quarter of the attention time shown; set shardlens.sampleTokens to your dataset's mean sample length to time that. The linears, memory and communication count tokens and are unaffected.`,
  };
}

/**
 * How the step time counts a sliding window the sequence outgrows (kernels/attention.ts windowSkipsBlocks): with the
 * window where the kernel skips the blocks outside it, else as full causal attention, with the setting that would skip.
 */
function slidingWindowTiming(plan: Plan, sw: NonNullable<Plan['model']['slidingWindow']>): Problem {
  const what = sw.chunked
    ? `Attention runs within chunks of ${sw.window} tokens in ${sw.slidingLayers} of ${plan.model.layers} layers`
    : `Attention slides over ${sw.window} tokens in ${sw.slidingLayers} of ${plan.model.layers} layers`;
  if (windowSkipsBlocks(plan)) {
    return { code: 'sliding-window-timing', severity: 'info', paths: ['model'], message: `${what}: timed with the ${sw.chunked ? 'chunks' : 'window'} (the kernel skips the blocks outside ${sw.chunked ? 'them' : 'it'}).` };
  }
  const why = !plan.training.flashAttention ? 'eager attention computes every block'
    : plan.parallel.cp > 1 ? 'ring attention under context parallelism is not modelled with a window'
      : 'PyTorch SDPA with the sliding mask computes every block; FlashAttention-2 (attn_implementation flash_attention_2, or the trainer\'s flash-attention setting) skips them';
  return { code: 'sliding-window-timing', severity: 'info', paths: ['training.flashAttention'], message: `${what}: timed as full causal attention (${why}).` };
}

/**
 * Muon's step (Liu et al. 2025, arXiv:2502.16982 §2) orthogonalises each weight matrix's momentum with a few
 * Newton-Schulz iterations of matrix products, on whole matrices (distributed Muon gathers each ZeRO shard's matrix
 * first): only its element-wise momentum update is timed here (data/timing.json).
 */
const MUON_STEP_INFO: Problem = {
  code: 'muon-step-timing', severity: 'info', paths: ['training.optimizer'],
  message: 'Muon\'s optimizer step is timed as its momentum update only: the Newton-Schulz iterations on each weight matrix and the gathers distributed Muon needs to run them on whole matrices are not in the step time, which is a lower bound for that step. Its memory is one momentum per weight-matrix parameter and AdamW\'s two for the embedding, head and norms.',
};

/**
 * Engines other than Megatron sync on the tokens per expert too (torchtitan's all-to-all split sizes, DeepSpeed's MoE
 * layer), but no published run measures what it costs them: their MoE layers are timed as their kernels and dispatch,
 * and the plan is told the host work is left out (shared/time/moeHost.ts). transformers' models get MOE_HF_INFO.
 */
const MOE_HOST_WARNING: Problem = {
  code: 'moe-host-timing', severity: 'warning', paths: ['model.moe.experts', 'model.moe', 'parallel.ep', 'training.cudaGraph'],
  message: 'MoE step time leaves out the host work of routing for this engine (a per-layer sync for the tokens per expert, then the host launching the rest of the layer): it is measured for Megatron only, where it costs about 3.5 ms per MoE layer forward and micro-batch without a full-iteration CUDA graph, so the step time here is likely too short.',
};

/**
 * Megatron's MoE layers without a full-iteration graph or the EP overlap carry the fitted host constant
 * (shared/time/moeHost.ts): what it is, where it comes from and how far it holds. A warning, for the spread no constant
 * follows: Megatron-Bridge measured one Qwen3-30B-A3B layout on 16 H100 at 5,113 and 9,058 tokens/s/GPU in two
 * point releases of one container (26.02 and 26.02.01, docs/performance-summary-archive.md).
 */
function moeHostCharged(): Problem {
  const ms = ((FITTED_PARAMS.moeHostSeconds ?? 0) * 1e3).toFixed(1);
  return {
    code: 'moe-host-timing', severity: 'warning', paths: ['model.moe.experts', 'model.moe', 'parallel.ep', 'training.cudaGraph'],
    message: `MoE layers carry ${ms} ms of host work per layer forward and micro-batch (the sync for the tokens per expert, then the host launching the rest of the layer): fitted on Megatron-Bridge runs without a full-iteration CUDA graph (Qwen3-30B-A3B on H100, B200, B300, GB200 and GB300, DeepSeek-V3 on B300), each within 11 % when left out of the fit, but one layout measured 1.77× apart between two point releases, so this share of the step is the least certain. A full-iteration CUDA graph (--cuda-graph-impl full_iteration) or the EP overlap (--overlap-moe-expert-parallel-comm) takes it out of the step.`,
  };
}

/**
 * What a MoE plan is told about the host work of routing (shared/time/moeHost.ts): nothing charged under a
 * full-iteration CUDA graph, under drop and pad with a dispatcher that then copies nothing to the host (Megatron's
 * all-to-all and flex dispatchers skip the device-to-host copy of the tokens per expert when `drop_and_pad`,
 * token_dispatcher.py `_maybe_dtoh_and_synchronize`; the all-gather dispatcher copies them always), or under the EP
 * overlap; the fitted constant for Megatron otherwise; the warning that it is left out for other engines.
 */
function moeHostProblem(plan: Plan): Problem {
  switch (moeHostRegime(plan)) {
    case 'graphed': return MOE_GRAPHED_INFO;
    case 'no-sync': {
      const c = plan.model.moe?.capacityFactor;
      return {
        code: 'moe-host-timing', severity: 'info', paths: ['model.moe.capacityFactor', 'model.moe'],
        message: `MoE layers are timed as their kernels and dispatch: dropping and padding to capacity (factor ${c}) gives every expert ${c}× the balanced tokens, which the expert GEMMs and the all-to-all carry, and spares the per-layer copy of the tokens per expert to the host.`,
      };
    }
    case 'overlapped': return MOE_OVERLAP_INFO;
    case 'sync-free': return MOE_HF_INFO;
    case 'hf-loop': return MOE_HF_LOOP_WARNING;
    case 'local-dispatch': return MOE_LOCAL_INFO;
    case 'unmeasured-engine': return MOE_HOST_WARNING;
    default: return moeHostCharged();
  }
}

/**
 * transformers 5 runs a MoE layer's experts as grouped GEMMs whose offsets it computes on the GPU (integrations/moe.py
 * `grouped_mm_experts_forward`, the default `experts_implementation` where torch has grouped_mm for the GPU), so no
 * host sync enters the step; its routing is timed as that code's ops (shared/time/kernels/moeRouting.ts).
 * transformers 4 looped over the experts (`torch.where` per expert), as `experts_implementation="eager"` still does.
 */
const MOE_HF_INFO: Problem = {
  code: 'moe-host-timing', severity: 'info', paths: ['model.moe.experts', 'model.moe'],
  message: 'MoE layers are timed as transformers 5 runs them by default: the experts as grouped GEMMs (experts_implementation "grouped_mm", on GPUs from the A100 with torch ≥ 2.9), sized on the GPU, so no host sync is charged, and the routing as that code\'s gathers, weighting and sums. transformers 4, and experts_implementation "eager", loop over the experts with a host sync for each and run slower than this.',
};

/**
 * torchtitan without expert parallelism routes on the GPU: its LocalTokenDispatcher sorts the routed tokens by expert
 * (argsort) and the grouped GEMMs take offsets from a cumsum of the tokens per expert (torchtitan
 * models/common/token_dispatcher.py), so no host sync enters the layer; with EP its all-to-all needs the split sizes on
 * the host (the same file), which the step leaves out (MOE_HOST_WARNING).
 */
const MOE_LOCAL_INFO: Problem = {
  code: 'moe-host-timing', severity: 'info', paths: ['model.moe.experts', 'model.moe', 'parallel.ep'],
  message: 'MoE layers are timed as their kernels: without expert parallelism torchtitan sorts the routed tokens and sizes its grouped GEMMs on the GPU, so no host sync is charged. With expert parallelism its all-to-all copies the split sizes to the host in every MoE layer, which this step time does not count.',
};

/**
 * transformers' other experts implementations, where a file names one (training.expertsImpl): `eager` loops over the
 * experts hit, each with a `torch.where` that syncs the host (integrations/moe.py, the models' eager experts forward);
 * `batched_mm` gathers each routed copy's expert weights and runs batched matmuls (`batched_mm_experts_forward`), made
 * for small inference batches. Neither is timed: the experts stay timed as grouped GEMMs.
 */
const MOE_HF_LOOP_WARNING: Problem = {
  code: 'moe-host-timing', severity: 'warning', paths: ['training.expertsImpl', 'model.moe'],
  message: 'experts_implementation "eager" loops over the experts in Python with a host sync for each, and "batched_mm" gathers every routed copy\'s expert weights: both run far slower in training than the grouped GEMMs (transformers 5\'s default, "grouped_mm") this step time assumes.',
};

/**
 * transformers 5's grouped-GEMM experts with fp32 weights under autocast get fp32 inputs, which torch's CUDA grouped
 * GEMM does not take (shared/time/moeHost.ts expertsGetFp32Inputs): the run stops in the first MoE layer. The step is
 * still timed, as the experts would run in bf16 (transformers 4's per-expert linears, which autocast casts).
 */
const FP32_EXPERTS_WARNING: Problem = {
  code: 'moe-fp32-experts', severity: 'warning', paths: ['training.precision', 'model.moe'],
  message: 'With fp32 weights under autocast, transformers 5 hands its grouped-GEMM experts fp32 inputs (the GEMM is not autocast-enabled and takes the weights\' dtype), and torch\'s CUDA grouped GEMM takes bf16 only: the run stops with "Expected inputs of BF16 type". Load the model in bf16 (bf16-true), use FSDP or DeepSpeed mixed precision, or set experts_implementation="eager" (a loop over the experts, slower than timed here). The step time assumes the experts run in bf16.',
};

/**
 * With Megatron's EP overlap the 1F1B steady state merges one micro-batch's forward with another's backward
 * (megatron/core/pipeline_parallel/combined_1f1b.py): while the host waits on the routing sync, the other
 * micro-batch's backward is still queued, so no host time is charged. Megatron-Bridge's 26.04.01 Qwen3-235B-A22B row
 * on 256 H100 runs so without CUDA graphs and reads −11 % without it (docs/time-model.md#7-calibration-in-the-open).
 */
const MOE_OVERLAP_INFO: Problem = {
  code: 'moe-host-timing', severity: 'info', paths: ['parallel.epCommOverlap', 'model.moe'],
  message: 'MoE layers are timed as their kernels and dispatch: the EP overlap (--overlap-moe-expert-parallel-comm) keeps another micro-batch\'s backward queued while the host syncs on the tokens per expert, so no host work is charged to the step.',
};

/**
 * Attention sinks (a per-head offset in the softmax's denominator: gpt-oss, Megatron `--softmax-type learnable`) are
 * timed as plain fused attention, for want of a published rate of the kernels that run them. Megatron-Bridge's 26.06
 * GPT OSS 120B row on 64 GB200 under a full-iteration CUDA graph is a third slower than this model gives (+51 %),
 * where Qwen3-30B-A3B, without sinks, is within 4 % on GB200 and B300, and the 64 H100 row is +14 % with the MoE host
 * constant charged: the gap follows the model, not the host (docs/time-model.md#7-calibration-in-the-open).
 */
const ATTENTION_SINK_WARNING: Problem = {
  code: 'attention-sink-timing', severity: 'warning', paths: ['model.attentionSinks', 'model'],
  message: 'Attention sinks (a learned softmax offset per head, as gpt-oss has) are timed as plain fused attention: Megatron-Bridge measured GPT OSS 120B a third slower than this model gives on 64 GB200 under a full-iteration CUDA graph (so not for host work) and 14 % slower on 64 H100, so the step time here is likely too short.',
};

/**
 * Under a full-iteration CUDA graph (Megatron `--cuda-graph-impl full_iteration`: one graph for the forward-backward
 * pass, the optimizer step excluded) the host launches nothing per layer, so the routing sync and the expert GEMMs'
 * launches leave the step and the MoE layers are timed as their kernels and dispatch. Megatron-Bridge's 26.06 rows
 * whose MXFP8 presets run such a graph (Qwen3-30B-A3B on 8 GB200 and 8 B300, Qwen3-235B-A22B on 256 GB200) are within
 * 10 % of this model (docs/time-model.md#7-calibration-in-the-open).
 */
const MOE_GRAPHED_INFO: Problem = {
  code: 'moe-host-timing', severity: 'info', paths: ['training.cudaGraph', 'model.moe'],
  message: 'MoE layers are timed as their kernels and dispatch: the whole forward-backward pass replays as one CUDA graph (--cuda-graph-impl full_iteration), so the host work of routing is not in the step.',
};
