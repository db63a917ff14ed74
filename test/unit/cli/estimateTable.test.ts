/**
 * The per-stage table of `shardlens estimate` splits the allocated peak into columns: every memory term but the
 * allocator's (reserved − allocated) must land in exactly one column, or the columns do not add up to the total the
 * same row prints (a Megatron FP8 row once hid its fp8 weight caches, 18.9 GiB, outside every column).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { COLUMNS } from '../../../cli/commands/estimate';
import { TERM_INFO } from '../../../shared/memory/termInfo';

describe('estimate table columns', () => {
  test('every allocated memory term is in exactly one column', () => {
    const counted = COLUMNS.flatMap(([, terms]) => terms);
    for (const name of Object.keys(TERM_INFO)) {
      if (name === 'fragmentation') {
        assert.equal(counted.includes(name), false, 'fragmentation is reserved − allocated, not a part of allocated');
        continue;
      }
      assert.equal(counted.filter((t) => t === name).length, 1, `${name} in one column`);
    }
    for (const t of counted) assert.ok(t in TERM_INFO, `${t} is a memory term`);
  });
});
