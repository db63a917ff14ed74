/**
 * The plans the search evaluates are the plans the full estimate reads: every training setting a file states (the
 * model's implementation, the loss, Liger's kernels, torchtune's norm and chunked loss, …) stays in the search's plans,
 * so the memory/time front the planner shows with its fast figures (first principles: one plan, one number) equals the
 * traceable estimates of the same layouts (planForLayout), and its ranking is over the run the file describes. Before,
 * the search dropped those settings: on Axolotl's Liger example the fast figures of its best layout read 0.321 s and
 * 54.6 GiB where the layout's estimate is 0.358 s and 40.1 GiB.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { planForLayout } from '../../../shared/planner/build';
import { planLayouts } from '../../../shared/planner/plan-layouts';
import { choiceOf } from '../../../shared/planner/search';
import { stagePeaks } from '../../../shared/memory/fast';
import { estimateStepTime } from '../../../shared/time/estimate';

const FILES: Record<string, string> = {
  'axolotl.yml': 'base_model: meta-llama/Llama-3.2-3B\nplugins:\n  - axolotl.integrations.liger.LigerPlugin\nliger_rms_norm: true\nliger_glu_activation: true\nliger_fused_linear_cross_entropy: true\nmicro_batch_size: 8\ngradient_accumulation_steps: 2\nsequence_len: 2048\nbf16: true\nfsdp_version: 2\nfsdp_config:\n  reshard_after_forward: true\n',
  'sft.yaml': 'model_name_or_path: Qwen/Qwen2.5-7B\nper_device_train_batch_size: 2\ngradient_accumulation_steps: 4\nmax_length: 4096\nbf16: true\ngradient_checkpointing: true\nuse_liger_kernel: true\n',
  '3B_full_single_device.yaml': 'model:\n  _component_: torchtune.models.llama3_2.llama3_2_3b\ntokenizer:\n  max_seq_len: 4096\nbatch_size: 4\ndtype: bf16\nloss:\n  _component_: torchtune.modules.loss.CEWithChunkedOutputLoss\noptimizer:\n  _component_: torch.optim.AdamW\n  fused: True\ncompile: False\nenable_activation_checkpointing: True\n',
};

describe('the search evaluates the plans the full estimate reads', () => {
  before(async () => { await initFormats(); });
  for (const [name, text] of Object.entries(FILES)) {
    test(`${name}: every front layout's fast figures equal its estimate`, () => {
      const plan = resolvePlan(parseConfig(`/ws/${name}`, text), [], { settings: { worldSize: 8, gpu: 'h100-sxm' } }).plan!;
      const r = planLayouts(plan);
      assert.ok(r.pareto.length > 0, r.problems.map((p) => p.code).join());
      for (const l of r.pareto) {
        if (l.estimate !== 'fast') continue;
        const full = planForLayout(plan, choiceOf(l), r.gpus)!;
        const t = estimateStepTime(full).stepSeconds;
        assert.ok(Math.abs(l.stepSeconds / t - 1) <= 1e-9, `${JSON.stringify(choiceOf(l))}: ${l.stepSeconds} vs ${t}`);
        const m = stagePeaks(full).reserved;
        assert.ok(Math.abs(l.peakReservedBytes / m - 1) <= 1e-9, `${JSON.stringify(choiceOf(l))}: ${l.peakReservedBytes} vs ${m}`);
      }
    });
  }
});
