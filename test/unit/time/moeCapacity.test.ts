/**
 * Drop and pad to capacity (Megatron `--moe-expert-capacity-factor c` with `--moe-pad-expert-input-to-capacity`):
 * every expert runs exactly ⌈T·k/E · c⌉ tokens (megatron/core/transformer/moe/moe_utils.py `get_capacity`), the
 * all-to-all dispatcher sends capacity · E tokens (token_dispatcher.py `num_out_tokens = capacity * num_experts`) and
 * copies nothing to the host (`_maybe_dtoh_and_synchronize` returns early under `drop_and_pad`). Megatron refuses the
 * flag without a factor (transformer_config.py: "moe_expert_capacity_factor must be set to use
 * moe_pad_expert_input_to_capacity"). Expected values from those definitions.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { resolvePlan } from '../../../shared/plan/resolve';
import { dispatchPass } from '../../../shared/comm/dispatch';
import { axisLink } from '../../../shared/comm/links';
import { findGpu } from '../../../shared/hardware/gpus';
import { routedTokenFactor } from '../../../shared/model/capacity';
import type { GpuSpec, ModelSpec } from '../../../shared/plan/types';
import { estimateStepTime } from '../../../shared/time/estimate';
import { TimeCache } from '../../../shared/time/cache';
import { FITTED_PARAMS } from '../../../shared/time/params';
import { estimateMemory } from '../../../shared/memory/estimate';
import { gpt, plan } from '../sim/fixtures';

const H100 = findGpu('h100-sxm') as GpuSpec;
const moeFlags = '--num-layers 4 --hidden-size 2048 --num-attention-heads 16 --seq-length 4096 --max-position-embeddings 4096 --micro-batch-size 1 --global-batch-size 64 --bf16 --num-experts 64 --moe-router-topk 8 --moe-ffn-hidden-size 768 --expert-model-parallel-size 8 --moe-token-dispatcher-type alltoall';
const parse = (extra: string) => parseConfig('/ws/train.sh', `torchrun --nproc_per_node 8 pretrain_gpt.py ${moeFlags} ${extra}\n`);
const planOf = (extra: string) => resolvePlan(parse(extra), []).plan!;

describe('Megatron drop and pad', () => {
  before(async () => { await initFormats(); });

  test('the factor is read only with the padding flag', () => {
    assert.equal(parse('--moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity').facts['model.moe.capacityFactor']?.value, 1.25);
    assert.equal(planOf('--moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity').model.moe?.capacityFactor, 1.25);
    // Dropping without padding changes nothing under balanced routing: no factor, still dropless.
    assert.equal(parse('--moe-expert-capacity-factor 1.25').facts['model.moe.capacityFactor'], undefined);
    assert.equal(planOf('--moe-expert-capacity-factor 1.25').model.moe?.capacityFactor, undefined);
  });

  test('a NeMo YAML says the same with moe_pad_expert_input_to_capacity and moe_expert_capacity_factor', () => {
    // NeMo-Framework-Launcher conf/training/mixtral/mixtral_8x7b.yaml writes both, with the all-to-all dispatcher.
    const yaml = (pad: boolean) => `trainer:\n  devices: 8\n  num_nodes: 1\nmodel:\n  micro_batch_size: 1\n  global_batch_size: 64\n  encoder_seq_length: 4096\n  num_layers: 4\n  hidden_size: 2048\n  ffn_hidden_size: 768\n  num_attention_heads: 16\n  num_moe_experts: 8\n  moe_router_topk: 2\n  expert_model_parallel_size: 8\n  moe_token_dispatcher_type: alltoall\n  moe_pad_expert_input_to_capacity: ${pad}\n  moe_expert_capacity_factor: 1.5\n`;
    const r = parseConfig('/ws/conf/training/mixtral.yaml', yaml(true), 'nemo');
    assert.equal(r.facts['model.moe.capacityFactor']?.value, 1.5);
    assert.equal(r.facts['model.moe.topK']?.value, 2);
    assert.equal(r.facts['parallel.epDispatcher']?.value, 'alltoall');
    assert.equal(r.facts['model.moe.capacityFactor']?.source.range?.start.line, 16, 'the factor\'s line (0-based)');
    assert.equal(parseConfig('/ws/conf/training/mixtral.yaml', yaml(false), 'nemo').facts['model.moe.capacityFactor'], undefined);
  });

  test('a factor that is not a positive number is a warning at its value, and the plan stays dropless', () => {
    for (const v of ['-1', '0', 'lots']) {
      const r = parse(`--moe-expert-capacity-factor ${v} --moe-pad-expert-input-to-capacity`);
      assert.ok(r.diagnostics.some((d) => d.code === 'invalid-value' && d.message.includes('--moe-expert-capacity-factor')), `${v}: ${JSON.stringify(r.diagnostics)}`);
      assert.equal(r.facts['model.moe.capacityFactor'], undefined, v);
    }
  });

  test('padding without a factor is a warning at the flag, and the plan stays dropless', () => {
    const text = `torchrun --nproc_per_node 8 pretrain_gpt.py ${moeFlags} --moe-pad-expert-input-to-capacity\n`;
    const r = parseConfig('/ws/train.sh', text);
    const d = r.diagnostics.find((x) => x.code === 'megatron-pad-without-capacity');
    assert.ok(d && d.severity === 'warning', JSON.stringify(r.diagnostics));
    assert.equal(d.range.start.character, text.indexOf('--moe-pad-expert-input-to-capacity'));
    assert.equal(resolvePlan(r, []).plan!.model.moe?.capacityFactor, undefined);
  });

  test('the experts run c times the balanced tokens: factor 1 is the dropless plan, 2 costs more time and memory', () => {
    assert.equal(routedTokenFactor({}), 1);
    assert.equal(routedTokenFactor({ capacityFactor: 1.5 }), 1.5);
    const dropless = planOf('');
    const one = planOf('--moe-expert-capacity-factor 1 --moe-pad-expert-input-to-capacity');
    const two = planOf('--moe-expert-capacity-factor 2 --moe-pad-expert-input-to-capacity');
    // The kernels and the dispatch are the dropless plan's at factor 1; what differs is the host copy of the tokens per
    // expert, which padding spares (shared/time/moeHost.ts), so the two are compared without the host constant.
    const kernels = () => new TimeCache({ ...FITTED_PARAMS, moeHostSeconds: 0 });
    assert.equal(estimateStepTime(one, kernels()).stepSeconds, estimateStepTime(dropless, kernels()).stepSeconds);
    assert.ok(estimateStepTime(two, kernels()).stepSeconds > estimateStepTime(dropless, kernels()).stepSeconds * 1.05);
    assert.ok(estimateStepTime(one).stepSeconds < estimateStepTime(dropless).stepSeconds, 'padding spares the host copy');
    const act = (p: typeof one) => estimateMemory(p).stages[0].activationBytes;
    assert.equal(act(one), act(dropless));
    assert.ok(act(two) > act(dropless));
  });

  test('the all-to-all sends the padded capacity: c·T·k·h·B', () => {
    const model: ModelSpec = { ...gpt(8, 2048, 16), moe: { experts: 64, topK: 8, expertFfnSize: 768, sharedExperts: 0, sharedExpertFfnSize: 0, denseFirstLayers: 0, layerFrequency: 1, sharedExpertGate: false } };
    const T = 4096, h = 2048, B = 2;
    const p = plan({ model, parallel: { dp: 8, ep: 8 }, cluster: { gpu: H100, gpusPerNode: 8 } });
    const link = axisLink(p, 'ep');
    assert.equal(dispatchPass(p, 'alltoall', T, model.moe!, h, B, link).bytes, T * 8 * h * B);
    assert.equal(dispatchPass(p, 'alltoall', T, { ...model.moe!, capacityFactor: 1.5 }, h, B, link).bytes, 1.5 * T * 8 * h * B);
  });

  test('padding spares the host copy: an info with the all-to-all dispatcher, the warning with the all-gather one', () => {
    const pad = '--moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity';
    const info = estimateStepTime(planOf(pad)).problems.find((p) => p.code === 'moe-host-timing');
    assert.ok(info && info.severity === 'info' && info.paths[0] === 'model.moe.capacityFactor', JSON.stringify(info));
    const gathered = estimateStepTime(planOf(`${pad} --moe-token-dispatcher-type allgather`)).problems.find((p) => p.code === 'moe-host-timing');
    assert.equal(gathered?.severity, 'warning');
    assert.equal(estimateStepTime(planOf('')).problems.find((p) => p.code === 'moe-host-timing')?.severity, 'warning');
  });
});
