/**
 * Training settings of an llm-foundry (Composer) or OLMo YAML that the key table cannot map one to one: the FSDP
 * gradient-reduction dtype of the mixed-precision mode and the optimizer's implementation.
 */
import type { FactSink } from '../common/sink';
import { locOf, readOptimizer } from '../common/read';
import { at, type KEntry, type KNode } from '../common/tree';

const str = (e: KEntry | undefined): string | undefined => (e && e.value.kind === 'scalar' && typeof e.value.value === 'string' ? e.value.value : undefined);

/** The 16-bit dtype of a Composer / OLMo `precision` (amp_bf16, amp_fp16), bf16 when it says neither. */
function ampDtype(s: FactSink): 'bf16' | 'fp16' {
  return s.value('training.precision') === 'fp16-mixed' ? 'fp16' : 'bf16';
}

/**
 * Gradient-reduction dtype of torch FSDP's MixedPrecision as each trainer builds it. Composer
 * (composer/distributed/mosaic_parallelism.py `get_mixed_precision`, default 'DEFAULT'): DEFAULT reduces in fp32, PURE
 * in the autocast dtype, FULL in fp32, a dict names `reduce_dtype`. OLMo (olmo/config.py FSDPPrecision, default pure):
 * pure reduces in the autocast dtype, mixed in fp32.
 */
export function readFsdpPrecision(s: FactSink, root: KNode): void {
  const composer = at(root, 'fsdp_config.mixed_precision');
  const olmo = at(root, 'fsdp.precision');
  if (composer) {
    const rd = composer.value.kind === 'map' ? str(at(composer.value, 'reduce_dtype')) : undefined;
    const mode = composer.value.kind === 'scalar' ? String(composer.value.value ?? '').toUpperCase() : rd !== undefined ? 'DICT' : '';
    const byMode: Record<string, 'fp32' | 'amp'> = { DEFAULT: 'fp32', FULL: 'fp32', PURE: 'amp' };
    if (mode === 'DICT' && rd) {
      const dt = /32/.test(rd) ? 'fp32' : /16|bf/.test(rd) ? (/bf/.test(rd) ? 'bf16' : 'fp16') : undefined;
      if (dt) s.explicit('training.gradDtype', dt, locOf(composer, 'fsdp_config.mixed_precision.reduce_dtype'));
    } else if (mode === 'DICT' || (composer.value.kind === 'map' && !rd)) {
      s.diag('invalid-value', 'warning', 'fsdp_config.mixed_precision.reduce_dtype should name a dtype (float32, bfloat16, float16).', composer.keyRange ?? composer.value.range, ['training.gradDtype']);
    } else if (byMode[mode]) {
      s.explicit('training.gradDtype', byMode[mode] === 'fp32' ? 'fp32' : ampDtype(s), locOf(composer, 'fsdp_config.mixed_precision'));
    } else if (mode) {
      s.diag('invalid-value', 'warning', 'fsdp_config.mixed_precision should be DEFAULT, PURE, FULL or a map of dtypes.', composer.value.range, ['training.gradDtype']);
    }
  } else if (olmo) {
    const mode = str(olmo)?.toLowerCase();
    if (mode === 'pure') s.explicit('training.gradDtype', ampDtype(s), locOf(olmo, 'fsdp.precision'));
    else if (mode === 'mixed') s.explicit('training.gradDtype', 'fp32', locOf(olmo, 'fsdp.precision'));
    else s.diag('invalid-value', 'warning', 'fsdp.precision should be pure or mixed.', olmo.value.range, ['training.gradDtype']);
  }
  if (at(root, 'fsdp_config')) s.default('training.gradDtype', 'fp32', 'Composer FSDP mixed_precision DEFAULT: gradients reduced in fp32');
  else if (at(root, 'fsdp')) s.default('training.gradDtype', ampDtype(s), 'OLMo FSDPConfig precision pure: gradients reduced in the autocast dtype');
}

/**
 * The optimizer and how its step runs. Composer's DecoupledAdamW (composer/optim/decoupled_weight_decay.py) and
 * llm-foundry's DecoupledLionW (llmfoundry/optim/lion.py), like OLMo's LionW (olmo/optim.py), step each parameter in
 * a Python loop; `adamw` is torch's AdamW (foreach kernels, the engine default).
 */
export function readFoundryOptimizer(s: FactSink, root: KNode): void {
  const e = at(root, 'optimizer.name');
  const name = str(e);
  if (e && !name && e.value.kind !== 'scalar') s.diag('invalid-value', 'warning', 'optimizer.name should be the optimizer\'s name.', e.value.range, ['training.optimizer']);
  if (!e || !name) return;
  if (!readOptimizer(s, e, 'optimizer.name', name)) return;
  const loop = name.startsWith('decoupled_') || name === 'lionw';
  if (loop) s.derived('training.optimizerImpl', 'for-loop', `${name} steps each parameter in a Python loop`, locOf(e, 'optimizer.name'));
}
