/**
 * Multi-token prediction (DeepSeek-V3 §2.2; Megatron `--mtp-num-layers D`, megatron/core/transformer/
 * multi_token_prediction.py MultiTokenPredictionLayer, docs/formulas.md#multi-token-prediction). Each of the D modules
 * normalises the next token's embedding (enorm) and the previous depth's hidden state (hnorm), concatenates them and
 * projects 2h → h (eh_proj, column-parallel, no bias), runs one transformer layer of the last decoder layer's kind
 * (gpt_builders.py: `decoder_layer_specs[-1]`), normalises its output (final_layernorm) and passes it through the shared
 * output layer to its own loss (process_mtp_loss). Megatron builds the modules on the last pipeline stage (mtp_on_this_rank
 * without a layout), which then also holds a copy of the input embedding (gpt_model.py builds `self.embedding` where
 * `pre_process or mtp_process`), kept in step with the first stage's by the embedding group's all-reduce.
 *
 * Here the modules' transformer layers are layers `model.layers` … `model.layers + D − 1` of the last pipeline stage
 * (shared/model/params.ts moeLayersIn gives them the last layer's kind); this file holds what else they add.
 */
import type { ModelSpec } from '../plan/modelSpec';

/** The model's multi-token prediction modules D (0 without). */
export function mtpModules(model: Pick<ModelSpec, 'mtpLayers'>): number {
  const d = model.mtpLayers ?? 0;
  return d > 0 && Number.isFinite(d) ? Math.floor(d) : 0;
}

/**
 * Parameters of the D modules beyond their transformer layers, on one tensor-parallel rank:
 * D · (2h·h / t for eh_proj + 3 norms: enorm, hnorm, final_layernorm), norms whole on every rank.
 */
export function mtpOwnParams(model: ModelSpec, normParams: number, tp: number): number {
  const h = model.hiddenSize;
  return mtpModules(model) * ((2 * h * h) / Math.max(1, tp) + 3 * normParams);
}

/**
 * Forward FLOPs of the D modules beyond their transformer layers for T tokens on one tensor-parallel rank: the 2h → h
 * projection, 2·T·2h·h/t each, and another pass through the output layer, 2·T·h·V/t each (Megatron's
 * num_floating_point_operations counts the same: "MTP eh proj" and the logits × (mtp_num_layers + 1)).
 */
export function mtpOwnForwardFlops(model: ModelSpec, tokens: number, tp: number): number {
  const h = model.hiddenSize;
  return (mtpModules(model) * 2 * tokens * h * (2 * h + model.vocabSize)) / Math.max(1, tp);
}
