/** Hugging Face TrainingArguments flags in launch scripts (formats/hf-trainer/keys.json): batch, precision, model, DeepSpeed JSON. */
import table from './keys.json';
import type { FactValue } from '../../shared/plan/facts';
import type { FactSink } from '../common/sink';
import { optimizerOf } from '../common/maps';
import { toBool, toNumber } from '../common/text';
import type { FlagArg } from '../megatron/args';

interface Spec { readonly type: string; readonly plan?: string; readonly value?: FactValue }
const KEYS: Readonly<Record<string, Spec>> = table.keys as Record<string, Spec>;

/** True when any HF Trainer flag (other than shared ones such as --bf16) is present. */
export function hasHfTrainerArgs(args: readonly FlagArg[]): boolean {
  return args.some((a) => a.flag in KEYS && !['--bf16', '--fp16'].includes(a.flag)) || args.some((a) => a.flag === '--deepspeed' && a.value?.endsWith('.json'));
}

export function applyHfTrainerArgs(s: FactSink, args: readonly FlagArg[]): void {
  for (const a of args) {
    const spec = KEYS[a.flag];
    if (!spec) continue;
    const loc = { key: a.flag, keyRange: a.flagRange, valueRange: a.valueRange ?? a.flagRange };
    if (a.flag === '--deepspeed') { if (a.value && !a.unresolved && a.value.endsWith('.json')) s.ref('deepspeed', a.value, a.valueRange); continue; }
    if (!spec.plan) continue;
    if (spec.type === 'flag') {
      const on = a.value === undefined ? true : toBool(a.value);
      if (on && spec.value !== undefined) s.explicit(spec.plan, spec.value, loc);
      continue;
    }
    if (a.value === undefined || a.unresolved) continue;
    if (spec.type === 'int') { const n = toNumber(a.value); if (n !== undefined && Number.isInteger(n) && n > 0) s.explicit(spec.plan, n, loc); continue; }
    if (a.flag === '--optim') { const o = optimizerOf(a.value); if (o) s.explicit(spec.plan, o, loc); continue; }
    if (a.flag === '--model_name_or_path') { s.explicit('model.preset', a.value, loc); s.ref('model', a.value, a.valueRange); }
  }
}
