/**
 * validatePlan: typed problems with stable codes for inconsistent inputs. Never throws.
 * Decision on TP > KV heads: when tp is a multiple of the KV heads, each rank holds a replicated copy of one KV head
 * (vLLM, TransformerEngine and torchtitan do this); ShardLens then warns (`tp-replicates-kv-heads`) because
 * Megatron-core requires num_query_groups divisible by TP. Otherwise it is an error (`tp-divides-kv-heads`).
 */
import type { Plan, Problem, Severity } from './types';
import type { PlanPath } from './paths';
import { loraShapes } from '../model/params';

/** Values above this are treated as absurd (no real count or size reaches 10^15). */
export const ABSURD = 1e15;
/** More GPUs than any cluster holds (2^20). */
export const MAX_GPUS = 2 ** 20;

/** Problem codes that make the layout impossible: the memory estimate then has no stages. */
export const FATAL_CODES: ReadonlySet<string> = new Set([
  'value-not-positive-integer', 'value-negative', 'value-not-finite', 'value-absurd',
  'pp-exceeds-layers', 'stage-layers-length', 'stage-layers-sum', 'hf-config-not-object',
]);

const LORA_TARGETS = new Set(['q', 'k', 'v', 'o', 'gate', 'up', 'down']);

/** Checks a plan; returns every problem found (empty when consistent). */
export function validatePlan(plan: Plan): Problem[] {
  const out: Problem[] = [];
  const add = (code: string, severity: Severity, message: string, ...paths: PlanPath[]) => out.push({ code, severity, message, paths });
  try {
    checkNumbers(plan, add);
    if (out.some((p) => p.severity === 'error')) return out;
    checkModelSplit(plan, add);
    checkPipeline(plan, add);
    checkBatch(plan, add);
    checkSequence(plan, add);
    checkSharding(plan, add);
    checkLora(plan, add);
  } catch {
    add('value-not-finite', 'error', 'The plan is malformed (a required field is missing).');
  }
  return out;
}

type Add = (code: string, severity: Severity, message: string, ...paths: PlanPath[]) => void;

/** Every count must be a positive integer below 10^15; sizes must be finite and non-negative. */
function checkNumbers(plan: Plan, add: Add): void {
  const m = plan.model, t = plan.training, p = plan.parallel, s = p.sharding;
  const counts: [PlanPath, number][] = [
    ['model.layers', m.layers], ['model.hiddenSize', m.hiddenSize], ['model.heads', m.heads], ['model.kvHeads', m.kvHeads],
    ['model.headDim', m.headDim], ['model.ffnSize', m.ffnSize], ['model.vocabSize', m.vocabSize],
    ['training.microBatch', t.microBatch], ['training.globalBatch', t.globalBatch], ['training.gradAccum', t.gradAccum],
    ['training.seqLen', t.seqLen], ['parallel.dp', p.dp], ['parallel.tp', p.tp], ['parallel.pp', p.pp], ['parallel.vpp', p.vpp],
    ['parallel.cp', p.cp], ['parallel.ep', p.ep], ['parallel.etp', p.etp], ['parallel.sharding.shardGroupSize', s.shardGroupSize],
    ['cluster.gpusPerNode', plan.cluster.gpusPerNode], ['cluster.nodes', plan.cluster.nodes],
  ];
  if (m.moe) counts.push(['model.moe.experts', m.moe.experts], ['model.moe.topK', m.moe.topK], ['model.moe.expertFfnSize', m.moe.expertFfnSize]);
  if (plan.lora) counts.push(['lora.rank', plan.lora.rank]);
  for (const [path, v] of counts) {
    if (typeof v !== 'number' || !Number.isFinite(v)) add('value-not-finite', 'error', `${path} must be a finite number, got ${String(v)}.`, path);
    else if (v > ABSURD) add('value-absurd', 'error', `${path} = ${v} is absurdly large (> 1e15).`, path);
    else if (!Number.isInteger(v) || v <= 0) add('value-not-positive-integer', 'error', `${path} must be a positive integer, got ${v}.`, path);
  }
  const sizes: [PlanPath, number][] = [
    ['parallel.sharding.reduceBucketElems', s.reduceBucketElems], ['parallel.sharding.allgatherBucketElems', s.allgatherBucketElems],
    ['parallel.sharding.prefetchBucketElems', s.prefetchBucketElems], ['parallel.sharding.maxLiveParams', s.maxLiveParams],
    ['overhead.cudaContextBytes', plan.overhead.cudaContextBytes], ['overhead.allocatorFragmentation', plan.overhead.allocatorFragmentation],
    ['cluster.gpu', plan.cluster.gpu.memoryBytes],
  ];
  if (m.moe) sizes.push(['model.moe.sharedExperts', m.moe.sharedExperts], ['model.moe.denseFirstLayers', m.moe.denseFirstLayers]);
  if (t.recomputeLayers !== undefined) sizes.push(['training.recomputeLayers', t.recomputeLayers]);
  if (m.mtpLayers !== undefined) sizes.push(['model.mtpLayers', m.mtpLayers]);
  for (const [path, v] of sizes) {
    if (typeof v !== 'number' || !Number.isFinite(v)) add('value-not-finite', 'error', `${path} must be a finite number, got ${String(v)}.`, path);
    else if (v > ABSURD) add('value-absurd', 'error', `${path} = ${v} is absurdly large (> 1e15).`, path);
    else if (v < 0) add('value-negative', 'error', `${path} must not be negative, got ${v}.`, path);
  }
  // More prediction modules than the model has layers is no real model (DeepSeek-V3 and GLM-4.5 build one).
  if (m.mtpLayers !== undefined && Number.isFinite(m.mtpLayers) && m.mtpLayers > Math.max(1, m.layers)) {
    add('value-absurd', 'error', `${m.mtpLayers} multi-token-prediction modules exceed the model's ${m.layers} layers.`, 'model.mtpLayers', 'model.layers');
  }
}

