/**
 * Fuzz (issue 16): `.vscode/settings.json` files, from well-formed to hostile (prototype keys, wrong types, huge
 * values, deep nesting, mutated text), through the CLI's settings parser. Asserts: no throw, nothing added to
 * Object.prototype, every value taken lies within what the manifest declares, and objects have no prototype.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import manifest from '../../package.json';
import { parseSettingsText } from '../../cli/settings';
import { normalizeSettings } from '../../server/settings';
import { rng } from '../../shared/random';
import { mutate } from './mutate';

const INPUTS = Number(process.env.SHARDLENS_FUZZ_SETTINGS ?? 3000);
const SEED = Number(process.env.SHARDLENS_FUZZ_SEED ?? 20_260_401);

interface Schema { type: string; enum?: string[]; minimum?: number; maximum?: number }
const SCHEMA = manifest.contributes.configuration.properties as Record<string, Schema>;
const KEYS = Object.keys(SCHEMA);
const HOSTILE_KEYS = ['shardlens.__proto__.distDir', 'shardlens.constructor.prototype.python', '__proto__', 'shardlens.__proto__', 'shardlens.cluster.__proto__.gpu', 'shardlens.toString', 'constructor'];
const VALUES: unknown[] = ['H100-SXM', '', 'x'.repeat(10_000), 8, -1, 0, 1e308, 0.5, 3.7, true, null, [], ['deepspeed'], ['evil'], {}, { __proto__: 1 }, { a: { b: { c: { d: { e: 1 } } } } }, 'GB', 'verbose'];

function randomSettings(r: () => number): string {
  const parts: string[] = [];
  const n = Math.floor(r() * 8);
  for (let i = 0; i < n; i++) {
    const key = r() < 0.3 ? HOSTILE_KEYS[Math.floor(r() * HOSTILE_KEYS.length)] : KEYS[Math.floor(r() * KEYS.length)];
    const value = VALUES[Math.floor(r() * VALUES.length)];
    // JSON.stringify drops a literal __proto__ key of an object, so nested hostile keys are written as text.
    const json = value !== null && typeof value === 'object' && !Array.isArray(value) && r() < 0.5 ? '{"__proto__": {"polluted": 1}, "constructor": {"prototype": {"polluted": 1}}}' : JSON.stringify(value);
    parts.push(`  ${JSON.stringify(key)}: ${json}`);
  }
  return `// settings\n{\n${parts.join(',\n')}\n}\n`;
}

/** The value at a dotted path of own properties. */
const at = (o: unknown, path: string) => path.split('.').reduce<unknown>((x, k) => (x && typeof x === 'object' && Object.hasOwn(x, k) ? (x as Record<string, unknown>)[k] : undefined), o);

test(`fuzz: ${INPUTS} settings files through the CLI settings parser`, () => {
  const r = rng(SEED);
  const protoKeys = Object.getOwnPropertyNames(Object.prototype).sort();
  for (let i = 0; i < INPUTS; i++) {
    let text = randomSettings(r);
    if (r() < 0.3) text = mutate(text, r);
    const where = `input ${i} (seed ${SEED}): ${text.slice(0, 200)}`;
    const { raw } = parseSettingsText(text);
    assert.equal(Object.getPrototypeOf(raw), null, where);
    for (const key of KEYS) {
      const v = at(raw, key.slice('shardlens.'.length));
      if (v === undefined) continue;
      const s = SCHEMA[key];
      if (s.type === 'string') assert.ok(typeof v === 'string' && v.length <= 4096 && (!s.enum || s.enum.includes(v)), `${where} ${key}`);
      if (s.type === 'integer' || s.type === 'number') {
        assert.ok(typeof v === 'number' && Number.isFinite(v) && (s.minimum === undefined || v >= s.minimum) && (s.maximum === undefined || v <= s.maximum), `${where} ${key}`);
      }
      if (s.type === 'object') assert.equal(Object.getPrototypeOf(v), null, `${where} ${key}`);
    }
    normalizeSettings(raw);
    assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), protoKeys, `${where}: Object.prototype changed`);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, where);
  }
});
