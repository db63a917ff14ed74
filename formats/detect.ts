/** Recognises a config format from the file name and the top-level keys (docs/formats/README.md#detection). */
import type { FormatId } from '../shared/plan/facts';
import { jsonTree } from './common/jsonTree';
import { baseName, LineIndex } from './common/text';
import { at, entry, keys, type KNode } from './common/tree';
import { tomlTree } from './common/tomlTree';
import { yamlTree } from './common/yamlTree';
import { mergeDefaults } from './common/defaults';
import type { SourceReader } from './megatron/script';
import { torchtitanConfigFunctions } from './torchtitan/python';

/** Texts longer than this are not parsed to detect their format (the cap of formats/index.ts). */
const MAX_DETECT_CHARS = 256 * 1024;

const DS_NAME = /^(ds_config.*|ds_z[0-3].*config.*|zero[0-3].*|zero_stage[0-3].*config.*|.*deepspeed.*)\.json$/i;
const MEGATRON_TEXT = /pretrain_[a-z0-9_]*\.py|--tensor-model-parallel-size|--num-layers\b|--num-attention-heads|--per_device_train_batch_size|--deepspeed[ =]\S+\.json/;
/**
 * A launch script: a launcher, a trainer CLI, a Slurm directive, or a sourced script or one it runs (`bash run.sh …`,
 * `./scripts/train.sh …`, with arguments or not) (launch dialects, issue 12).
 */