/** Tensor and expert parallel splits of heads and experts. */
function checkModelSplit(plan: Plan, add: Add): void {
  const { model: m, parallel: p } = plan;
  if (m.heads % p.tp !== 0) add('tp-divides-heads', 'error', `TP ${p.tp} does not divide the ${m.heads} attention heads.`, 'parallel.tp', 'model.heads');
  if (m.kvHeads > m.heads || m.heads % m.kvHeads !== 0) {
    add('kv-heads-divide-heads', 'error', `KV heads ${m.kvHeads} must divide the ${m.heads} query heads.`, 'model.kvHeads', 'model.heads');
  }
  if (m.kvHeads % p.tp !== 0) {
    if (p.tp % m.kvHeads === 0) {
      add('tp-replicates-kv-heads', 'warning', `TP ${p.tp} exceeds the ${m.kvHeads} KV heads: each KV head is replicated on ${p.tp / m.kvHeads} ranks (Megatron-core rejects this).`, 'parallel.tp', 'model.kvHeads');
    } else add('tp-divides-kv-heads', 'error', `TP ${p.tp} and the ${m.kvHeads} KV heads do not divide each other.`, 'parallel.tp', 'model.kvHeads');
  }
  // Gated DeltaNet layers split their key and value heads over TP (megatron/core/ssm/gated_delta_net.py: the q/k and v
  // widths and the value heads are each taken // tp_size), and each key head serves valueHeads / keyHeads value heads
  // (q and k are repeat_interleave'd to the value heads there and in transformers).
  const la = m.linearAttention;
  if (la) {
    if (la.valueHeads % la.keyHeads !== 0) {
      add('linear-heads-divide', 'error', `The Gated DeltaNet layers' ${la.keyHeads} key heads must divide their ${la.valueHeads} value heads.`, 'model.linearAttention.keyHeads', 'model.linearAttention.valueHeads');
    }
    if (la.keyHeads % p.tp !== 0 || la.valueHeads % p.tp !== 0) {
      add('tp-divides-linear-heads', 'error', `TP ${p.tp} does not divide the Gated DeltaNet layers' ${la.keyHeads} key and ${la.valueHeads} value heads.`, 'parallel.tp', 'model.linearAttention.keyHeads');
    }
  }
  if (p.sp && p.tp === 1) add('sp-without-tp', 'info', 'Sequence parallelism has no effect with TP = 1.', 'parallel.sp');
  const moe = m.moe;
  if (moe) {
    if (moe.topK > moe.experts) add('moe-topk-exceeds-experts', 'error', `top-k ${moe.topK} exceeds the ${moe.experts} experts.`, 'model.moe.topK');
    if (moe.experts % p.ep !== 0) add('ep-divides-experts', 'error', `EP ${p.ep} does not divide the ${moe.experts} experts.`, 'parallel.ep', 'model.moe.experts');
  } else if (p.ep > 1) add('ep-without-moe', 'warning', `EP ${p.ep} is set but the model has no experts.`, 'parallel.ep');
  // Megatron: expert parallel groups live inside DP·CP·TP (expert model parallel = EP·ETP must divide TP·CP·DP).
  if ((p.dp * p.cp * p.tp) % (p.ep * p.etp) !== 0) {
    add('ep-divides-dp', 'error', `EP·ETP = ${p.ep * p.etp} must divide DP·CP·TP = ${p.dp * p.cp * p.tp} (experts are parallelised inside the data-parallel ranks).`, 'parallel.ep', 'parallel.dp');
  }
  const world = plan.cluster.gpusPerNode * plan.cluster.nodes;
  // The largest training clusters built so far hold a few hundred thousand GPUs; more than 2^20 is a typo.
  if (world > MAX_GPUS) add('value-absurd', 'error', `A world of ${world} GPUs is beyond any real cluster (> ${MAX_GPUS}); check the GPU count.`, 'cluster.worldSize', 'cluster.gpusPerNode', 'cluster.nodes');
  const product = p.dp * p.tp * p.pp * p.cp;
  if (world !== product) {
    add('world-size-mismatch', 'error', `World size ${world} (${plan.cluster.nodes} node${plan.cluster.nodes === 1 ? '' : 's'} × ${plan.cluster.gpusPerNode}) ≠ DP·TP·PP·CP = ${p.dp}·${p.tp}·${p.pp}·${p.cp} = ${product}.`, 'parallel.dp', 'cluster.nodes');
  }
}

