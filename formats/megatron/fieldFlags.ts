/**
 * Megatron-Bridge and TransformerConfig field names whose Megatron-LM flags are spelled otherwise: the YAML reader
 * (yaml.ts), a Bridge launch's overrides (bridge.ts) and the recipe table (bridgeRecipes.ts) turn `field` into
 * `--field` and then through this table.
 */

/** Renames Bridge/TransformerConfig field names that differ from their flags. */
export const YAML_FLAG_RENAME: Readonly<Record<string, string>> = {
  '--num-moe-experts': '--num-experts', '--fp8': '--fp8-format', '--fp4': '--fp4-format', '--add-bias-linear': '--disable-bias-linear',
  '--seq-length': '--seq-length', '--recompute-num-layers': '--recompute-num-layers',
  // TransformerConfig's virtual_pipeline_model_parallel_size is Megatron-LM's --num-virtual-stages-per-pipeline-rank.
  '--virtual-pipeline-model-parallel-size': '--num-virtual-stages-per-pipeline-rank',
};
