/**
 * The bundled examples/ workspace: every file is detected as the format of its folder, reads without
 * error diagnostics, and every training config resolves to a plan with no error problems.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { FormatId } from '../../../shared/plan/facts';
import { detectFormat, initFormats, parseConfig } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { configFiles } from './helpers';

const ROOT = resolve(__dirname, '../../../examples');
const FOLDER: Record<string, FormatId> = {
  deepspeed: 'deepspeed', megatron: 'megatron-script', torchtitan: 'torchtitan', accelerate: 'accelerate', axolotl: 'axolotl',
  llamafactory: 'llamafactory', nanotron: 'nanotron', torchtune: 'torchtune', litgpt: 'litgpt', hf: 'hf-config',
  lingua: 'lingua', picotron: 'picotron',
};

const host = {
  root: ROOT,
  readFile: (p: string) => { try { return readFileSync(p, 'utf8'); } catch { return undefined; } },
  exists: existsSync,
  listDir: (p: string) => { try { return statSync(p).isDirectory() ? readdirSync(p) : undefined; } catch { return undefined; } },
};

describe('examples workspace', () => {
  before(async () => { await initFormats(); });
  for (const path of configFiles(ROOT)) {
    const rel = relative(ROOT, path);
    test(rel, () => {
      const text = readFileSync(path, 'utf8');
      const top = rel.split(/[\\/]/)[0]!;
      let want: FormatId = FOLDER[top]!;
      if (top === 'megatron' && path.endsWith('.yaml')) want = 'megatron-yaml';
      if (top === 'axolotl' && path.endsWith('.json')) want = 'deepspeed';
      if (top === 'deepspeed' && path.endsWith('.sh')) want = 'megatron-script';
      assert.equal(detectFormat(path, text), want);
      const facts = parseConfig(path, text);
      assert.deepEqual(facts.diagnostics.filter((d) => d.severity !== 'info').map((d) => d.message), []);
      if (want === 'hf-config') return;
      const g = loadConfigGraph(path, host);
      assert.ok(g.resolved.plan, 'plan');
      assert.deepEqual(g.resolved.problems.filter((p) => p.severity === 'error').map((p) => p.message), []);
    });
  }
});
