/**
 * The step-level collectives of one stage as entries (sizes from shared/comm/stageTraffic.ts): data-parallel and
 * ZeRO/FSDP traffic, pipeline sends and offload copies, each with how its exposure is computed once the stage's
 * totals are known (shared/time/stageComm.ts).
 */
import type { Plan } from '../plan/types';
import type { GroupLink } from '../comm/links';
import type { LayoutLinks } from '../comm/layout';
import type { StageTraffic } from '../comm/stageTraffic';
import type { CollectiveKind, CommGroup } from '../comm/types';
import * as V from '../comm/volumes';
import type { TimeContext } from './context';
import { posInt } from './shape';
import { deepspeedPipeline, deepspeedPipePartitioned, deepspeedPipelineTransfers } from './deepspeedPipe';
import type { SyncSchedule } from './syncSchedule';

/** One collective before its exposure is known. */
export interface Entry {
  id: string; label: string; kind: CollectiveKind; group: CommGroup; link: GroupLink; stage: number;
  bytes: number; count: number; overlapped: boolean; exposed: number; formula: string; citation: string; seconds?: number;
}

/** Exposure of a step-level entry, filled once the stage's totals are known. */
export type Exposure = 'grad' | 'post' | 'zero3' | 'rs' | 'hsdp' | 'dp' | 'offload-params' | 'pp';

