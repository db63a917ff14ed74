/**
 * Megatron YAML's key table: every Megatron-LM flag as the snake_case field its YAML files write (legacy `--yaml-cfg`
 * files, Megatron-Bridge override YAML), with the flag's documentation, plus the flags themselves (functional-test
 * YAML keys MODEL_ARGS by flag). The YAML reader turns each field into its flag (formats/megatron/yaml.ts), so the
 * flag's entry says what the field does. Hovers find a nested field by its last segment (server/features/keyAt.ts).
 */
import type { KeyDoc, KeyTable } from '../common/keyDocs';
import { lookupTable } from '../../shared/lookup';
import { YAML_FLAG_RENAME } from './fieldFlags';

const field = (flag: string) => flag.slice(2).replace(/-/g, '_');

/** The YAML table of a Megatron flag table. */
export function megatronYamlKeys(flags: KeyTable): KeyTable {
  const out: Record<string, KeyDoc> = {};
  for (const [flag, d] of Object.entries(flags.keys)) {
    if (!flag.startsWith('--')) continue;
    out[flag] = d;
    out[field(flag)] ??= d;
  }
  // Fields whose names differ from their flags (TransformerConfig's num_moe_experts is --num-experts).
  for (const [from, to] of Object.entries(YAML_FLAG_RENAME)) {
    const d = flags.keys[to];
    if (d && from !== to) out[field(from)] = { ...d, description: `${d.description ?? ''} (Megatron-LM's ${to}.)`.trim() };
  }
  // TransformerConfig's add_bias_linear is the opposite of the flag --disable-bias-linear.
  const bias = flags.keys['--disable-bias-linear'];
  if (bias) out.add_bias_linear = { ...bias, default: true, description: 'Biases on the linear layers (True by default; false is Megatron-LM\'s --disable-bias-linear).' };
  return { keys: lookupTable(out) };
}
