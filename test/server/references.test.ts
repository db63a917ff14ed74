/**
 * A change in a referenced file updates the files that reference it: the Axolotl YAML names a DeepSpeed JSON; editing
 * that JSON in the editor (unsaved) re-analyses the YAML and asks the client to refresh hints and lenses. Run on the
 * server's main thread and with an analysis worker (as the server process runs), whose reads and dependencies must be
 * the same.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { InlayHint } from 'vscode-languageserver';
import { startClient, type Client } from './harness';

const DIR = resolve('test/server/fixtures');
const label = (h: InlayHint) => (typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join(''));

for (const workers of [0, 1]) describe(workers ? 'with an analysis worker' : 'on the main thread', () => {
  let c: Client;
  before(async () => {
    c = await startClient({}, { workers });
  });
  after(() => c.dispose());

  test('editing the referenced DeepSpeed JSON re-analyses the YAML that names it', async () => {
    const yamlUri = pathToFileURL(`${DIR}/axolotl.yaml`).toString();
    const dsUri = pathToFileURL(`${DIR}/ds_zero3_auto.json`).toString();
    const yaml = readFileSync(`${DIR}/axolotl.yaml`, 'utf8');
    const ds = readFileSync(`${DIR}/ds_zero3_auto.json`, 'utf8');
    let d = c.diagnostics(yamlUri);
    await c.open(yamlUri, yaml);
    await d;
    const before = (await c.hints(yamlUri)).map(label).find((l) => l.startsWith('states ≈'));
    // ZeRO-3 with both offloads keeps almost no model state on the GPU; ZeRO-0 keeps all 16Ψ (ZeRO paper §3).
    await c.open(dsUri, ds);
    const refreshesBefore = c.refreshes;
    d = c.diagnostics(yamlUri);
    await c.change(dsUri, ds.replace('"stage": 3', '"stage": 0').replace(/"offload_(optimizer|param)": \{[^}]*\},/g, ''));
    await d;
    const afterHints = (await c.hints(yamlUri)).map(label).find((l) => l.startsWith('states ≈'));
    assert.ok(before && afterHints, 'no model-state hint at the deepspeed key');
    assert.notEqual(afterHints, before);
    const parse = (s: string) => {
      const m = /states ≈([\d.]+) (GiB|MiB)/.exec(s);
      return Number(m?.[1]) / (m?.[2] === 'MiB' ? 1024 : 1);
    };
    assert.ok(parse(afterHints) > 10 * parse(before), `${before} → ${afterHints}`);
    const t0 = Date.now();
    while (c.refreshes === refreshesBefore && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 5));
    assert.ok(c.refreshes > refreshesBefore, 'no workspace/inlayHint/refresh');
  });
});