/** Pipeline layers, uneven splits, virtual stages and schedule requirements. */
function checkPipeline(plan: Plan, add: Add): void {
  const L = plan.model.layers, p = plan.parallel, m = plan.training.gradAccum;
  if (p.pp > L) {
    add('pp-exceeds-layers', 'error', `PP ${p.pp} exceeds the ${L} layers.`, 'parallel.pp', 'model.layers');
    return;
  }
  if (p.stageLayers) {
    if (p.stageLayers.length !== p.pp) add('stage-layers-length', 'error', `stageLayers has ${p.stageLayers.length} entries for PP ${p.pp}.`, 'parallel.stageLayers');
    else if (p.stageLayers.some((x) => !Number.isInteger(x) || x < 0) || p.stageLayers.reduce((a, b) => a + b, 0) !== L) {
      add('stage-layers-sum', 'error', `stageLayers must be non-negative integers summing to the ${L} layers.`, 'parallel.stageLayers');
    }
  } else if (L % p.pp !== 0) {
    add('pp-divides-layers', 'error', `PP ${p.pp} does not divide the ${L} layers and no uneven split is given.`, 'parallel.pp', 'model.layers');
  }
  if (p.vpp > 1) {
    // An explicit (uneven) split, such as Megatron's --account-for-embedding/loss-in-pipeline-split one, needs at
    // least v layers on every stage (shared/time/problems.ts layoutProblems); an even split needs v to divide them.
    if (p.stageLayers) {
      if (p.stageLayers.some((x) => x < p.vpp)) add('vpp-divides-layers', 'error', `Virtual stages ${p.vpp} need at least ${p.vpp} layers on every stage (split ${p.stageLayers.join(', ')}).`, 'parallel.vpp', 'parallel.stageLayers');
    } else if ((L / p.pp) % p.vpp !== 0) add('vpp-divides-layers', 'error', `Virtual stages ${p.vpp} do not divide the ${L / p.pp} layers per stage.`, 'parallel.vpp');
    if (p.schedule !== 'interleaved') add('vpp-needs-interleaved', 'warning', `Virtual stages ${p.vpp} need the interleaved schedule (schedule is ${p.schedule}).`, 'parallel.vpp', 'parallel.schedule');
  }
  if (p.schedule === 'interleaved' && p.pp > 1 && m % p.pp !== 0) {
    add('interleaved-microbatches', 'error', `The interleaved schedule needs the ${m} micro-batches to be a multiple of PP ${p.pp} (Narayanan et al. 2021 §2.2).`, 'training.gradAccum', 'parallel.pp');
  }
  if (p.pp > 1 && m < p.pp) {
    add('pipeline-underfilled', 'warning', `Only ${m} micro-batch${m === 1 ? '' : 'es'} for ${p.pp} pipeline stages: the bubble dominates.`, 'training.gradAccum', 'parallel.pp');
  }
}

/** micro × accumulation × DP = global batch. */
function checkBatch(plan: Plan, add: Add): void {
  const t = plan.training, dp = plan.parallel.dp;
  if (t.microBatch * t.gradAccum * dp !== t.globalBatch) {
    add('global-batch-mismatch', 'error', `micro ${t.microBatch} × accumulation ${t.gradAccum} × DP ${dp} = ${t.microBatch * t.gradAccum * dp} ≠ global batch ${t.globalBatch}.`,
      'training.globalBatch', 'training.microBatch', 'training.gradAccum');
  }
}

