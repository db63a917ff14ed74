/**
 * Liger-Kernel as trainers switch it on (formats/common/liger.ts), from their sources:
 * - HF TrainingArguments `use_liger_kernel` (transformers trainer.py `_apply_liger_kernel_to_instance(model,
 *   **liger_kernel_config)`; Liger's apply functions default fused_linear_cross_entropy=True), as YAML and as flags;
 *   `liger_kernel_config: {fused_linear_cross_entropy: false}` keeps transformers' loss.
 * - Axolotl: the liger_* keys act only with `plugins: [axolotl.integrations.liger.LigerPlugin]`.
 * - LLaMA-Factory `enable_liger_kernel`: loader.py passes require_logits = stage not in (pt, sft), and
 *   liger_kernel.py turns the fused loss off when logits are required.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const HF = 'model_name_or_path: meta-llama/Llama-3.2-3B\nper_device_train_batch_size: 4\nmax_length: 2048\nbf16: true\n';
const AX = 'base_model: meta-llama/Llama-3.2-3B\nmicro_batch_size: 4\nsequence_len: 2048\nbf16: true\n';
const LF = 'model_name_or_path: meta-llama/Llama-3.2-3B\nstage: sft\nfinetuning_type: full\ncutoff_len: 2048\nbf16: true\n';

const fusion = (uri: string, text: string) => parseConfig(uri, text).facts['training.lossFusion']?.value;
const kernels = (uri: string, text: string) => parseConfig(uri, text).facts['training.ligerKernels']?.value;
const codes = (uri: string, text: string) => parseConfig(uri, text).diagnostics.map((d) => `${d.severity}:${d.code}@${d.range.start.line}`);

describe('Liger-Kernel in trainer configs', () => {
  before(async () => { await initFormats(); });

  test('HF Trainer YAML: use_liger_kernel turns the fused loss on, with an info at the key', () => {
    const text = HF + 'use_liger_kernel: true\n';
    assert.equal(fusion('file:///ws/sft.yaml', text), 'liger');
    assert.ok(codes('file:///ws/sft.yaml', text).includes('info:liger-kernels@4'));
    // Liger's apply functions default rope, rms_norm and swiglu to True as well.
    assert.equal(kernels('file:///ws/sft.yaml', text), 'rms_norm,rope,swiglu');
    assert.equal(fusion('file:///ws/sft.yaml', HF + 'use_liger_kernel: false\n'), undefined);
    assert.equal(kernels('file:///ws/sft.yaml', HF + 'use_liger_kernel: false\n'), undefined);
  });

  test('HF Trainer YAML: liger_kernel_config fused_linear_cross_entropy false keeps transformers\' loss', () => {
    const text = HF + 'use_liger_kernel: true\nliger_kernel_config:\n  fused_linear_cross_entropy: false\n  rope: false\n';
    assert.equal(fusion('file:///ws/sft.yaml', text), undefined);
    assert.equal(kernels('file:///ws/sft.yaml', text), 'rms_norm,swiglu');
    assert.ok(codes('file:///ws/sft.yaml', text).includes('info:liger-kernels@4'));
  });

  test('HF Trainer flags: a bare --use_liger_kernel and --use_liger_kernel True; False leaves the loss', () => {
    const sh = (flag: string) => `#!/bin/bash\ntorchrun --nproc_per_node 8 run_clm.py --model_name_or_path meta-llama/Llama-3.1-8B --per_device_train_batch_size 2 --bf16 ${flag}\n`;
    assert.equal(fusion('file:///ws/train.sh', sh('--use_liger_kernel')), 'liger');
    assert.equal(fusion('file:///ws/train.sh', sh('--use_liger_kernel True')), 'liger');
    assert.equal(fusion('file:///ws/train.sh', sh('--use_liger_kernel False')), undefined);
    const off = sh('--use_liger_kernel --liger_kernel_config \'{"fused_linear_cross_entropy": false, "swiglu": false}\'');
    assert.equal(fusion('file:///ws/train.sh', off), undefined);
    assert.equal(kernels('file:///ws/train.sh', off), 'rms_norm,rope');
  });

  test('Axolotl: the plugin and liger_fused_linear_cross_entropy turn the fused loss on', () => {
    const text = AX + 'plugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_rms_norm: true\nliger_fused_linear_cross_entropy: true\n';
    assert.equal(fusion('file:///ws/ax.yml', text), 'liger');
    assert.equal(kernels('file:///ws/ax.yml', text), 'rms_norm');
    assert.ok(codes('file:///ws/ax.yml', text).includes('info:liger-kernels@7'));
  });

  test('Axolotl: liger_* keys without the plugin do nothing, and each one set is warned at its line', () => {
    const text = AX + 'liger_rms_norm: true\nliger_fused_linear_cross_entropy: true\n';
    assert.equal(fusion('file:///ws/ax.yml', text), undefined);
    assert.equal(kernels('file:///ws/ax.yml', text), undefined);
    const c = codes('file:///ws/ax.yml', text);
    assert.ok(c.includes('warning:liger-plugin-missing@4') && c.includes('warning:liger-plugin-missing@5'), c.join(' '));
  });

  test('Axolotl: the plugin without the fused loss keeps transformers\' loss and says so', () => {
    const text = AX + 'plugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_rms_norm: true\nliger_glu_activation: true\nliger_fused_linear_cross_entropy: false\n';
    assert.equal(fusion('file:///ws/ax.yml', text), undefined);
    assert.equal(kernels('file:///ws/ax.yml', text), 'rms_norm,swiglu');
    assert.ok(codes('file:///ws/ax.yml', text).includes('info:liger-kernels@6'));
  });

  test('LLaMA-Factory: enable_liger_kernel fuses the loss at pt and sft (sft when unstated), not at dpo', () => {
    assert.equal(fusion('file:///ws/lf.yaml', LF + 'enable_liger_kernel: true\n'), 'liger');
    assert.equal(fusion('file:///ws/lf.yaml', LF.replace('stage: sft\n', '') + 'enable_liger_kernel: true\n'), 'liger');
    const dpo = LF.replace('stage: sft', 'stage: dpo') + 'enable_liger_kernel: true\n';
    assert.equal(fusion('file:///ws/lf.yaml', dpo), undefined);
    assert.equal(kernels('file:///ws/lf.yaml', dpo), 'rms_norm,rope,swiglu');
    assert.ok(codes('file:///ws/lf.yaml', dpo).includes('info:liger-kernels@5'));
  });

  test('llamafactory-cli flags: --enable_liger_kernel with --stage', () => {
    const sh = (stage: string) => `#!/bin/bash\nllamafactory-cli train --stage ${stage} --model_name_or_path meta-llama/Llama-3.1-8B --finetuning_type full --enable_liger_kernel --bf16\n`;
    assert.equal(fusion('file:///ws/lf.sh', sh('sft')), 'liger');
    assert.equal(fusion('file:///ws/lf.sh', sh('kto')), undefined);
  });
});
