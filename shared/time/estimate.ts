/**
 * estimateStepTime: the traceable step-time result. Every figure names its formula, citation and inputs.
 * FLOP convention (stated in the result): 2 FLOPs per multiply-add, full s×s attention (no causal halving), LM head
 * included; model FLOPs = forward + backward (MFU, PaLM / Narayanan et al. 2021), hardware FLOPs add recomputation (HFU).
 */
import type { InputSource, Plan } from '../plan/types';
import type { TermInput } from '../plan/result';
import type { Collective } from '../comm/types';
import { TimeCache } from './cache';
import { timeContext } from './context';
import { FIT_PROVENANCE } from './params';
import { PART_NAMES, type PartName } from './parts';
import { layoutProblems, timeAssumptionWarnings } from './problems';
import { chunksPerStage, microbatchesPerStep, peakFlops, posInt } from './shape';
import { allStageTimings, type StageTiming } from './stage';
import { exposedGradSync, pipelineHops, pipelineSeconds, stageMicrobatchSeconds, stepTailSeconds } from './stepTime';
import { scheduleTimes } from '../sim/run';
import type { PlanPath } from '../plan/paths';
import type { OperatorTerm, StepTimeEstimate, TimeTerm, TimeTermName } from './types';

export const FLOP_CONVENTION =
  '2 FLOPs per multiply-add; full s×s attention (no causal halving); LM head included. MFU counts forward + backward '
  + '(3× forward); HFU adds recomputation (Narayanan et al. 2021 Eq. 3, Korthikanti et al. 2022 App. A). Peak = the '
  + 'datasheet dense peak of the compute dtype (FP8 runs: the FP8 peak). tokens/s = global batch × sequence / step; '
  + 'tokens/s/GPU divides by the world size (docs/time-model.md).';

/** Labels, formulas and sources of the operator terms. */
const OPERATOR_INFO: Readonly<Record<PartName | 'stepOverhead', readonly [string, string, string]>> = {
  gemm: ['GEMMs (QKV, output, MLP, LM head, experts)', 'Σ fixed + max(2MNK(1 + kHalf/K)/(peak·MAMF·clock·gemmScale·wave·tile), bytes/HBM) over the engine\'s modules (QKV and gate+up fused in Megatron/nanotron, separate in torchtitan and HF Llama); backward = dgrad + wgrad',
    'NVIDIA Matrix Multiplication Background guide (wave/tile quantization); OpenXLA cuBLAS table (curve fit); ml-engineering MAMF table; docs/time-model.md#gemms-kernelsgemmts'],
  attention: ['Core attention', 'fused: 4·T·s·a·d_h·(½ causal)/(peak·curve(s, d_h, mask)·attentionScale), backward 2.5×; eager: QKᵀ and AV GEMMs + softmax bytes',
    'Shah et al. 2024 (FlashAttention-3) Figs. 5–6; Dao 2023 (FlashAttention-2) §4.1'],
  elementwise: ['Memory-bound kernels', 'bytes of norms, residuals, dropout, rotary, activation, loss × engine passes / (HBM · memoryFraction); backward 2× (eager norms and rotary, transformers\' eager code: their own backward passes, counted with torch\'s dispatcher); autocast\'s fp32 weight casts 6 bytes per weight forward and per trainable weight backward; CP merges; PyTorch async TP\'s partial-sum kernel T·h·B(1 + 1/tp) per reduce-scatter',
    'Korthikanti et al. 2022 Table 2 (tensors); data/time/kernels.json (passes per engine); probe/oracle/layer_traffic.py (transformers\' Llama layer, counted op by op); torch/distributed/_symmetric_memory (_fused_matmul_reduce_scatter_impl); docs/time-model.md#memory-bound-kernels-kernelselementwisets'],
  fp8: ['FP8 casts and transposes', 'per FP8 linear: input (B+1)·MK, weight (B+1)·NK, grad (B+1)·MN + transposes / HBM',
    'Micikevicius et al. 2022 (FP8 formats); Transformer Engine and torchao float8 docs'],
  adapters: ['LoRA adapters', 'per adapted projection: x·Aᵀ and (xAᵀ)·Bᵀ with their input and weight gradients on the GEMM curve, + bytes/HBM of the output scale and add (5B·T·o; 3B compiled), the input gradient\'s sum (3B·T·i), PEFT\'s fp32 casts (2(a+B)·T·i per pass) and dropout; DoRA: its output ops and a weight pass per forward (eye·Aᵀ·Bᵀ, W + s·BA, column norm); 4-bit bases: dequantization before each forward and input-gradient matmul',
    'Hu et al. 2021 (LoRA); Liu et al. 2024 (DoRA) §4.3; peft/tuners/lora/layer.py, dora.py; torchtune modules/peft/lora.py; bitsandbytes MatMul4Bit; probe/oracle/adapter_traffic.py; docs/time-model.md#lora-adapters-kernelsadaptersts-adaptersts'],
  launch: ['Kernel launch gaps', 'kernels per layer (engine, FP8) × kernelGap', 'data/time/kernels.json kernelsPerLayer; fitted kernelGap'],
  host: ['Host work of MoE routing', 'MoE layers × moeHostSeconds per forward, where the host launches the layer (a per-layer sync for the tokens per expert, no full-iteration CUDA graph, no EP overlap)',
    'megatron/core/transformer/moe/token_dispatcher.py (_maybe_dtoh_and_synchronize); fitted on Megatron-Bridge rows, data/time/moeHost.json; docs/time-model.md#expert-parallel-dispatch'],
  comm: ['Exposed in-layer communication', 'TP: max(0, c − g) + overlapCost·min(c, g) per collective with overlap, else c; CP: PyTorch one K/V all-gather behind the first block + (cp−1) dK/dV steps, TE (cp−1)·exposed step; EP all-to-all',
    'Narayanan et al. 2021 §3.2; Liu et al. 2023 (Ring Attention); torch/distributed/tensor/experimental/_attention.py (_AllGatherRotater); Wang et al. 2022 (TP overlap)'],
  stepOverhead: ['Fixed per-step overhead', 'fitted seconds per step (gradient-norm reduction, clipping, scheduler, data loading)', FIT_PROVENANCE],
};

