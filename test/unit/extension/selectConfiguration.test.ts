/**
 * "Analyse This Configuration Function" takes its arguments from a code lens: a document URI and a Python function
 * name. Anything else (a command run from elsewhere with other arguments) is ignored, never sent to the server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectionOf } from '../../../extension/commands/configuration';

test('a URI and a Python identifier pass; anything else is refused', () => {
  assert.deepEqual(selectionOf('file:///ws/torchtitan_recipes/llama3.py', 'llama3_8b'), { uri: 'file:///ws/torchtitan_recipes/llama3.py', symbol: 'llama3_8b' });
  assert.deepEqual(selectionOf('vscode-remote://ssh/ws/a.py', '_f2'), { uri: 'vscode-remote://ssh/ws/a.py', symbol: '_f2' });
  for (const [uri, symbol] of [
    ['/ws/a.py', 'f'], ['file:///ws/a.py', '2f'], ['file:///ws/a.py', 'f; rm -rf /'], ['file:///ws/a.py', ''], ['file:///ws/a.py', 'a'.repeat(201)],
    [undefined, 'f'], ['file:///ws/a.py', 42], [{ uri: 'file:///ws/a.py' }, 'f'], [`file:///${'x'.repeat(5000)}`, 'f'],
  ] as [unknown, unknown][]) assert.equal(selectionOf(uri, symbol), undefined, `${String(uri).slice(0, 40)} ${String(symbol)}`);
});
