/**
 * torchtune recipe keys beyond the layout (docs/formats/lightning.md; key table formats/torchtune/keys.json): LoRA targets,
 * torch.compile, the chunked losses and the memory switches (optimizer in backward, activation offloading), with the recipes'
 * own start-up checks (recipes/full_finetune_single_device.py and lora_finetune_*.py raise RuntimeError on them).
 */
import type { FactSink } from '../common/sink';
import { isEmpty, locOf, readBool, readNum, readStr } from '../common/read';
import { loraTargetsOf } from '../common/maps';
import { at, type KNode } from '../common/tree';
import { toBool, toNumber } from '../common/text';

const TT = 'torchtune';

/**
 * The projections a torchtune LoRA builder adapts: `lora_attn_modules` (q_proj, k_proj, v_proj, output_proj) and, with
 * `apply_lora_to_mlp` (builder default False), the MLP's w1, w3, w2 (torchtune/models/llama3_2/_model_builders.py
 * lora_llama3_2_3b and the other lora_* builders).
 */
export function readTorchtuneLora(s: FactSink, root: KNode): void {
  const attn = at(root, 'model.lora_attn_modules');
  const mlp = at(root, 'model.apply_lora_to_mlp');
  const mods = attn && attn.value.kind === 'list' ? (attn.value.items ?? []).map((i) => String(i.value)) : [];
  const mlpOn = mlp?.value.kind === 'scalar' && toBool(mlp.value.value) === true;
  const targets = loraTargetsOf([...mods, ...(mlpOn ? ['w1', 'w3', 'w2'] : [])]);
  const where = attn ?? mlp;
  if (targets && where) s.explicit('lora.targets', targets, locOf(where, attn ? 'model.lora_attn_modules' : 'model.apply_lora_to_mlp'));
  // Each LoRALinear's own nn.Dropout (torchtune/modules/peft/lora.py; the builders' lora_dropout defaults to 0.0).
  readNum(s, root, 'model.lora_dropout', 'lora.dropout', { min: 0, max: 1 });
  s.default('lora.dropout', 0, `${TT} lora_* builders: lora_dropout 0.0`);
  const out = at(root, 'model.apply_lora_to_output');
  if (out?.value.kind === 'scalar' && toBool(out.value.value) === true) {
    s.diag('unmodelled-value', 'info', 'apply_lora_to_output: the adapter on the output projection (rank × (hidden + vocabulary) weights and their optimizer states) is not counted.',
      out.value.range, ['lora.targets']);
  }
}

/** torchtune's chunked losses (torchtune/modules/loss): logits formed and upcast chunk by chunk. */
const CHUNKED_LOSS = /(^|\.)(LinearCrossEntropyLoss|CEWithChunkedOutputLoss)$/;

/**
 * torch.compile, the loss, and the switches that save memory in ways the estimate does not follow. With `compile`, the
 * recipe compiles the loss (training.compile_loss): a chunked loss then keeps each chunk's 16-bit logits and its
 * log-sum-exp for backward and no fp32 copy, and its backward replaces them chunk by chunk (shared/memory/loss.ts
 * 'chunked').
 */
export function readTorchtuneTraining(s: FactSink, root: KNode): void {
  const compile = readBool(s, root, 'compile', 'training.compile');
  s.default('training.compile', false, `${TT} default: compile False`);
  const lossName = readStr(root, 'loss._component_');
  const loss = at(root, 'loss._component_');
  // Eager, each chunk is upcast and its log_softmax output saved (shared/memory/loss.ts 'chunked-eager').
  if (lossName && loss && CHUNKED_LOSS.test(lossName)) s.explicit('training.lossFusion', compile ? 'chunked' : 'chunked-eager', locOf(loss, 'loss._component_'));
  const accum = at(root, 'gradient_accumulation_steps');
  const clip = at(root, 'clip_grad_norm');
  const opt = at(root, 'optimizer_in_bwd');
  // torchtune steps each parameter inside the backward and frees its gradient (training.optimizerInBackward).
  if (opt && readBool(s, root, 'optimizer_in_bwd', 'training.optimizerInBackward') === true) {
    if (accum && (toNumber(accum.value.value) ?? 1) > 1) {
      s.diag('torchtune-optimizer-in-bwd', 'error', 'torchtune refuses this at start-up: "Gradient accumulation is not supported with optimizer_in_bwd: True" (set gradient_accumulation_steps: 1).',
        accum.value.range, ['training.gradAccum']);
    }
    // clip_grad_norm: null (YAML null) leaves clipping off.
    if (clip && !isEmpty(clip)) {
      s.diag('torchtune-optimizer-in-bwd', 'error', 'torchtune refuses this at start-up: "Gradient clipping is not supported with optimizer_in_bwd: True" (set clip_grad_norm: null).',
        clip.value.range, ['training.optimizer']);
    }
  }
  // torchao float8 on a bf16 model (full_finetune_distributed `enable_fp8_training`): the plan's FP8 precision keeps an
  // fp32 master copy that torchtune's bf16 recipe does not have, so the run is timed and sized as bf16 and says so.
  const fp8 = at(root, 'enable_fp8_training');
  if (fp8?.value.kind === 'scalar' && toBool(fp8.value.value) === true) {
    s.diag('unmodelled-value', 'warning', 'enable_fp8_training: torchao float8 linear layers are not modelled for torchtune\'s bf16 recipe; '
      + 'the estimate times the GEMMs at bf16 rates (the step is likely too long) and sizes the run as bf16.', fp8.value.range, ['training.precision']);
  }
  // The checkpointed activations go to pinned CPU memory on a side stream (training.activationOffload).
  const off = at(root, 'enable_activation_offloading');
  if (off && readBool(s, root, 'enable_activation_offloading', 'training.activationOffload') === true) {
    s.diag('unmodelled-value', 'info', 'enable_activation_offloading: the copies of the checkpointed activations to CPU memory and back run on side streams and are not timed; '
      + 'the step time assumes they hide behind compute.', off.value.range, ['training.activationOffload']);
    const ac = at(root, 'enable_activation_checkpointing');
    if (ac?.value.kind === 'scalar' && toBool(ac.value.value) === false) {
      s.diag('torchtune-activation-offloading', 'error', 'torchtune refuses this at start-up: "enable_activation_offloading should only be True when enable_activation_checkpointing is True".',
        ac.value.range, ['training.recompute']);
    }
  }
}