/** The operator terms of the busiest stage, per pass and per step. */
export function operatorTerms(busiest: StageTiming, m: number, stepOverhead: number, provenance: readonly string[]): OperatorTerm[] {
  const p = busiest.work.parts;
  // A cluster calibration's kernel speed applies to every kernel term (not to collectives or launch gaps).
  const speed = provenance.find((x) => x.startsWith('kernels:'));
  const src = (name: PartName): string => {
    const key = name === 'gemm' || name === 'fp8' ? 'GEMM' : name === 'attention' ? 'attention' : name === 'comm' ? 'collectives'
      : name === 'launch' || name === 'host' ? name : 'memory-bound';
    const found = provenance.find((x) => x.startsWith(`${key}:`));
    // No host line: no MoE layer, or the host is out of the step (shared/time/moeHost.ts); nothing is charged.
    const base = found ?? (name === 'host' ? 'host: none charged (no MoE layer the host launches one by one)' : `${key}: catalog curves, ${FIT_PROVENANCE}`);
    return speed && name !== 'comm' && name !== 'launch' && name !== 'host' ? `${base}; ${speed}` : base;
  };
  const out: OperatorTerm[] = PART_NAMES.map((name) => {
    const [label, formula, citation] = OPERATOR_INFO[name];
    const f = p.forward[name];
    const b = p.backward[name];
    const r = p.recompute[name];
    return { name, label, forward: f, backward: b, recompute: r, stepSeconds: (f + b + r) * m, formula, citation, provenance: src(name) };
  });
  const [label, formula, citation] = OPERATOR_INFO.stepOverhead;
  out.push({ name: 'stepOverhead', label, forward: 0, backward: 0, recompute: 0, stepSeconds: stepOverhead, formula, citation, provenance: FIT_PROVENANCE });
  return out;
}

/** An input value with its source from the plan, or a derived marker. */
function inp(plan: Plan, path: PlanPath, value: number | string | boolean): TermInput {
  const source: InputSource = plan.sources[path] ?? { kind: 'derived', detail: path };
  return { value, source };
}

/** A time term. */
function term(name: TimeTermName, label: string, seconds: number, formula: string, citation: string, inputs: Record<string, TermInput>): TimeTerm {
  return { name, label, seconds: Number.isFinite(seconds) && seconds > 0 ? seconds : 0, formula, citation, inputs };
}

