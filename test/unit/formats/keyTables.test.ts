/** The key tables are complete enough to document every key the readers use, and point at real plan paths. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { keyTable } from '../../../formats/keyTables';
import { DS_DEFAULTS } from '../../../shared/plan/derived';
import { isPlanPath } from '../../../shared/plan/paths';
import type { FormatId } from '../../../shared/plan/facts';


const FORMATS: FormatId[] = ['deepspeed', 'megatron-script', 'accelerate', 'axolotl', 'llamafactory', 'torchtitan', 'nanotron', 'torchtune', 'megatron-yaml', 'hf-config', 'litgpt'];

describe('format key tables', () => {
  for (const f of FORMATS) {
    test(`${f}: every key documented, plan paths valid`, () => {
      const t = keyTable(f)?.keys ?? {};
      assert.ok(Object.keys(t).length >= 15, 'table has keys');
      for (const [k, v] of Object.entries(t)) {
        assert.ok((v.description?.length ?? 0) > 5, `${k} description`);
        // The PlanPath vocabulary (shared/plan/paths.ts): a key table cannot name an input the plan does not have.
        if (v.plan !== undefined) assert.ok(isPlanPath(v.plan), `${k} → ${v.plan}`);
      }
    });
  }

  test('Megatron YAML: each field documented as the flag the YAML reader turns it into', () => {
    // formats/megatron/yaml.ts: `num_layers` is --num-layers, TransformerConfig's num_moe_experts is --num-experts.
    const y = keyTable('megatron-yaml')!.keys;
    const f = keyTable('megatron-script')!.keys;
    assert.equal(y.num_layers, f['--num-layers']);
    assert.equal(y.tensor_model_parallel_size?.plan, f['--tensor-model-parallel-size']?.plan);
    assert.equal(y.num_moe_experts?.plan, f['--num-experts']?.plan);
    assert.match(y.num_moe_experts?.description ?? '', /--num-experts/);
    assert.equal(y.add_bias_linear?.default, true);
  });

  test('DeepSpeed: stage3_ aliases, "auto" fillers and deprecations are recorded', () => {
    const t = keyTable('deepspeed')?.keys ?? {};
    assert.deepEqual(t['zero_optimization.stage3_max_live_parameters']?.aliases, ['max_live_parameters']);
    assert.match(t['zero_optimization.reduce_bucket_size']!.auto!, /hidden_size²/);
    assert.equal(t['zero_optimization.cpu_offload']?.deprecated, 'zero_optimization.offload_optimizer');
    assert.ok(t['zero_optimization.offload_param.device'], 'offload_param.device is documented');
  });
  test('DeepSpeed defaults live in the key table; the core\'s fallbacks equal them', () => {
    const t = keyTable('deepspeed')?.keys ?? {};
    const z = 'zero_optimization.';
    assert.equal(t[`${z}reduce_bucket_size`]?.default, DS_DEFAULTS.reduceBucket);
    assert.equal(t[`${z}allgather_bucket_size`]?.default, DS_DEFAULTS.allgatherBucket);
    assert.equal(t[`${z}stage3_prefetch_bucket_size`]?.default, DS_DEFAULTS.prefetchBucket);
    assert.equal(t[`${z}stage3_max_live_parameters`]?.default, DS_DEFAULTS.maxLiveParams);
  });
});