/** Lists the step-level collectives of a stage (sizes from stageTraffic) with how their exposure is computed. */
export function stepEntries(plan: Plan, stage: number, ctx: TimeContext, k: StageTraffic, links: LayoutLinks, entries: Entry[], kinds: Exposure[], sched: SyncSchedule): void {
  const dpEveryMb = sched.replicaEveryMicrobatch;
  const hsdpEveryMb = k.hasDense && sched.hybridEveryMicrobatch;
  const par = plan.parallel;
  const sh = par.sharding;
  const { m, v, p } = ctx;
  const zero = sh.stage;
  const overlap = sh.overlapComm;
  const cite = 'Rajbhandari et al. 2020 (ZeRO) §7.2; nccl-tests PERFORMANCE.md';
  const dense = links.shardLink;
  if (k.hasDense && zero === 0) {
    addEntry(entries, kinds, { id: 'dp-grad-allreduce', label: 'DP gradient all-reduce', kind: 'all-reduce', group: 'dp', link: dense, stage, bytes: k.dpBytes,
      count: dpEveryMb ? m : 1, overlapped: overlap, exposed: 0,
      formula: `2(N−1)/N · Ψ_stage · B_grad, bucketed, overlapped with ${dpEveryMb ? 'every backward (torch replicate syncs in each)' : 'the last backward'}`,
      citation: dpEveryMb ? `${cite}; torch/distributed/_composable/replicate.py` : cite }, dpEveryMb ? 'dp' : 'grad');
    if (k.agBytes > 0) {
      addEntry(entries, kinds, { id: 'zero-param-all-gather', label: 'BF16_Optimizer weight all-gather', kind: 'all-gather', group: 'dp',
        link: dense, stage, bytes: k.agBytes, count: 1, overlapped: false, exposed: 0,
        formula: '(N−1)/N · Ψ_stage · B_param once per step (DeepSpeed without ZeRO in bf16: partitioned fp32 master weights)',
        citation: 'DeepSpeed deepspeed/runtime/bf16_optimizer.py, engine.py _do_optimizer_sanity_check' }, 'post');
    }
  }
  if (k.hasDense && zero >= 1) {
    const pipelined = sched.pipelined;
    const perMb = sched.reduceEveryMicrobatch;
    const once = pipelined ? ' once per step, after the stage\'s last backward (torch pipelining)' : ' once per step (the other micro-batches under no_sync)';
    addEntry(entries, kinds, { id: 'zero-grad-reduce-scatter', label: 'ZeRO gradient reduce-scatter', kind: 'reduce-scatter', group: 'dp', link: dense, stage,
      bytes: k.rsBytes, count: perMb ? m : 1, overlapped: overlap && !pipelined, exposed: 0,
      formula: '(N−1)/N · Ψ_stage · B_grad' + (sh.quantizedGradients ? ' (int4, 0.5 bytes: ZeRO++ qgZ)' : '') + (perMb ? ' per micro-batch' : zero >= 2 ? once : ' per step'),
      citation: pipelined ? `${cite}; torch/distributed/pipelining/stage.py backward_maybe_with_nosync`
        : zero >= 2 && !perMb ? `${cite}; torch FSDP no_sync / set_requires_gradient_sync` : cite }, perMb ? 'rs' : 'grad');
    if (V.gatherStage(sh.style, zero) <= 2) {
      const hidden = sh.style === 'megatron-distopt' && overlap;
      addEntry(entries, kinds, { id: 'zero-param-all-gather', label: 'ZeRO parameter all-gather after the step', kind: 'all-gather', group: 'dp',
        link: dense, stage, bytes: k.agBytes, count: 1, overlapped: hidden, exposed: 0,
        formula: '(N−1)/N · Ψ_stage · B_param once per step (ZeRO-1/2: 2Ψ with the reduce-scatter)', citation: cite }, 'post');
    } else {
      const gathers = V.zero3AllGathersPerMicrobatch(V.gatherReshards(sh.style, zero, sh.reshardAfterForward));
      const once = sched.gatherOncePerStep;
      // ZeRO++ hpZ: the backward gathers from the secondary partition inside the node (Wang et al. 2023 §4.2).
      const hpz = k.hpzLink !== undefined && gathers === 2 && !once;
      if (hpz) {
        addEntry(entries, kinds, { id: 'zeropp-hpz-all-gather', label: 'ZeRO++ hpZ backward all-gather', kind: 'all-gather', group: 'dp', link: k.hpzLink!,
          stage, bytes: k.agBackBytes, count: m, overlapped: overlap, exposed: 0,
          formula: '(N_hpz−1)/N_hpz · Ψ_stage · B_param per micro-batch, from the secondary partition over N_hpz = zero_hpz_partition_size ranks of a node',
          citation: 'Wang et al. 2023 (ZeRO++) §4.2; DeepSpeed zero_hpz_partition_size' }, 'zero3');
      }
      addEntry(entries, kinds, { id: 'zero3-param-all-gather', label: 'ZeRO-3/FSDP parameter all-gather', kind: 'all-gather', group: 'dp', link: dense,
        stage, bytes: k.agBytes, count: once ? 1 : hpz ? m : gathers * m, overlapped: overlap, exposed: 0,
        formula: once
          ? '(N−1)/N · Ψ_stage · B_param once per step: gathered in the first forward and kept until the stage\'s last backward (torch pipelining), prefetched'
          : `(N−1)/N · Ψ_stage · B_param${sh.quantizedWeights ? ' (int8: ZeRO++ qwZ)' : ''}, ${hpz ? 'forward (the backward gathers in the node: hpZ)' : gathers === 2 ? 'forward and backward (3Ψ with the reduce-scatter)' : 'forward only, kept for backward (2Ψ)'} per micro-batch, prefetched`,
        citation: once ? 'Zhao et al. 2023 (PyTorch FSDP); torch/distributed/pipelining/stage.py backward_maybe_with_nosync; torchtitan parallelize (reshard_after_forward off under PP)'
          : 'Rajbhandari et al. 2020 §7.2.2; Zhao et al. 2023 (PyTorch FSDP); Llama 3 §3.3.2' }, 'zero3');
    }
  }
  if (k.hasDense && zero >= 1 && k.expertRsBytes > 0) expertFsdpEntries(plan, stage, ctx, k, links, entries, kinds, sched);
  if (k.hasEdp) {
    addEntry(entries, kinds, { id: 'edp-grad-allreduce', label: 'Expert-DP gradient all-reduce', kind: 'all-reduce', group: 'dp', link: links.edpLink, stage, bytes: k.edpBytes, count: 1,
      overlapped: overlap, exposed: 0, formula: '2(N_edp−1)/N_edp · Ψ_experts · B_grad, N_edp = d·cp·t/(ep·etp)', citation: 'Megatron-LM expert data parallelism' }, 'grad');
  }
  if (links.replicas > 1 && zero >= 1) {
    addEntry(entries, kinds, { id: 'hsdp-replicate-allreduce', label: 'HSDP replicate all-reduce', kind: 'all-reduce', group: 'dp', link: links.replicaLink, stage,
      bytes: k.hsdpBytes, count: hsdpEveryMb ? m : 1, overlapped: overlap, exposed: 0,
      formula: `2(R−1)/R · Ψ_stage/N_shard · B_grad across replicas${hsdpEveryMb ? ', each group after its reduce-scatter, every micro-batch' : ''}`,
      citation: hsdpEveryMb ? 'Zhao et al. 2023 (PyTorch FSDP) §3.2.2 hybrid sharding; torch FSDP2 foreach_reduce, FSDP1 _reduce_grad'
        : 'Zhao et al. 2023 (PyTorch FSDP) §3.2.2 hybrid sharding' }, hsdpEveryMb ? 'hsdp' : 'grad');
  }
  if (k.embLink && k.embBytes > 0) {
    addEntry(entries, kinds, { id: 'embedding-grad-allreduce', label: 'Tied embedding gradient all-reduce', kind: 'all-reduce', group: 'pp', link: k.embLink, stage,
      bytes: k.embBytes, count: 1, overlapped: false, exposed: 0,
      formula: '2(N−1)/N · V\'·h/t · B_grad, N = 2 (the first and last stage), once per step after the gradient sync',
      citation: plan.engine === 'megatron' ? 'Megatron-LM megatron/core/distributed/finalize_model_grads.py _allreduce_word_embedding_grads (tied output layer, multi-token prediction)'
        : plan.engine === 'nanotron' ? 'nanotron src/nanotron/trainer.py sync_tied_weights_gradients' : 'DeepSpeed deepspeed/runtime/pipe/engine.py _exec_reduce_tied_grads' }, 'post');
  }
  if (sh.offloadOptimizer !== 'none') {
    addEntry(entries, kinds, { id: 'offload-optimizer', label: 'Optimizer offload copies (PCIe)', kind: 'send-recv', group: 'dp', link: links.pcieLink, stage,
      bytes: k.offloadOptBytes, count: 1, overlapped: false, exposed: 0, formula: 'Ψ_shard·(B_grad + 2) over PCIe per step', citation: 'Ren et al. 2021 (ZeRO-Offload) §4' }, 'post');
  }
  if (sh.offloadParams !== 'none') {
    addEntry(entries, kinds, { id: 'offload-params', label: 'Parameter offload fetches (PCIe)', kind: 'send-recv', group: 'dp', link: links.pcieLink, stage,
      bytes: k.offloadParamBytes, count: m, overlapped: false, exposed: 0, formula: '2·Ψ_shard·B_param over PCIe per micro-batch',
      citation: 'Rajbhandari et al. 2021 (ZeRO-Infinity)' }, 'offload-params');
  }
  if (p > 1) {
    const partitioned = deepspeedPipePartitioned(plan);
    const bytes = V.ppMessageBytes(ctx.tokens, plan.model.hiddenSize, ctx.actBytes, par.sp || partitioned ? posInt(par.tp) : 1);
    const blocking = deepspeedPipeline(plan);
    addEntry(entries, kinds, { id: 'pp-send-recv', label: 'Pipeline send/recv', kind: 'send-recv', group: 'pp', link: ctx.ppLink, stage, bytes,
      count: blocking ? 2 * m * deepspeedPipelineTransfers(stage, p) : V.ppSendsPerStep(m, v, v > 1 || stage < p - 1, v > 1 || stage > 0),
      overlapped: !blocking, exposed: 0,
      formula: blocking
        ? 'b·s·h·B (÷t under TP: DeepSpeed sends partitions) per micro-batch, activations and gradients received and sent, each a blocking call of DeepSpeed\'s pipeline engine'
        : 'b·s·h·B (÷t with SP) per micro-batch per chunk, forward activations and backward gradients',
      citation: blocking ? 'DeepSpeed deepspeed/runtime/pipe/engine.py, p2p.py' : 'Narayanan et al. 2021 §2.2, §4.1' }, 'pp');
    // One received tensor per neighbour and micro-batch: the activation from the previous stage, the gradient from the next.
    const receives = partitioned ? deepspeedPipelineTransfers(stage, p) : 0;
    if (receives > 0) {
      const full = V.ppMessageBytes(ctx.tokens, plan.model.hiddenSize, ctx.actBytes, 1);
      addEntry(entries, kinds, { id: 'pp-partition-gather', label: 'PP input all-gather (TP parts)', kind: 'all-gather', group: 'tp', link: links.tpLink, stage,
        bytes: full, count: m * receives, overlapped: false, exposed: m * receives * ctx.p2pGather,
        formula: 'b·s·h·B per received activation or gradient, rebuilt from its t partitions before the pass',
        citation: 'DeepSpeed deepspeed/runtime/pipe/engine.py (pipe_partitioned, grad_partitioned)' }, 'pp');
    }
  }
}

