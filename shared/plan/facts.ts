/**
 * What a config parser extracts from a file: facts keyed by plan path, each with its value and source range.
 * `resolvePlan` (shared/plan/resolve.ts) turns facts from one or more files into a Plan, filling framework
 * defaults, derived values and explicit assumptions.
 */
import type { PlanPath } from './paths';
import type { InputSource, Problem, TextRange } from './types';

export type FormatId =
  | 'deepspeed'
  | 'megatron-script'
  | 'megatron-yaml'
  | 'torchtitan'
  | 'accelerate'
  | 'nanotron'
  | 'axolotl'
  | 'llamafactory'
  | 'lightning'
  | 'litgpt'
  | 'torchtune'
  | 'hf-config'
  | 'nemo'
  | 'gpt-neox'
  | 'hf-trainer'
  | 'nemo-rl'
  | 'roll'
  | 'easyr1'
  | 'llm-foundry'
  | 'lingua'
  | 'picotron'
  | 'verl';

export type FactValue = number | string | boolean | readonly number[];

/** One value read from (or defaulted for) a config file. */
export interface Fact {
  readonly value: FactValue;
  readonly source: InputSource;
  /** Range of the key, where hints and hovers attach (the value range is in source.range). */
  readonly keyRange?: TextRange;
  /** The key as written, e.g. "zero_optimization.stage" or "--tensor-model-parallel-size". */
  readonly key?: string;
}

/** A reference from one config file to another (DeepSpeed JSON, HF config.json, model preset). */
export interface ConfigReference {
  /**
   * deepspeed: a DeepSpeed JSON; model: a model id or config.json; accelerate: an Accelerate config
   * (`accelerate launch --config_file`); config: the trainer's own config file a launcher passes (a LLaMA-Factory or
   * TRL YAML, a torchtune recipe).
   */
  readonly kind: 'deepspeed' | 'model' | 'accelerate' | 'config';
  /** Path or id as written (relative paths resolved by the server). */
  readonly target: string;
  readonly range?: TextRange;
  readonly uri?: string;
  /** Folder a launch script `cd`ed into before using the path (relative to the script's folder, or absolute). */
  readonly cwd?: string;
  /** The function of a Python configuration module the launch names (torchtitan `--config F` with `--module M`). */
  readonly symbol?: string;
}

/** Everything one parser read from one file. */
export interface ConfigFacts {
  readonly format: FormatId;
  readonly uri: string;
  /**
   * Facts keyed by plan path. Paths are those of `Plan` ("training.microBatch", "parallel.tp",
   * "parallel.sharding.stage", "model.hiddenSize", …) plus these extra keys:
   * "cluster.worldSize", "cluster.gpuName", "model.preset" (preset id or config.json path).
   * Readers also emit: "cluster.gpusPerNode", "cluster.nodes", "model.type" (HF model_type), "model.name",
   * "parallel.dpReplicate" (HSDP replicas), "parallel.vppLayers", "parallel.firstStageLayers",
   * "parallel.lastStageLayers", "parallel.firstStageLess" / "parallel.lastStageLess" (torchtitan's layer-equivalents of
   * the embedding and the head in its pipeline split), "parallel.sharding.instances" (Megatron optimizer instances), "lora.enabled",
   * "lora.rank", "lora.targets" (comma list: "q,k,v"), "lora.baseDtype", "engine" (EngineId, when the file fixes it),
   * "launch.dialect" (the argument dialect of a launch script: megatron, hf-trainer, deepspeed-chat, openrlhf, verl).
   * A value of "auto" is DeepSpeed's sentinel.
   */
  readonly facts: Readonly<Partial<Record<PlanPath, Fact>>>;
  readonly references: readonly ConfigReference[];
  /** Format-level problems (parse errors, unknown or deprecated keys, contradictions) with ranges. */
  readonly diagnostics: readonly ConfigDiagnostic[];
}

/** The facts of a file as [path, fact] pairs (Object.entries loses the key type). */
export function factEntries(facts: ConfigFacts['facts']): [PlanPath, Fact][] {
  return Object.entries(facts) as [PlanPath, Fact][];
}

/** Whether any value of the given plan sections was read from a file (not a framework default). */
export function givesPlanValue(facts: ConfigFacts['facts'], sections: readonly ('model' | 'training' | 'parallel' | 'cluster')[]): boolean {
  return factEntries(facts).some(([path, f]) => !!f && f.source.kind !== 'default' && sections.includes(path.slice(0, path.indexOf('.')) as 'model'));
}

/** A problem found while reading a file, anchored at a range. */
export interface ConfigDiagnostic extends Problem {
  readonly range: TextRange;
  /**
   * For a setting the file writes with a value only the run gives (`--micro-batch-size $MBS`, `seq_length: ${oc.env:SEQ}`):
   * the flag or key as the file spells it. The estimate names it in the assumption that stands in for the value
   * (shared/plan/runTime.ts unresolvedSettings).
   */
  readonly setting?: string;
}