/** Sequence splits for CP (2·CP chunks, load-balanced causal) and SP (divisible by TP). */
function checkSequence(plan: Plan, add: Add): void {
  const s = plan.training.seqLen, p = plan.parallel, m = plan.model;
  if (p.cp > 1 && s % (2 * p.cp) !== 0) add('cp-divides-seq', 'error', `Sequence ${s} is not divisible by 2·CP = ${2 * p.cp}.`, 'training.seqLen', 'parallel.cp');
  if (p.sp && p.tp > 1 && (s / p.cp) % p.tp !== 0) add('sp-divides-seq', 'error', `With sequence parallelism the sequence ${s / p.cp} per CP rank must be divisible by TP ${p.tp}.`, 'training.seqLen', 'parallel.tp');
  if (m.positions === 'learned' && s > m.maxPositions) add('seq-exceeds-positions', 'warning', `Sequence ${s} exceeds the ${m.maxPositions} learned positions.`, 'training.seqLen');
  const r = plan.training.recomputeLayers;
  if (r !== undefined && plan.training.recompute !== 'full') add('recompute-layers-ignored', 'info', 'recomputeLayers only applies to full recomputation.', 'training.recomputeLayers');
}

/** ZeRO/FSDP shard groups and offload combinations. */
function checkSharding(plan: Plan, add: Add): void {
  const s = plan.parallel.sharding, dp = plan.parallel.dp;
  if (s.shardGroupSize > dp || dp % s.shardGroupSize !== 0) {
    add('shard-group-divides-dp', 'error', `Shard group ${s.shardGroupSize} must divide DP ${dp}.`, 'parallel.sharding.shardGroupSize', 'parallel.dp');
  }
  if (s.offloadParams !== 'none' && s.stage < 3) add('offload-params-needs-zero3', 'warning', 'Parameter offload needs ZeRO-3 / FSDP full sharding.', 'parallel.sharding.offloadParams');
  if (s.offloadOptimizer !== 'none' && s.stage === 0) add('offload-needs-zero', 'warning', 'Optimizer offload needs ZeRO stage ≥ 1.', 'parallel.sharding.offloadOptimizer');
  if (plan.overhead.allocatorFragmentation > 10) add('value-absurd', 'error', 'Allocator fragmentation above 1000% is absurd.', 'overhead.allocatorFragmentation');
  // ZeRO++ hpZ partitions its secondary copy inside a node (Wang et al. 2023 §4.2: the partition size is the GPUs of a
  // node); a partition larger than the node, or one that does not divide the shard group, sends its gathers across nodes.
  const hpz = s.hpzPartition ?? 1;
  if (hpz > 1 && (hpz > plan.cluster.gpusPerNode || (s.shardGroupSize * plan.parallel.cp) % hpz !== 0)) {
    add('zeropp-hpz-layout', 'warning', `zero_hpz_partition_size ${hpz} should divide the ${s.shardGroupSize * plan.parallel.cp} sharded ranks and fit in a node of ${plan.cluster.gpusPerNode} GPUs (ZeRO++ hpZ keeps its secondary partition inside a node); otherwise its backward gathers cross nodes.`, 'parallel.sharding.hpzPartition');
  }
}

/** LoRA targets must be projections the model has. */
function checkLora(plan: Plan, add: Add): void {
  const l = plan.lora;
  if (!l) return;
  for (const t of l.targets) {
    if (!LORA_TARGETS.has(t)) add('lora-unknown-target', 'error', `LoRA target "${t}" is not a projection of this model (q, k, v, o, gate, up, down).`, 'lora.targets');
    else if (t === 'gate' && !plan.model.gatedMlp) add('lora-unknown-target', 'error', 'LoRA target "gate" does not exist in a plain (non-gated) MLP.', 'lora.targets');
  }
  if (l.baseDtype === 'nf4' && plan.parallel.tp > 1) add('qlora-with-tp', 'warning', 'QLoRA 4-bit base weights with TP > 1 are not supported by bitsandbytes.', 'lora.baseDtype', 'parallel.tp');
  // A rank at or above a projection's narrower side adapts it at full rank: A and B hold r·(in + out) ≥ in·out weights,
  // more than the weight they adapt (Hu et al. 2021 §4: r ≪ min(d, k)). Almost always a typo (an extra digit).
  const shapes = loraShapes(plan.model);
  const narrowest = Math.min(...l.targets.flatMap((t) => (shapes[t] ?? []).map(([i, o]) => Math.min(i, o))));
  if (Number.isInteger(l.rank) && l.rank > 0 && Number.isFinite(narrowest) && l.rank >= narrowest) {
    add('lora-rank-too-large', 'warning', `LoRA rank ${l.rank} is at least the width of the narrowest projection it adapts (${narrowest}): the adapters hold more weights than the weights they adapt (r·(in + out) ≥ in·out), and the estimate counts them so. LoRA ranks are usually 8 to 256.`, 'lora.rank');
  }
}

/** True when problems make the layout impossible (no stage can be computed). */
export function layoutImpossible(problems: readonly Problem[]): boolean {
  return problems.some((p) => p.severity === 'error' && FATAL_CODES.has(p.code));
}
