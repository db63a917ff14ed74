/**
 * The extension manifest (package.json) and the packaging allow-list: settings keys and defaults match the protocol's
 * ShardLensSettings (what the server reads), commands sit in the "ShardLens" category, activation is narrow, the
 * DeepSpeed schema is registered, and Workspace Trust is declared as limited (VS Code extension manifest reference).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { DEFAULT_SETTINGS, ServerExecutedCommands } from '../../../shared/protocol';

const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
const props: Record<string, { default: unknown; markdownDescription?: string; description?: string }> = pkg.contributes.configuration.properties;

/** Flattens DEFAULT_SETTINGS into `shardlens.a.b` keys. */
function flatten(o: object, prefix = 'shardlens'): [string, unknown][] {
  return Object.entries(o).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) ? flatten(v, `${prefix}.${k}`) : [[`${prefix}.${k}`, v] as [string, unknown]]));
}

describe('settings', () => {
  for (const [key, value] of flatten(DEFAULT_SETTINGS)) {
    test(`${key} is declared with the server's default`, () => {
      assert.ok(props[key], `${key} missing from contributes.configuration`);
      assert.deepEqual(props[key].default, value);
    });
  }
  test('every setting has a description', () => {
    for (const [k, p] of Object.entries(props)) assert.ok((p.markdownDescription ?? p.description ?? '').length > 10, k);
  });
});

describe('commands and activation', () => {
  const ids = pkg.contributes.commands.map((c: { command: string }) => c.command);
  for (const id of ['shardlens.simulateStep', 'shardlens.openDashboard', 'shardlens.runValidation', 'shardlens.runProbe', 'shardlens.selectCluster', 'shardlens.selectModel', 'shardlens.showOutput']) {
    test(`${id} is contributed`, () => assert.ok(ids.includes(id)));
  }
  test('every command is in the ShardLens category', () => {
    for (const c of pkg.contributes.commands) assert.equal(c.category, 'ShardLens', c.command);
  });
  test('activation never uses "*"', () => {
    assert.ok(!pkg.activationEvents.includes('*'));
    assert.ok(pkg.activationEvents.includes('onLanguage:json'));
  });
  test('every contributed command is registered in extension/, and every registered one is contributed', () => {
    // extension/commands/index.ts lists the client's command factories; the probe's ids are in extension/probe/commands.ts.
    const src = ['extension/commands/index.ts', 'extension/probe/commands.ts'].map((f) => readFileSync(f, 'utf8')).join('\n');
    // The server's own commands are registered by the language client from its executeCommandProvider; a second
    // registration by the extension would make the client fail to register them ("command already exists").
    const byServer: string[] = Object.values(ServerExecutedCommands);
    for (const id of ids) {
      if (byServer.includes(id)) assert.ok(!src.includes(`'${id}'`), `${id} is the server's: the extension must not register it`);
      else assert.ok(src.includes(`'${id}'`), `${id} not registered`);
    }
    const registered = [...readFileSync('extension/commands/index.ts', 'utf8').matchAll(/^\s+'(shardlens\.[\w.]+)':/gm)].map((m) => m[1]);
    assert.ok(registered.length >= 8, registered.join(', '));
    for (const id of registered) assert.ok(ids.includes(id), `${id} registered but not in package.json`);
  });
  test('Workspace Trust is limited, not unsupported', () => assert.equal(pkg.capabilities.untrustedWorkspaces.supported, 'limited'));
});

describe('schema and packaging', () => {
  test('jsonValidation points at the bundled DeepSpeed schema', () => {
    const v = pkg.contributes.jsonValidation[0];
    assert.ok(v.fileMatch.includes('ds_config*.json'));
    assert.ok(existsSync(v.url.replace(/^\.\//, '')));
  });
  test('.vscodeignore is an allow-list that ships no sources or node_modules', () => {
    const lines = readFileSync('.vscodeignore', 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    assert.equal(lines[0], '**');
    assert.ok(lines.slice(1).every((l) => l.startsWith('!')));
    assert.ok(!lines.some((l) => /node_modules|\.ts$|^!src|^!shared|^!server/.test(l)));
    for (const need of ['!package.json', '!dist/extension.js', '!dist/server.js', '!dist/webview/webview.js', '!schemas/*.json', '!media/icon.png']) assert.ok(lines.includes(need), need);
  });
  test('the icon and activity-bar icon exist', () => {
    assert.ok(existsSync(pkg.icon));
    assert.ok(existsSync(pkg.contributes.viewsContainers.activitybar[0].icon));
  });
});
