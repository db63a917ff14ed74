/**
 * The vocabulary that names plan inputs: `PlanPath`, the dotted path of a `Plan` field or of a fact a reader extracts.
 * Facts, problems, assumptions, sources, hovers, hints, diagnostics, code lenses, code actions and the planner all use
 * it, so a misspelt path is a type error instead of a silently missing figure.
 */
import type { ClusterSpec, Plan } from './types';

type Leaf = string | number | boolean | readonly unknown[];
type Join<P extends string, K extends string> = P extends '' ? K : `${P}.${K}`;

/** Every dotted path of an object type: its leaves and its nested objects (e.g. "parallel.sharding" and "parallel.sharding.stage"). */
type PathsOf<T, P extends string = ''> = {
  [K in keyof T & string]-?: NonNullable<T[K]> extends Leaf ? Join<P, K> : Join<P, K> | PathsOf<NonNullable<T[K]>, Join<P, K>>;
}[keyof T & string];

/** Paths of the plan's own fields; the GPU is one input ("cluster.gpu"), not its catalog fields. */
type PlanFieldPath =
  | PathsOf<Omit<Plan, 'sources' | 'cluster' | 'stated'>>
  | 'cluster' | 'cluster.gpu' | `cluster.${Exclude<keyof ClusterSpec, 'gpu'>}`;

/**
 * Fact keys that are not plan fields: what readers extract and the resolver turns into plan fields (ConfigFacts docs).
 * "cluster.gpu.kernelSpeed" names the calibrated kernel speed in sources.
 */
export const FACT_ONLY_KEYS = [
  'cluster.worldSize', 'cluster.gpuName', 'cluster.gpu.kernelSpeed', 'cluster.networkGbps', 'cluster.nvlinkDomain',
  'model.preset', 'model.type', 'training.deviceBatch', 'training.steps', 'training.samples',
  'parallel.dpReplicate', 'parallel.vppLayers', 'parallel.firstStageLayers', 'parallel.lastStageLayers',
  'parallel.firstStageLess', 'parallel.lastStageLess',
  'parallel.sharding.instances', 'lora.enabled', 'launch.dialect',
] as const;

/** The dotted name of one plan input: a Plan field or a fact key. */
export type PlanPath = PlanFieldPath | (typeof FACT_ONLY_KEYS)[number];

/** Every PlanPath at run time (key tables, messages from clients); the checks below keep it equal to the type. */
export const PLAN_PATHS = [
  'engine',
  'model', 'model.name', 'model.layers', 'model.hiddenSize', 'model.heads', 'model.kvHeads', 'model.headDim', 'model.ffnSize',
  'model.gatedMlp', 'model.attnBias', 'model.mlpBias', 'model.tiedEmbeddings', 'model.positions', 'model.maxPositions',
  'model.norm', 'model.qkNorm', 'model.qkNormWidth', 'model.sandwichNorms', 'model.normBias', 'model.normFp32', 'model.attnLogitSoftcap', 'model.finalLogitSoftcap', 'model.noSdpa', 'model.lowPrecisionNorm', 'model.attentionSinks', 'model.dropout', 'model.mtpLayers', 'model.vocabSize', 'model.vocabPadMultiple',
  'model.moe', 'model.moe.experts', 'model.moe.topK', 'model.moe.expertFfnSize', 'model.moe.sharedExperts',
  'model.moe.sharedExpertFfnSize', 'model.moe.denseFirstLayers', 'model.moe.layerFrequency', 'model.moe.sharedExpertGate',
  'model.moe.routerGroups', 'model.moe.routerGroupTopK', 'model.moe.capacityFactor', 'model.moe.firstLayerMoe', 'model.moe.routerWeightsFp32',
  'model.slidingWindow', 'model.slidingWindow.window', 'model.slidingWindow.slidingLayers', 'model.slidingWindow.chunked',
  'model.mla', 'model.mla.qLoraRank', 'model.mla.kvLoraRank', 'model.mla.qkNopeHeadDim', 'model.mla.qkRopeHeadDim', 'model.mla.vHeadDim',
  'model.linearAttention', 'model.linearAttention.layers', 'model.linearAttention.keyHeads', 'model.linearAttention.valueHeads',
  'model.linearAttention.keyHeadDim', 'model.linearAttention.valueHeadDim', 'model.linearAttention.convKernel', 'model.linearAttention.splitProjections', 'model.attentionOutputGate',
  'training', 'training.microBatch', 'training.globalBatch', 'training.gradAccum', 'training.seqLen', 'training.precision',
  'training.gradDtype', 'training.fp32GradAccum', 'training.optimizer', 'training.recompute', 'training.recomputeLayers', 'training.recomputeModules',
  'training.flashAttention', 'training.compile', 'training.fp8', 'training.fp8.recipe', 'training.fp8.paramGather',
  'training.regime', 'training.recomputePolicy', 'training.recomputeEvery', 'training.modelImpl', 'training.optimizerImpl', 'training.lossFusion', 'training.cudaGraph', 'training.expertsImpl', 'training.packing',
  'training.optimizerInBackward', 'training.syncEveryMicroBatch', 'training.pagedOptimizer', 'training.previousOutputHeld', 'training.activationOffload', 'training.normUpcast', 'training.ligerKernels', 'training.sampleTokens',
  'parallel', 'parallel.dp', 'parallel.tp', 'parallel.sp', 'parallel.pp', 'parallel.vpp', 'parallel.schedule',
  'parallel.stageLayers', 'parallel.cp', 'parallel.ep', 'parallel.etp', 'parallel.order', 'parallel.tpCommOverlap', 'parallel.epDispatcher', 'parallel.epCommOverlap',
  'parallel.sharding', 'parallel.sharding.style', 'parallel.sharding.stage', 'parallel.sharding.fsdpStrategy',
  'parallel.sharding.shardGroupSize', 'parallel.sharding.reshardAfterForward', 'parallel.sharding.offloadOptimizer',
  'parallel.sharding.offloadParams', 'parallel.sharding.reduceBucketElems', 'parallel.sharding.allgatherBucketElems',
  'parallel.sharding.prefetchBucketElems', 'parallel.sharding.maxLiveParams', 'parallel.sharding.overlapComm',
  'parallel.sharding.hpzPartition', 'parallel.sharding.quantizedWeights', 'parallel.sharding.quantizedGradients',
  'parallel.sharding.contiguousGradients', 'parallel.sharding.dsFusedAdam',
  'cluster', 'cluster.gpu', 'cluster.gpusPerNode', 'cluster.nodes', 'cluster.profile',
  'overhead', 'overhead.cudaContextBytes', 'overhead.allocatorFragmentation',
  'lora', 'lora.rank', 'lora.targets', 'lora.baseDtype', 'lora.dropout', 'lora.fusedQkv', 'lora.baseSavesInputs', 'lora.headQuantized', 'lora.dequantCast', 'lora.fullModules', 'lora.fullModulesCopied', 'lora.dora',
  ...FACT_ONLY_KEYS,
] as const satisfies readonly PlanPath[];

// Compile-time check in the other direction: every PlanPath is listed above.
type Unlisted = Exclude<PlanPath, (typeof PLAN_PATHS)[number]>;
const everyPathListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyPathListed;

const KNOWN: ReadonlySet<string> = new Set(PLAN_PATHS);

/** True for a string that names a plan input (for paths read from JSON tables or sent by a client). */
export function isPlanPath(s: unknown): s is PlanPath {
  return typeof s === 'string' && KNOWN.has(s);
}
