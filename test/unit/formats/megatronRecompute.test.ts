/**
 * Megatron-LM's recomputation flags (megatron/training/arguments.py; megatron/core/transformer/transformer_block.py
 * `_checkpointed_forward`): `--recompute-num-layers` counts the layers recomputed per pipeline stage only with
 * `--recompute-granularity full --recompute-method block`; with `uniform` it is the chunk size and every layer is
 * recomputed, and selective recomputation takes no method (arguments.py rejects one). NeMo's YAML follows the same rule
 * through Megatron-core (test/unit/formats/nemoFp8.test.ts).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';

const script = (extra: string) => `#!/bin/bash
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 \\
    --micro-batch-size 1 --global-batch-size 128 --bf16 ${extra}
`;
const factsOf = (extra: string) => parseConfig('/ws/train.sh', script(extra)).facts;

describe('Megatron --recompute-num-layers', () => {
  before(async () => { await initFormats(); });

  const cases: ReadonlyArray<readonly [string, string, number | undefined]> = [
    ['full, block: that many layers per stage', '--recompute-granularity full --recompute-method block --recompute-num-layers 4', 4],
    ['full, uniform: a chunk size, every layer recomputed', '--recompute-granularity full --recompute-method uniform --recompute-num-layers 1', undefined],
    ['full, no method: the count is not read', '--recompute-granularity full --recompute-num-layers 4', undefined],
    ['selective: no method applies', '--recompute-granularity selective --recompute-method block --recompute-num-layers 4', undefined],
    ['a quoted method is the same method', "--recompute-granularity full --recompute-method 'block' --recompute-num-layers 2", 2],
  ];
  for (const [name, flags, layers] of cases) {
    test(name, () => {
      const f = factsOf(flags);
      assert.equal(f['training.recomputeLayers']?.value, layers);
      if (flags.includes('granularity full')) assert.equal(f['training.recompute']?.value, 'full');
    });
  }
});
