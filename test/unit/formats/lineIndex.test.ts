/**
 * Offsets to LSP positions (zero-based line and UTF-16 character) for every kind of line break the LSP recognises:
 * LF, CRLF and a lone CR (LSP specification, "Position": '\n', '\r\n' and '\r' end a line). Expected positions are
 * counted by hand from the strings.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LineIndex } from '../../../formats/common/text';

describe('LineIndex', () => {
  const cases: [string, string, [number, number, number][]][] = [
    // [name, text, [offset, line, character]…]
    ['empty', '', [[0, 0, 0], [5, 0, 0]]],
    ['one line, no break', 'abc', [[0, 0, 0], [2, 0, 2], [3, 0, 3]]],
    ['LF', 'ab\ncd\n', [[2, 0, 2], [3, 1, 0], [4, 1, 1], [6, 2, 0]]],
    ['CRLF', 'ab\r\ncd', [[2, 0, 2], [3, 0, 3], [4, 1, 0], [5, 1, 1]]],
    ['lone CR', 'ab\rcd', [[2, 0, 2], [3, 1, 0], [4, 1, 1]]],
    ['mixed', 'a\nb\r\nc\rd', [[1, 0, 1], [2, 1, 0], [5, 2, 0], [7, 3, 0]]],
    ['blank lines', '\n\n\nx', [[0, 0, 0], [1, 1, 0], [2, 2, 0], [3, 3, 0], [4, 3, 1]]],
  ];
  for (const [name, text, points] of cases) {
    test(`positions and offsets: ${name}`, () => {
      const li = new LineIndex(text);
      for (const [offset, line, character] of points) {
        assert.deepEqual(li.position(offset), { line, character: Math.min(character, text.length) }, `offset ${offset}`);
        if (offset <= text.length) assert.equal(li.offset({ line, character }), offset, `line ${line}:${character}`);
      }
    });
  }
});