/** FLOPs of one step over all GPUs from the per-stage micro-batch FLOPs × m × ranks per stage. */
export function stepFlops(plan: Plan, stages: readonly StageTiming[]): { model: number; hardware: number } {
  const m = microbatchesPerStep(plan);
  const ranksPerStage = posInt(plan.parallel.tp) * posInt(plan.parallel.cp) * posInt(plan.parallel.dp);
  let model = 0;
  let hw = 0;
  for (const s of stages) {
    model += s.work.forwardFlops + s.work.backwardFlops;
    hw += s.work.forwardFlops + s.work.backwardFlops + s.work.recomputeFlops;
  }
  return { model: model * m * ranksPerStage, hardware: hw * m * ranksPerStage };
}

/** Empty estimate for layouts with problems: zeros, never NaN. */
function empty(plan: Plan, problems: StepTimeEstimate['problems']): StepTimeEstimate {
  const z = (n: TimeTermName): TimeTerm => term(n, n, 0, '—', '—', {});
  const names: TimeTermName[] = ['forward', 'backward', 'recompute', 'pipeline', 'bubble', 'exposedGradSync', 'optimizer', 'postStep', 'step'];
  return {
    stepSeconds: 0, pipelineSeconds: 0, bubbleFraction: 0, exposedCommSeconds: 0, optimizerSeconds: 0,
    microbatches: microbatchesPerStep(plan), modelFlopsPerStep: 0, hardwareFlopsPerStep: 0, mfu: 0, hfu: 0,
    achievedFlopsPerGpu: 0, tokensPerSecond: 0, flopConvention: FLOP_CONVENTION,
    terms: Object.fromEntries(names.map((n) => [n, z(n)])) as Record<TimeTermName, TimeTerm>, operatorTerms: [], provenance: [],
    stages: [], collectives: [], problems,
  };
}