const LAUNCH_TEXT = /(^|[\s;(`"'])(torchrun|deepspeed|srun|sbatch|mpirun|accelerate\s+launch|python3?\s+(-u\s+)?(-m\s+\S+|\S+\.py)|swift\s+(sft|pt|rlhf)|megatron\s+(sft|pt|rlhf)|llamafactory-cli\s+train|tune\s+run|ray\s+job\s+submit)\b|^#SBATCH\s|^\s*(\w+=\S*\s+)*(source|\.)\s+\S+\.sh\b|^\s*(\w+=\S*\s+)*(nohup\s+)?((ba)?sh\s+(-[a-z]+\s+)*\S+|\S*\/\S+)\.sh(\s|$)/m;

function ext(name: string): string {
  const i = name.lastIndexOf('.');
  return i >= 0 ? name.slice(i + 1).toLowerCase() : '';
}

/** DeepSpeed by content: top-level ZeRO or batch keys, or fp16/bf16 objects with "enabled". */
function isDeepSpeed(root: KNode | undefined): boolean {
  if (!root || root.kind !== 'map') return false;
  if (entry(root, 'zero_optimization') || entry(root, 'train_micro_batch_size_per_gpu') || entry(root, 'train_batch_size')) return true;
  return ['fp16', 'bf16'].some((k) => at(root, `${k}.enabled`) !== undefined);
}

/** A Hugging Face model config: its type and sizes at the top, or a multimodal one's language model in `text_config`. */
function isHfConfig(root: KNode | undefined): boolean {
  if (!root || root.kind !== 'map') return false;
  const has = (node: KNode, ...ks: string[]) => ks.some((k) => entry(node, k));
  const sized = (node: KNode) => has(node, 'hidden_size', 'n_embd', 'n_embed', 'd_model') && has(node, 'num_hidden_layers', 'n_layer', 'num_layers', 'n_layers');
  const text = entry(root, 'text_config')?.value;
  return has(root, 'model_type', 'architectures') && (sized(root) || (text?.kind === 'map' && sized(text)));
}

/** NeMo 1 / launcher YAML (trainer + model with Megatron keys) or a test YAML with NeMo 2 overrides. */
function isNemo(root: KNode): boolean {
  const flat = entry(root, 'MODEL_ARGS')?.value;
  if (flat && keys(flat).some((k) => k.startsWith('trainer.') || k.startsWith('data.micro_batch_size'))) return true;
  if (!entry(root, 'trainer') || !entry(root, 'model')) return false;
  return ['model.tensor_model_parallel_size', 'model.micro_batch_size', 'model.encoder_seq_length', 'model.peft', 'model.global_batch_size'].some((p) => at(root, p) !== undefined);
}

/** GPT-NeoX: its parallel keys (with `_` or `-`) or its model keys at the top level. */
function isGptNeox(root: KNode): boolean {
  const ks = new Set(keys(root).map((k) => k.replace(/-/g, '_')));
  if (ks.has('pipe_parallel_size') || (ks.has('model_parallel_size') && ks.has('num_layers'))) return true;
  // A training-settings part of a split config (configs/llama/train_config.yml): DeepSpeed keys at the top of a YAML file.
  if ((ks.has('zero_optimization') || ks.has('train_micro_batch_size_per_gpu')) && (ks.has('checkpoint_activations') || ks.has('partition_activations') || ks.has('optimizer'))) return true;
  return ks.has('num_layers') && ks.has('seq_length') && (ks.has('attention_config') || ks.has('pos_emb') || ks.has('norm'));
}

/** Hugging Face TrainingArguments YAML: a model and trainer arguments, without LLaMA-Factory's or Axolotl's keys. */
function isHfTrainerYaml(root: KNode): boolean {
  const has = (k: string) => entry(root, k) !== undefined;
  if (!has('model_name_or_path') && !has('dataset_name') && !has('dataset_mixture')) return false;
  return ['per_device_train_batch_size', 'gradient_accumulation_steps', 'learning_rate', 'max_seq_length', 'max_length', 'num_train_epochs'].some(has);
}

/** Trainer YAML families read through a key table: NeMo-RL, ROLL, EasyR1, llm-foundry / OLMo, Lingua (formats/<name>/). */
function tableYaml(root: KNode): FormatId | undefined {
  const has = (k: string) => entry(root, k) !== undefined;
  if (has('policy') && ['policy.dtensor_cfg', 'policy.megatron_cfg', 'policy.train_global_batch_size', 'policy.max_total_sequence_length'].some((p) => at(root, p))) return 'nemo-rl';
  if (['sft_train', 'actor_train'].some((w) => at(root, `${w}.strategy_args`) || at(root, `${w}.training_args`))) return 'roll';
  if (at(root, 'worker.actor') && at(root, 'worker.rollout')) return 'easyr1';
  if (at(root, 'actor_rollout_ref.actor') || at(root, 'actor_rollout_ref.rollout') || (at(root, 'model.partial_pretrain') && at(root, 'data.micro_batch_size_per_gpu'))) return 'verl';
  if (has('global_train_batch_size') || has('device_train_microbatch_size')) return 'llm-foundry';
  if ((at(root, 'distributed.fsdp_type') || at(root, 'distributed.dp_shard')) && (at(root, 'data.seq_len') || at(root, 'model.n_layers') || has('grad_acc_steps'))) return 'lingua';
  return undefined;
}

/** Format of a parsed YAML root. */
export function detectYaml(root: KNode | undefined): FormatId | undefined {
  if (!root || root.kind !== 'map') return undefined;
  const has = (k: string) => entry(root, k) !== undefined;
  const table = tableYaml(root);
  if (table) return table;
  if (has('distributed_type') && (has('num_processes') || has('compute_environment') || has('mixed_precision'))) return 'accelerate';
  if (at(root, 'parallelism.dp') && has('tokens')) return 'nanotron';
  if (has('base_model') && (has('micro_batch_size') || has('sequence_len') || has('datasets') || has('adapter'))) return 'axolotl';
  if (has('model_name_or_path') && (has('stage') || has('finetuning_type') || has('cutoff_len'))) return 'llamafactory';
  if (has('model') && (has('dist_config') || has('model_class')) && (has('micro_batch_size') || has('cutoff_len'))) return 'llamafactory';
  if (has('language_model') && has('model_parallel')) return 'megatron-yaml';
  if (isNemo(root)) return 'nemo';
  if (has('ConfigContainer') || (has('model_config') && has('train_config')) || (has('MODEL_ARGS') && keys(entry(root, 'MODEL_ARGS')?.value).some((k) => k.startsWith('--')))) return 'megatron-yaml';
  if (has('model') && has('train') && (has('ddp') || has('dist') || has('mixed_precision') || has('scheduler'))
    && (at(root, 'model.tensor_model_parallel_size') !== undefined || at(root, 'model.seq_length') !== undefined || at(root, 'train.micro_batch_size') !== undefined || at(root, 'train.train_iters') !== undefined)) return 'megatron-yaml';
  // A Megatron-Bridge override with only model and train: TransformerConfig's parallel sizes or Megatron's train_iters.
  if (has('model') && has('train') && (['tensor', 'pipeline', 'context', 'expert'].some((p) => at(root, `model.${p}_model_parallel_size`) !== undefined) || at(root, 'train.train_iters') !== undefined)) return 'megatron-yaml';
  // torchtune recipes name their builders by `_component_` (model, or policy_model / tokenizer in the PPO recipes).
  const comp = (k: string) => at(root, `${k}._component_`)?.value.value;
  if (['model', ...keys(root)].some((k) => { const c = comp(k); return typeof c === 'string' && c.startsWith('torchtune.'); })) return 'torchtune';
  if (at(root, 'train.micro_batch_size') && (has('checkpoint_dir') || has('model_name') || has('precision') || has('devices'))) return 'litgpt';
  if (isGptNeox(root)) return 'gpt-neox';
  if (isHfTrainerYaml(root)) return 'hf-trainer';
  if (at(root, 'trainer.strategy') || (has('trainer') && (at(root, 'trainer.precision') || at(root, 'trainer.devices')) && has('model'))) return 'lightning';
  return undefined;
}

/**
 * Detects the format of a document; undefined when it is none ShardLens reads. With `readSource`, a YAML file that
 * is only overrides of the bases its `defaults:` names (a NeMo-RL recipe that changes the GPUs per node) is
 * recognised by the merged config.
 */
export function detectFormat(uri: string, text: string, readSource?: SourceReader): FormatId | undefined {
  try {
    // Above the size cap nothing is parsed (parseConfig says why); detection by content would parse it all.
    if (text.length > MAX_DETECT_CHARS) return undefined;
    const name = baseName(uri);
    const e = ext(name);
    const li = new LineIndex(text);
    // A DeepSpeed JSON saved as .conf / .cfg (open-instruct's stage3_*_accelerate.conf).
    if ((e === 'conf' || e === 'cfg') && /^\s*\{/.test(text)) return isDeepSpeed(jsonTree(text, li).root) ? 'deepspeed' : undefined;
    if (e === 'json') {
      const root = jsonTree(text, li).root;
      if (isHfConfig(root) || (/config\.json$/i.test(name) && entry(root, 'model_type') && !isDeepSpeed(root))) return 'hf-config';
      if (detectYaml(root) === 'accelerate') return 'accelerate';
      if (at(root, 'distributed.tp_size') && at(root, 'training.micro_batch_size')) return 'picotron';
      if (DS_NAME.test(name) || isDeepSpeed(root)) return root?.kind === 'map' || DS_NAME.test(name) ? 'deepspeed' : undefined;
      return undefined;
    }
    if (e === 'toml') {
      const root = tomlTree(text, li).root;
      if (entry(root, 'model') && (entry(root, 'training') || entry(root, 'parallelism') || entry(root, 'job'))) return 'torchtitan';
      return /\/train_configs\//.test(uri) ? 'torchtitan' : undefined;
    }
    if (e === 'yaml' || e === 'yml') {
      const root = yamlTree(text, li).root;
      return detectYaml(root) ?? (readSource && entry(root, 'defaults') ? detectYaml(mergeDefaults(root, readSource).root) : undefined);
    }
    // A Python module is a configuration only when it holds torchtitan Trainer.Config functions (read, never run).
    if (e === 'py') return torchtitanConfigFunctions(text).length ? 'torchtitan' : undefined;
    if (['sh', 'bash', 'slurm', 'sbatch', ''].includes(e) || /^#!.*\b(ba)?sh\b/.test(text)) {
      return MEGATRON_TEXT.test(text) || LAUNCH_TEXT.test(text) ? 'megatron-script' : undefined;
    }
    return undefined;
  } catch {
    return undefined;
  }
}
