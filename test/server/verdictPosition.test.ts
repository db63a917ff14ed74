/**
 * Where the verdict hint goes (server/features/inlayHints.ts verdictPosition): the end of the first line unless that
 * line is too long to leave room for the hint in a 1280-pixel window (~100 columns beside the explorer), then the
 * first short line near the top. The long first line of Accelerate's own fsdp example hid the verdict off screen.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { verdictPosition } from '../../server/features/inlayHints';

const LONG = `# ${'x'.repeat(100)}`;

const CASES: readonly { name: string; text: string; want: { line: number; character: number } }[] = [
  { name: 'a short first line keeps the verdict', text: '#!/bin/bash\nGPUS=8', want: { line: 0, character: 11 } },
  { name: 'a JSON brace', text: '{\n  "train_batch_size": 8\n}', want: { line: 0, character: 1 } },
  { name: 'an empty file', text: '', want: { line: 0, character: 0 } },
  {
    name: 'a long comment first: the next short line (Accelerate examples/config_yaml_templates/fsdp.yaml)',
    text: '# Since we are doing FSDP (even though it\'s multi-GPU), we need to specify the distributed type as FSDP\ndistributed_type: FSDP\n',
    want: { line: 1, character: 22 },
  },
  { name: 'two long lines, then a blank one', text: `${LONG}\n${LONG}\n\nkey: 1`, want: { line: 2, character: 0 } },
  { name: 'CRLF line ends are not counted', text: `${LONG}\r\nmodel: x\r\n`, want: { line: 1, character: 8 } },
  { name: 'nothing short in the first 12 lines: the first line', text: Array(20).fill(LONG).join('\n'), want: { line: 0, character: LONG.length } },
  // 56 characters plus the 43 of the longest hint label stay within ~100 columns.
  { name: 'a 56-character line is short enough', text: `${'y'.repeat(56)}\nz`, want: { line: 0, character: 56 } },
  { name: 'a 57-character line is not', text: `${'y'.repeat(57)}\nz`, want: { line: 1, character: 1 } },
];

describe('verdict hint position', () => {
  for (const c of CASES) test(c.name, () => assert.deepEqual(verdictPosition(c.text), c.want));
});
