/**
 * "Analyse This Configuration Function" is the server's command (workspace/executeCommand) and takes its arguments from
 * a code lens: a document URI and a Python function name. Any client can run it with any arguments, so anything else
 * is refused before the server acts on it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configurationSelection } from '../../../shared/protocol';

test('a URI and a Python identifier pass; anything else is refused', () => {
  assert.deepEqual(configurationSelection(['file:///ws/torchtitan_recipes/llama3.py', 'llama3_8b']), { uri: 'file:///ws/torchtitan_recipes/llama3.py', symbol: 'llama3_8b' });
  assert.deepEqual(configurationSelection(['vscode-remote://ssh/ws/a.py', '_f2']), { uri: 'vscode-remote://ssh/ws/a.py', symbol: '_f2' });
  for (const [uri, symbol] of [
    ['/ws/a.py', 'f'], ['file:///ws/a.py', '2f'], ['file:///ws/a.py', 'f; rm -rf /'], ['file:///ws/a.py', ''], ['file:///ws/a.py', 'a'.repeat(201)],
    [undefined, 'f'], ['file:///ws/a.py', 42], [{ uri: 'file:///ws/a.py' }, 'f'], [`file:///${'x'.repeat(5000)}`, 'f'],
  ] as [unknown, unknown][]) assert.equal(configurationSelection([uri, symbol]), undefined, `${String(uri).slice(0, 40)} ${String(symbol)}`);
  // Not an argument list at all (a command run from elsewhere).
  for (const args of [undefined, [], ['file:///ws/a.py'], { 0: 'file:///ws/a.py', 1: 'f' }] as unknown[]) {
    assert.equal(configurationSelection(args as unknown[] | undefined), undefined, JSON.stringify(args));
  }
});