/**
 * The routed experts' own FSDP groups under expert parallelism (torchtitan's expert mesh, Axolotl's dp_shard): their
 * reduce-scatter and gather over the expert shard group, scheduled as the dense groups' (the same kinds of exposure,
 * shared in proportion to seconds).
 */
function expertFsdpEntries(plan: Plan, stage: number, ctx: TimeContext, k: StageTraffic, links: LayoutLinks, entries: Entry[], kinds: Exposure[], sched: SyncSchedule): void {
  const sh = plan.parallel.sharding;
  const m = ctx.m;
  const perMb = sched.reduceEveryMicrobatch;
  const cite = 'torchtitan parallelize.py (experts fully_shard on the expert mesh); Axolotl expert_parallel plugin.py fully_shard_experts';
  const n = 'N_e = d·cp·t/(ep·etp)';
  addEntry(entries, kinds, { id: 'expert-fsdp-reduce-scatter', label: 'Expert FSDP gradient reduce-scatter', kind: 'reduce-scatter', group: 'dp', link: links.edpLink, stage,
    bytes: k.expertRsBytes, count: perMb ? m : 1, overlapped: sh.overlapComm && !sched.pipelined, exposed: 0,
    formula: `(N_e−1)/N_e · Ψ_experts · B_grad${perMb ? ' per micro-batch' : ' per step'}, ${n}`, citation: cite }, perMb ? 'rs' : 'grad');
  if (V.gatherStage(sh.style, sh.stage) <= 2) {
    addEntry(entries, kinds, { id: 'expert-fsdp-all-gather', label: 'Expert FSDP parameter all-gather after the step', kind: 'all-gather', group: 'dp', link: links.edpLink, stage,
      bytes: k.expertAgBytes, count: 1, overlapped: false, exposed: 0, formula: `(N_e−1)/N_e · Ψ_experts · B_param once per step, ${n}`, citation: cite }, 'post');
    return;
  }
  const gathers = V.zero3AllGathersPerMicrobatch(V.gatherReshards(sh.style, sh.stage, sh.reshardAfterForward));
  const once = sched.gatherOncePerStep;
  addEntry(entries, kinds, { id: 'expert-fsdp-all-gather', label: 'Expert FSDP parameter all-gather', kind: 'all-gather', group: 'dp', link: links.edpLink, stage,
    bytes: k.expertAgBytes, count: once ? 1 : gathers * m, overlapped: sh.overlapComm, exposed: 0,
    formula: `(N_e−1)/N_e · Ψ_experts · B_param, ${once ? 'once per step' : gathers === 2 ? 'forward and backward per micro-batch' : 'forward per micro-batch'}, ${n}`, citation: cite }, 'zero3');
}

/** Appends an entry and how its exposure is computed. */
function addEntry(entries: Entry[], kinds: Exposure[], e: Entry, x: Exposure): void {
  entries.push(e);
  kinds.push(x);
}
