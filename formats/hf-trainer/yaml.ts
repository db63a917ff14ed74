/** Hugging Face TrainingArguments YAML (TRL `--config`, alignment-handbook and open-r1 recipes), read through keys.json. */
import hfTrainer from './keys.json';
import { applyTable, found, getter, type DialectTable } from '../common/keyTable';
import type { FactSink } from '../common/sink';
import { hfTrainerAccumulation } from '../common/read';
import { bnbFlagSaves, peftArgumentDefaults, readLoraFullModules, readLoraTargets } from '../common/finetune';
import { entry, type KNode } from '../common/tree';
import { readHfLiger } from '../common/liger';

const HF = hfTrainer as DialectTable;

/** Hugging Face TrainingArguments YAML (TRL `--config`, alignment-handbook and open-r1 recipes). */
export function readHfTrainerYaml(s: FactSink, root: KNode | undefined): void {
  if (!root || root.kind !== 'map') return;
  const get = getter(root);
  // TRL recipes also give the attention kernel as model_init_kwargs.attn_implementation.
  const lookup = (key: string) => (key === '--attn_implementation' ? get('attn_implementation') ?? get('model_init_kwargs.attn_implementation') : get(key.slice(2)));
  applyTable(s, HF, (key) => (key.startsWith('--') ? lookup(key) : undefined));
  bnbFlagSaves(s, 'The trainer');
  hfTrainerAccumulation(s, 'HF Trainer', root);
  readHfLiger(s, root);
  if (s.value('lora.enabled') === false) { delete s.facts['lora.enabled']; delete s.facts['lora.rank']; }
  // TRL's ModelConfig keys in a recipe (use_peft without lora_r, lora_dropout or lora_target_modules).
  const named = s.value('lora.enabled') === true && readLoraTargets(s, root, 'lora_target_modules');
  if (s.value('lora.enabled') === true) readLoraFullModules(s, root, 'lora_modules_to_save');
  peftArgumentDefaults(s, get('use_peft') ? 'trl' : undefined, named);
  // TRL SFTConfig: packing with packing_strategy bfd packs padding-free (each sample attends within itself).
  const packing = get('packing'), strategy = get('packing_strategy');
  if (packing && String(packing.value).toLowerCase() === 'true' && strategy && String(strategy.value) === 'bfd' && !s.has('training.packing')) {
    s.explicit('training.packing', 'varlen', { key: 'packing_strategy', keyRange: strategy.keyRange, valueRange: strategy.valueRange ?? strategy.keyRange, uri: strategy.uri });
  }
  const ds = found(entry(root, 'deepspeed'));
  if (ds && typeof ds.value === 'string' && /\.json$/i.test(ds.value)) s.ref('deepspeed', ds.value, ds.valueRange);
}
