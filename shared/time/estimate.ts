/**
 * estimateStepTime: the traceable step-time result. Every figure names its formula, citation and inputs.
 * FLOP convention (stated in the result): 2 FLOPs per multiply-add, full s×s attention (no causal halving), LM head
 * included; model FLOPs = forward + backward (MFU, PaLM / Narayanan et al. 2021), hardware FLOPs add recomputation (HFU).
 */
import type { InputSource, Plan } from '../plan/types';
import type { TermInput } from '../plan/result';
import type { Collective } from '../comm/types';
import { layoutProblems } from './problems';
import { chunksPerStage, microbatchesPerStep, peakFlops, posInt } from './shape';
import { allStageTimings, type StageTiming } from './stage';
import { exposedGradSync, pipelineSeconds, stageMicrobatchSeconds, stepTailSeconds } from './stepTime';
import type { StepTimeEstimate, TimeTerm, TimeTermName } from './types';
import type { PlanPath } from '../plan/paths';

export const FLOP_CONVENTION =
  '2 FLOPs per multiply-add; full s×s attention (no causal halving); LM head included. MFU counts forward + backward '
  + '(3× forward); HFU adds recomputation (Narayanan et al. 2021 Eq. 3, Korthikanti et al. 2022 App. A).';

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
    terms: Object.fromEntries(names.map((n) => [n, z(n)])) as Record<TimeTermName, TimeTerm>, stages: [], collectives: [], problems,
  };
}

/** The closed-form step-time estimate of a plan (see shared/sim for the event-by-event picture). */
export function estimateStepTime(plan: Plan): StepTimeEstimate {
  const problems = layoutProblems(plan);
  if (problems.some((p) => p.severity === 'error')) return empty(plan, problems);
  const stages = allStageTimings(plan);
  const m = microbatchesPerStep(plan);
  const v = chunksPerStage(plan);
  const p = stages.length;
  const sched = plan.parallel.schedule;
  const pipe = pipelineSeconds(stages, m, v, sched);
  const grad = exposedGradSync(stages);
  const opt = Math.max(...stages.map((s) => s.optimizer));
  const tail = stepTailSeconds(stages);
  const post = Math.max(0, tail - opt);
  const step = pipe + grad + tail;
  const busiest = stages.reduce((a, b) => (stageMicrobatchSeconds(b) > stageMicrobatchSeconds(a) ? b : a));
  const ideal = m * stageMicrobatchSeconds(busiest);
  const bubble = ideal > 0 ? Math.max(0, pipe - ideal) / ideal : 0;
  const flops = stepFlops(plan, stages);
  const world = posInt(plan.parallel.dp) * posInt(plan.parallel.tp) * posInt(plan.parallel.pp) * posInt(plan.parallel.cp);
  const peak = peakFlops(plan);
  const tokens = plan.training.globalBatch * plan.training.seqLen;
  const collectives: Collective[] = stages.flatMap((s) => s.comm.collectives);
  const inComm = stages.reduce((a, s) => Math.max(a, s.work.exposedCommSeconds * m), 0);
  const exposedComm = grad + post + inComm + 2 * (p - 1) * Math.max(...stages.map((s) => s.p2p));
  const I = {
    m: inp(plan, 'training.gradAccum', m), p: inp(plan, 'parallel.pp', p), v: inp(plan, 'parallel.vpp', v),
    schedule: inp(plan, 'parallel.schedule', sched), gpu: inp(plan, 'cluster.gpu', plan.cluster.gpu.name),
    eta: inp(plan, 'cluster.gpu', plan.cluster.gpu.achievableFlopsFraction), peak: inp(plan, 'cluster.gpu', peak),
    b: inp(plan, 'training.microBatch', plan.training.microBatch), s: inp(plan, 'training.seqLen', plan.training.seqLen),
  };
  const nar = 'Narayanan et al. 2021 §2.2, §3.5';
  const terms: Record<TimeTermName, TimeTerm> = {
    forward: term('forward', 'Forward per micro-batch (busiest stage)', busiest.forward,
      'FLOPs_fwd/(peak·η) + 2·A_layer·L_s/HBM + exposed TP/EP/CP', 'Narayanan et al. 2021 Eq. 3; Korthikanti et al. 2022 Table 2', I),
    backward: term('backward', 'Backward per micro-batch (busiest stage)', busiest.backward,
      '2·FLOPs_fwd/(peak·η) (+LoRA: frozen weights 1×) + 4·A_layer·L_s/HBM + exposed comm', 'Narayanan et al. 2021 Eq. 3', I),
    recompute: term('recompute', 'Recomputation per micro-batch (busiest stage)', busiest.recompute,
      'full: forward of the recomputed layers; selective: core attention', 'Korthikanti et al. 2022 §5', I),
    pipeline: term('pipeline', 'Pipeline schedule', pipe, 'm·max_s T_s + (Σ_s T_s − max_s T_s)/v + 2(p−1)·t_p2p', nar, I),
    bubble: term('bubble', 'Pipeline bubble', pipe - ideal, '(p−1)/m (GPipe, 1F1B), (p−1)/(v·m) interleaved, of the ideal m·T', nar, I),
    exposedGradSync: term('exposedGradSync', 'Exposed gradient sync', grad, 'max_s(0, t_sync − (1 − bucket/Ψ)·t_bwd − slack_s)',
      'PyTorch DDP bucketing (Li et al. 2020); Rajbhandari et al. 2020', I),
    optimizer: term('optimizer', 'Optimizer step', opt, 'Ψ_shard · bytes_touched / HBM bandwidth', 'roofline, memory-bound update', I),
    postStep: term('postStep', 'After-step traffic', post, 'ZeRO-1/2 parameter all-gather + offload copies (beyond the optimizer of the slowest stage)',
      'Rajbhandari et al. 2020 §7.2.1', I),
    step: term('step', 'Step time', step, 'pipeline + exposed grad sync + max_s(optimizer + post-step)', nar, I),
  };
  return {
    stepSeconds: step, pipelineSeconds: pipe, bubbleFraction: bubble, exposedCommSeconds: exposedComm, optimizerSeconds: opt,
    microbatches: m, modelFlopsPerStep: flops.model, hardwareFlopsPerStep: flops.hardware,
    mfu: step > 0 ? flops.model / (step * world * peak) : 0, hfu: step > 0 ? flops.hardware / (step * world * peak) : 0,
    achievedFlopsPerGpu: step > 0 ? flops.hardware / (step * world) : 0, tokensPerSecond: step > 0 ? tokens / step : 0,
    flopConvention: FLOP_CONVENTION, terms,
    stages: stages.map((s) => ({
      stage: s.stage, layers: s.layers, forwardSeconds: s.forward, recomputeSeconds: s.recompute, backwardSeconds: s.backward,
      optimizerSeconds: s.optimizer, exposedCommSeconds: s.work.exposedCommSeconds * m,
    })),
    collectives, problems,
  };
}
