/**
 * Commands and settings named by ShardLens are the ones package.json contributes, in both directions: everything the
 * server emits (code lens commands, assumption settings and commands, setting names in source details) is contributed
 * and registered, and everything contributed is listed in shared/protocol/commands.ts, registered by the extension
 * and reachable (command palette, a menu, the status bar, a dashboard button or a server code lens).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ClientCommands, Commands, DEFAULT_SETTINGS, SETTING_RULES, ServerExecutedCommands, type SettingId } from '../../../shared/protocol';
import { analyzeDocument } from '../../../server/analysis/analyze';
import { core, initCore } from '../../../server/analysis/core';
import { createHost } from '../../../server/analysis/host';
import { buildCodeLenses } from '../../../server/features/codeLens';
import { normalizeSettings } from '../../../server/settings';

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
  contributes: {
    commands: { command: string }[];
    configuration: { properties: Record<string, unknown> };
    menus: Record<string, { command: string; when?: string }[]>;
  };
};
const contributedCommands = new Set(pkg.contributes.commands.map((c) => c.command));
const contributedSettings = new Set(Object.keys(pkg.contributes.configuration.properties));
const commandIds = new Set<string>(Object.values(Commands));
/** Every setting: one per DEFAULT_SETTINGS field (`calibration` is one table), plus the language client's trace. */
function settingIdsOf(o: object, prefix: string): string[] {
  return Object.entries(o).flatMap(([k, v]) => (v && typeof v === 'object' && !Array.isArray(v) && k !== 'calibration' ? settingIdsOf(v, `${prefix}.${k}`) : [`${prefix}.${k}`]));
}
const traceSetting: SettingId = 'shardlens.trace.server';
const settingIds = new Set<string>([...settingIdsOf(DEFAULT_SETTINGS, 'shardlens'), traceSetting]);

/** Every TypeScript source below a folder, concatenated. */
function sources(dir: string): string {
  return readdirSync(dir).map((n) => join(dir, n)).map((p) => (statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? readFileSync(p, 'utf8') : '')).join('\n');
}

/** Every example config (examples/ holds one or more per format). */
function exampleFiles(dir = 'examples'): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? exampleFiles(p) : /\.(json|ya?ml|toml|sh)$/.test(n) ? [p] : [];
  });
}

describe('commands: package.json ↔ shared/protocol/commands.ts', () => {
  test('every listed command is contributed', () => {
    for (const id of commandIds) assert.ok(contributedCommands.has(id), `${id} is not in contributes.commands`);
  });
  test('every contributed command is listed', () => {
    for (const id of contributedCommands) assert.ok(commandIds.has(id), `${id} is contributed but not in Commands`);
  });
  test('every contributed command is registered by the extension, except the server\'s own (the language client registers those)', () => {
    const src = sources('extension');
    const byServer = new Set<string>(Object.values(ServerExecutedCommands));
    for (const [key, id] of Object.entries(Commands)) {
      if (byServer.has(id)) continue;
      assert.ok(src.includes(`'${id}'`) || src.includes(`Commands.${key}`), `${id} is never registered in extension/`);
    }
  });
  test('every contributed command is reachable', () => {
    const hidden = new Set((pkg.contributes.menus.commandPalette ?? []).filter((m) => m.when === 'false').map((m) => m.command));
    const inMenus = new Set(Object.entries(pkg.contributes.menus).filter(([k]) => k !== 'commandPalette').flatMap(([, v]) => v.map((m) => m.command)));
    const fromServer = new Set<string>([...Object.values(ClientCommands), ...Object.values(ServerExecutedCommands)]);
    const fromWebview = sources('extension/dashboard');
    for (const id of contributedCommands) {
      const reachable = !hidden.has(id) || inMenus.has(id) || fromServer.has(id) || fromWebview.includes(`'${id}'`);
      assert.ok(reachable, `${id} is hidden from the palette and nothing invokes it`);
    }
  });
});

describe('settings: package.json ↔ DEFAULT_SETTINGS (shared/protocol/settings.ts)', () => {
  test('every listed setting is contributed', () => {
    for (const id of settingIds) assert.ok(contributedSettings.has(id), `${id} is not in contributes.configuration`);
  });
  test('every contributed setting is listed', () => {
    for (const id of contributedSettings) assert.ok(settingIds.has(id), `${id} is contributed but not a field of ShardLensSettings`);
  });
  test('every number and choice among the settings has a rule, and every rule names a setting', () => {
    const leaves = [...settingIds].filter((id) => id !== traceSetting).map((id) => id.slice('shardlens.'.length));
    const value = (key: string): unknown => key.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], DEFAULT_SETTINGS);
    for (const key of leaves) if (typeof value(key) === 'number') assert.ok(SETTING_RULES[key], `${key} has no bounds in SETTING_RULES`);
    for (const key of Object.keys(SETTING_RULES)) assert.ok(leaves.includes(key), `SETTING_RULES.${key} is not a setting`);
  });
  test('every setting but the language client trace is a field of the server settings', () => {
    // normalizeSettings returns a complete ShardLensSettings, so each field is read from what the client sends.
    const flat = (o: object, prefix: string): string[] => Object.entries(o).flatMap(([k, v]) =>
      (v && typeof v === 'object' && !Array.isArray(v) && k !== 'calibration' ? flat(v, `${prefix}.${k}`) : [`${prefix}.${k}`]));
    const fields = new Set(flat(normalizeSettings({}), 'shardlens'));
    for (const id of contributedSettings) if (id !== 'shardlens.trace.server') assert.ok(fields.has(id), `${id} is not read by the server`);
  });
});

describe('what the server emits on the examples is contributed', () => {
  before(async () => {
    await initCore();
  });
  const settings = normalizeSettings({});
  const host = createHost(() => undefined, () => resolve('examples'));
  for (const file of exampleFiles()) {
    test(file, () => {
      const uri = pathToFileURL(resolve(file)).toString();
      const a = analyzeDocument({ uri, version: 1, text: readFileSync(file, 'utf8'), settings }, host, core());
      for (const lens of buildCodeLenses(a)) {
        const id = lens.command?.command;
        if (id) assert.ok(contributedCommands.has(id), `code lens command ${id}`);
      }
      for (const x of a.assumptions) {
        if (x.setting) assert.ok(contributedSettings.has(x.setting), `assumption setting ${x.setting}`);
        if (x.command) assert.ok(contributedCommands.has(x.command), `assumption command ${x.command}`);
      }
      for (const src of Object.values(a.plan?.sources ?? {})) {
        for (const named of src?.detail.match(/\bshardlens\.[A-Za-z.]+[A-Za-z]/g) ?? []) {
          assert.ok(contributedSettings.has(named) || contributedCommands.has(named), `source detail names ${named}`);
        }
      }
    });
  }
});