/** The step-time estimate of a plan: per-stage timings in closed form, the pipeline schedule run pass by pass (shared/sim/run.ts). */
export function estimateStepTime(plan: Plan, cache: TimeCache = new TimeCache()): StepTimeEstimate {
  const problems = layoutProblems(plan);
  if (problems.some((p) => p.severity === 'error')) return empty(plan, problems);
  problems.push(...timeAssumptionWarnings(plan));
  const stages = allStageTimings(plan, cache);
  const provenance = timeContext(plan, cache).provenance;
  const overhead = cache.params.stepOverhead;
  const m = microbatchesPerStep(plan);
  const v = chunksPerStage(plan);
  const p = stages.length;
  const sched = plan.parallel.schedule;
  // The schedule run pass by pass (shared/sim/run.ts), the same run as the Simulate Step timeline; the closed form
  // (pipelineSeconds, exposedGradSync) only where the schedule cannot run (a deadlock, reported by layoutProblems first).
  const run = scheduleTimes(plan, stages, m, v, cache.params.overlapCost, overhead);
  const pipe = run ? run.pipelineEnd : pipelineSeconds(stages, m, v, sched);
  const grad = run ? run.gradientsReady - run.pipelineEnd : exposedGradSync(stages, undefined, cache.params.overlapCost);
  const opt = Math.max(...stages.map((s) => s.optimizer));
  const tail = stepTailSeconds(stages);
  const post = Math.max(0, tail - opt);
  const step = run ? run.stepSeconds : pipe + grad + tail + overhead;
  const busiest = stages.reduce((a, b) => (stageMicrobatchSeconds(b) > stageMicrobatchSeconds(a) ? b : a));
  const ideal = m * stageMicrobatchSeconds(busiest);
  const bubble = ideal > 0 ? Math.max(0, pipe - ideal) / ideal : 0;
  const flops = stepFlops(plan, stages);
  const world = posInt(plan.parallel.dp) * posInt(plan.parallel.tp) * posInt(plan.parallel.pp) * posInt(plan.parallel.cp);
  const peak = peakFlops(plan);
  const tokens = plan.training.globalBatch * plan.training.seqLen;
  const collectives: Collective[] = stages.flatMap((s) => s.comm.collectives);
  const inComm = stages.reduce((a, s) => Math.max(a, s.work.exposedCommSeconds * m), 0);
  const exposedComm = grad + post + inComm + pipelineHops(p, v) * Math.max(...stages.map((s) => s.p2p));
  const I = {
    m: inp(plan, 'training.gradAccum', m), p: inp(plan, 'parallel.pp', p), v: inp(plan, 'parallel.vpp', v),
    schedule: inp(plan, 'parallel.schedule', sched), gpu: inp(plan, 'cluster.gpu', plan.cluster.gpu.name),
    eta: inp(plan, 'cluster.gpu', plan.cluster.gpu.achievableFlopsFraction), peak: inp(plan, 'cluster.gpu', peak),
    b: inp(plan, 'training.microBatch', plan.training.microBatch), s: inp(plan, 'training.seqLen', plan.training.seqLen),
  };
  const nar = 'Narayanan et al. 2021 §2.2, §3.5';
  const terms: Record<TimeTermName, TimeTerm> = {
    forward: term('forward', 'Forward per micro-batch (busiest stage)', busiest.forward,
      'Σ layers (GEMMs + attention + memory-bound + FP8 casts + launches + exposed TP/CP/EP) + embedding/LM head + exposed ZeRO-3 gathers',
      'docs/time-model.md; operator terms below', I),
    backward: term('backward', 'Backward per micro-batch (busiest stage)', busiest.backward,
      'Σ layers (dgrad + wgrad GEMMs, attention backward, 2× memory-bound, casts, launches, exposed comm) + exposed reduce-scatters', 'docs/time-model.md', I),
    recompute: term('recompute', 'Recomputation per micro-batch (busiest stage)', busiest.recompute,
      'full: forward of the recomputed layers; selective: eager core attention (Megatron) or elementwise ops (torch SAC)', 'Korthikanti et al. 2022 §5', I),
    pipeline: term('pipeline', 'Pipeline schedule', pipe, 'the schedule run pass by pass: a pass starts when its stage is free and its input has arrived (one send); ≈ m·max_s T_s + (Σ_s T_s − max_s T_s)/v + sends on the critical path', nar, I),
    bubble: term('bubble', 'Pipeline bubble', pipe - ideal, '(p−1)/m (GPipe, 1F1B), (p−1)/(v·m) interleaved, of the ideal m·T', nar, I),
    exposedGradSync: term('exposedGradSync', 'Exposed gradient sync', grad, 'max_s(0, t_sync − (1 − bucket/Ψ)·t_bwd − slack_s)',
      'PyTorch DDP bucketing (Li et al. 2020); Rajbhandari et al. 2020', I),
    optimizer: term('optimizer', 'Optimizer step', opt, 'Ψ_shard · bytes_touched / HBM bandwidth', 'roofline, memory-bound update', I),
    postStep: term('postStep', 'After-step traffic', post, 'ZeRO-1/2 parameter all-gather + offload copies + the tied embedding\'s all-reduce between the first and last stage (beyond the optimizer of the slowest stage)',
      'Rajbhandari et al. 2020 §7.2.1; Megatron-LM finalize_model_grads.py; DeepSpeed pipe/engine.py; nanotron trainer.py', I),
    step: term('step', 'Step time', step, 'pipeline + exposed grad sync + max_s(optimizer + post-step) + fixed per-step overhead', nar, I),
  };
  return {
    stepSeconds: step, pipelineSeconds: pipe, bubbleFraction: bubble, exposedCommSeconds: exposedComm, optimizerSeconds: opt,
    microbatches: m, modelFlopsPerStep: flops.model, hardwareFlopsPerStep: flops.hardware,
    mfu: step > 0 ? flops.model / (step * world * peak) : 0, hfu: step > 0 ? flops.hardware / (step * world * peak) : 0,
    achievedFlopsPerGpu: step > 0 ? flops.hardware / (step * world) : 0, tokensPerSecond: step > 0 ? tokens / step : 0,
    flopConvention: FLOP_CONVENTION, terms, operatorTerms: operatorTerms(busiest, m, overhead, provenance), provenance,
    stages: stages.map((s) => ({
      stage: s.stage, layers: s.layers, forwardSeconds: s.forward, recomputeSeconds: s.recompute, backwardSeconds: s.backward,
      optimizerSeconds: s.optimizer, exposedCommSeconds: s.work.exposedCommSeconds * m, parts: s.work.parts,
    })),
    collectives, problems,
  };
}
