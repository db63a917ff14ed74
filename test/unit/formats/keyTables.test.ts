/** The key tables are complete enough to document every key the readers use, and point at real plan paths. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { keyTable } from '../../../formats/keyTables';
import type { FormatId } from '../../../shared/plan/facts';

/** Plan paths (types.ts) plus the extra fact keys documented in facts.ts and used by the readers. */
const PLAN_PATH = /^(model\.(preset|layers|hiddenSize|heads|kvHeads|headDim|ffnSize|gatedMlp|attnBias|tiedEmbeddings|positions|maxPositions|norm|qkNorm|vocabSize|vocabPadMultiple|moe\.(experts|topK|expertFfnSize|sharedExpertFfnSize|layerFrequency))|training\.(microBatch|globalBatch|gradAccum|seqLen|precision|gradDtype|fp32GradAccum|optimizer|recompute|recomputeLayers|flashAttention|compile|fp8\.(recipe|paramGather))|parallel\.(dp|dpReplicate|tp|sp|pp|vpp|vppLayers|firstStageLayers|lastStageLayers|schedule|cp|ep|etp|tpCommOverlap|sharding\.(style|stage|fsdpStrategy|shardGroupSize|reshardAfterForward|offloadOptimizer|offloadParams|reduceBucketElems|allgatherBucketElems|prefetchBucketElems|maxLiveParams|overlapComm))|cluster\.(worldSize|nodes|gpusPerNode)|lora\.(enabled|rank|targets|baseDtype))$/;

const FORMATS: FormatId[] = ['deepspeed', 'megatron-script', 'accelerate', 'axolotl', 'llamafactory', 'torchtitan', 'nanotron'];

describe('format key tables', () => {
  for (const f of FORMATS) {
    test(`${f}: every key documented, plan paths valid`, () => {
      const t = keyTable(f)?.keys ?? {};
      assert.ok(Object.keys(t).length >= 15, 'table has keys');
      for (const [k, v] of Object.entries(t)) {
        assert.ok((v.description?.length ?? 0) > 5, `${k} description`);
        if (v.plan) assert.match(v.plan, PLAN_PATH, `${k} → ${v.plan}`);
      }
    });
  }

  test('DeepSpeed: stage3_ aliases, "auto" fillers and deprecations are recorded', () => {
    const t = keyTable('deepspeed')?.keys ?? {};
    assert.deepEqual(t['zero_optimization.stage3_max_live_parameters']?.aliases, ['max_live_parameters']);
    assert.match(t['zero_optimization.reduce_bucket_size']!.auto!, /hidden_size²/);
    assert.equal(t['zero_optimization.cpu_offload']?.deprecated, 'zero_optimization.offload_optimizer');
    assert.ok(t['zero_optimization.offload_param.device'], 'offload_param.device is documented');
  });
});
