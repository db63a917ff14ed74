/** Flag parsing and progress lines of `shardlens validate` (issue 6 §1 command line). */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseValidateFlags, progressLine } from '../../validation/cliSupport';

describe('shardlens validate flags', () => {
  const cases: [string, Parameters<typeof parseValidateFlags>[0], object][] = [
    ['defaults', {}, {}],
    ['all flags', { ranks: '4', modes: 'ddp,ZeRO3', steps: '5' }, { ranks: 4, modes: ['ddp', 'zero3'], steps: 5 }],
    ['ranks not an integer', { ranks: '2.5' }, { error: '--ranks must be an integer from 1 to 16, not "2.5"' }],
    ['steps zero', { steps: '0' }, { error: '--steps must be an integer from 1 to 1000, not "0"' }],
    ['unknown mode', { modes: 'ddp,fsdp' }, { error: '--modes takes a comma-separated list of ddp, zero1, zero2, zero3; got "ddp,fsdp"' }],
  ];
  for (const [name, raw, expected] of cases) test(name, () => assert.deepEqual(parseValidateFlags(raw), expected));

  test('progress lines carry the fraction in the form the extension parses', () => {
    assert.equal(progressLine({ fraction: 0.25, message: 'zero1: step 1/5' }), '[25/100] zero1: step 1/5');
    const m = /\[(\d+)\/(\d+)\]/.exec(progressLine({ fraction: 2, message: 'x' }));
    assert.deepEqual([m?.[1], m?.[2]], ['100', '100']);
  });
});
