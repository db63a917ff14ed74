/** The CLI's settings parser: only declared keys, of the declared type and range, into objects without a prototype. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseSettingsText } from '../../cli/settings';
import { normalizeSettings } from '../../server/settings';

/** [settings text, key path in the parsed object, expected value (undefined: not taken)]. Types from package.json. */
const CASES: [string, string, unknown][] = [
  ['{"shardlens.cluster.gpu": "H100-SXM"}', 'cluster.gpu', 'H100-SXM'],
  ['{"shardlens.cluster.gpu": 80}', 'cluster.gpu', undefined],
  ['{"shardlens.cluster.gpusPerNode": 8}', 'cluster.gpusPerNode', 8],
  ['{"shardlens.cluster.gpusPerNode": 8.5}', 'cluster.gpusPerNode', undefined],
  ['{"shardlens.cluster.gpusPerNode": 4096}', 'cluster.gpusPerNode', undefined],
  ['{"shardlens.hints.detail": "verbose"}', 'hints.detail', 'verbose'],
  ['{"shardlens.hints.detail": "loud"}', 'hints.detail', undefined],
  ['{"shardlens.overhead.fragmentation": 2}', 'overhead.fragmentation', undefined],
  ['{"shardlens.formats.enabled": ["deepspeed", "deepspeed"]}', 'formats.enabled', ['deepspeed']],
  ['{"shardlens.formats.enabled": ["evil"]}', 'formats.enabled', undefined],
  [`{"shardlens.model": "${'x'.repeat(5000)}"}`, 'model', undefined],
  ['// comment\n{"shardlens.worldSize": 16,}', 'worldSize', 16],
  ['{"shardlens.__proto__.distDir": "/tmp/x"}', 'distDir', undefined],
  ['{"shardlens.constructor.prototype.python": "/tmp/x"}', 'constructor', undefined],
];

const at = (o: unknown, path: string) => path.split('.').reduce<unknown>((x, k) => (x && typeof x === 'object' && Object.hasOwn(x, k) ? (x as Record<string, unknown>)[k] : undefined), o);

describe('parseSettingsText', () => {
  for (const [text, path, want] of CASES) {
    test(`${text.slice(0, 70)} → ${path} = ${JSON.stringify(want)?.slice(0, 30)}`, () => {
      const { raw, ignored } = parseSettingsText(text);
      assert.deepEqual(at(raw, path), want);
      if (want === undefined) assert.ok(ignored.length > 0, 'a value not taken is reported');
      assert.equal(Object.getPrototypeOf(raw), null);
    });
  }

  test('calibration entries are copied without prototype keys', () => {
    const { raw } = parseSettingsText('{"shardlens.calibration": {"__proto__": {"overheadBytes": 1, "efficiency": 1}, "h100": {"overheadBytes": 1024, "efficiency": 0.9, "constructor": "x"}}}');
    const cal = raw.calibration as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(cal), ['h100']);
    assert.equal(Object.getPrototypeOf(cal.h100), null);
    assert.equal(Object.hasOwn(cal.h100, 'constructor'), false);
    assert.equal(normalizeSettings(raw).calibration.h100?.overheadBytes, 1024);
  });

  test('nothing reaches Object.prototype, whatever the keys', () => {
    parseSettingsText('{"shardlens.__proto__.polluted": "yes", "__proto__": {"polluted": "yes"}, "shardlens.calibration": {"__proto__": {"polluted": "yes"}}}');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});
