/**
 * A QLoRA config's bitsandbytes release from its workspace (server/formats/workspacePins.ts): bitsandbytes' 4-bit
 * linear kept its input for the backward up to 0.43.1 and keeps only its packed weight from 0.43.2 on
 * (bitsandbytes/autograd/_functions.py MatMul4Bit: `ctx.tensors = (A, B)` in 0.42.0–0.43.1, `(None, B)` from 0.43.2),
 * and LitGPT pinned `bitsandbytes==0.42.0` in its pyproject.toml at 00af8b0d (the config hub's measured commit). The
 * config is LitGPT's config_hub/finetune/llama-2-7b/qlora.yaml of that commit.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDiskHost } from '../../../server/io/diskHost';
import { initFormats } from '../../../formats/index';
import { loadConfigGraph } from '../../../server/formats/workspace';
import { resolvePlan } from '../../../shared/plan/resolve';
import { estimateMemory } from '../../../shared/memory/estimate';
import { readInputs } from '../../../shared/plan/inputs';
import { memoryHost } from './helpers';

const QLORA = readFileSync('data/calibration/checks/litgpt2409/llama-2-7b_qlora.yaml', 'utf8');
const LORA = readFileSync('data/calibration/checks/litgpt2409/llama-2-7b_lora.yaml', 'utf8');
const CONFIG = '/ws/config_hub/finetune/llama-2-7b/qlora.yaml';
const PYPROJECT_0_42 = '[project]\nname = "litgpt"\n[project.optional-dependencies]\nall = [\n    "bitsandbytes==0.42.0",      # quantization\n]\n';

function load(files: Record<string, string>, path = CONFIG, root = '/ws') {
  const g = loadConfigGraph(path, memoryHost({ [path]: QLORA, ...files }, root));
  const plan = g.resolved.plan;
  assert.ok(plan?.lora, 'the QLoRA config resolves with LoRA');
  const fact = g.resolved.factsUsed['lora.baseSavesInputs'];
  return { g, plan, fact };
}

describe("a QLoRA config reads the workspace's bitsandbytes pin", () => {
  before(async () => { await initFormats(); });

  test("LitGPT's pyproject.toml at 00af8b0d (==0.42.0): the 4-bit linears keep their inputs, and the pin is the source", () => {
    const { g, plan, fact } = load({ '/ws/pyproject.toml': PYPROJECT_0_42 });
    assert.equal(plan.lora?.baseSavesInputs, true);
    assert.equal(fact?.source.uri, '/ws/pyproject.toml');
    assert.equal(fact?.source.range?.start.line, 4);
    assert.match(fact?.source.detail ?? '', /pyproject\.toml:5 pins bitsandbytes==0\.42\.0/);
    assert.ok(g.dependencies.includes('/ws/pyproject.toml'), 'an edit of the pin re-analyses the config');
    // The CLI's and the analysis result's "Read" block says it.
    assert.equal(readInputs(plan, g.resolved.factsUsed).lora?.keepsInputs?.value, true);
    assert.match(readInputs(plan, g.resolved.factsUsed).lora?.keepsInputs?.source.detail ?? '', /pins bitsandbytes==0\.42\.0/);
  });

  test('the pinned release costs activation memory: the same config without a pin peaks lower', () => {
    const peak = (m: ReturnType<typeof estimateMemory>) => m.stages[m.peakStage].peakAllocatedBytes;
    const pinned = peak(estimateMemory(load({ '/ws/pyproject.toml': PYPROJECT_0_42 }).plan));
    const current = peak(estimateMemory(load({}).plan));
    assert.ok(pinned > current, `${pinned} > ${current}`);
  });

  test('a what-if starts from the pinned facts (the same plan as the analysis)', () => {
    const { g } = load({ '/ws/pyproject.toml': PYPROJECT_0_42 });
    assert.equal(resolvePlan(g.primary, g.related, {}, {}).plan?.lora?.baseSavesInputs, true);
  });

  test("LitGPT 0.5.13's ranges: the Linux one (>=0.45.2,<0.50) says the current behaviour, with the pin as its source", () => {
    const py = 'extra = [\n  "bitsandbytes>=0.42,<0.43; sys_platform==\'darwin\'",\n  "bitsandbytes>=0.45.2,<0.50; sys_platform==\'linux\' or sys_platform==\'win32\'",\n]\n';
    const { plan, fact } = load({ '/ws/pyproject.toml': py });
    assert.equal(plan.lora?.baseSavesInputs, false);
    assert.equal(fact?.source.range?.start.line, 2);
  });

  test('no pin: the reader\'s current-release reading stands', () => {
    const { plan, fact } = load({});
    assert.equal(plan.lora?.baseSavesInputs, false);
    // The reader's fact, at the config's quantize key.
    assert.equal(fact?.source.uri, CONFIG);
    assert.match(fact?.source.detail ?? '', /from bitsandbytes 0\.43\.2 on/);
  });

  test('a file above the workspace folder is never read', () => {
    const files = { '/pyproject.toml': PYPROJECT_0_42 };
    const { g, plan } = load(files);
    assert.equal(plan.lora?.baseSavesInputs, false);
    assert.ok(!g.dependencies.includes('/pyproject.toml'));
  });

  test('the nearest folder that decides wins; an undecided requirement lets a farther lock file decide', () => {
    const near = load({ '/ws/config_hub/requirements.txt': 'bitsandbytes==0.45.5\n', '/ws/uv.lock': '[[package]]\nname = "bitsandbytes"\nversion = "0.42.0"\n' });
    assert.equal(near.plan.lora?.baseSavesInputs, false);
    assert.equal(near.fact?.source.uri, '/ws/config_hub/requirements.txt');
    const far = load({ '/ws/config_hub/requirements.txt': 'bitsandbytes>=0.41\n', '/ws/uv.lock': '[[package]]\nname = "bitsandbytes"\nversion = "0.43.1"\n' });
    assert.equal(far.plan.lora?.baseSavesInputs, true);
    assert.match(far.fact?.source.detail ?? '', /locks bitsandbytes at 0\.43\.1/);
  });

  test('a LoRA config without a quantized base reads no pin', () => {
    const path = '/ws/config_hub/finetune/llama-2-7b/lora.yaml';
    const g = loadConfigGraph(path, memoryHost({ [path]: LORA, '/ws/pyproject.toml': PYPROJECT_0_42 }));
    assert.equal(g.resolved.plan?.lora?.baseSavesInputs, undefined);
    assert.ok(!g.dependencies.includes('/ws/pyproject.toml'));
    assert.equal(readInputs(g.resolved.plan!, g.resolved.factsUsed).lora?.keepsInputs, undefined);
  });

  test('on disk: a FIFO, a folder named like a lock file and a link out of the workspace are not read, and nothing hangs', () => {
    const outside = mkdtempSync(join(tmpdir(), 'pins-out-'));
    const root = mkdtempSync(join(tmpdir(), 'pins-ws-'));
    try {
      const dir = join(root, 'config_hub', 'finetune', 'llama-2-7b');
      mkdirSync(dir, { recursive: true });
      const config = join(dir, 'qlora.yaml');
      writeFileSync(config, QLORA);
      execFileSync('mkfifo', [join(dir, 'requirements.txt')]);
      mkdirSync(join(dir, 'uv.lock'));
      writeFileSync(join(outside, 'pyproject.toml'), PYPROJECT_0_42);
      symlinkSync(join(outside, 'pyproject.toml'), join(root, 'pyproject.toml'));
      const host = createDiskHost({ root, roots: [root] });
      const g = loadConfigGraph(config, host);
      assert.equal(g.resolved.plan?.lora?.baseSavesInputs, false);
      assert.ok(!g.dependencies.some((d) => d.endsWith('pyproject.toml') || d.endsWith('requirements.txt')));
      // The same pin as a regular file inside the workspace is read.
      rmSync(join(root, 'pyproject.toml'));
      writeFileSync(join(root, 'pyproject.toml'), PYPROJECT_0_42);
      assert.equal(loadConfigGraph(config, createDiskHost({ root, roots: [root] })).resolved.plan?.lora?.baseSavesInputs, true);
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test('an unreadable or hostile pin file is skipped, never an exception', () => {
    const host = memoryHost({ [CONFIG]: QLORA });
    const hostile = { ...host, exists: () => true, readFile: (p: string) => { if (p.endsWith('.lock') || p.endsWith('.toml')) throw new Error('EACCES'); return p === CONFIG ? QLORA : undefined; } };
    const g = loadConfigGraph(CONFIG, hostile);
    assert.equal(g.resolved.plan?.lora?.baseSavesInputs, false);
  });
});
