/**
 * Neovim (Debian's 0.7.2) as an independent LSP client of the bundled server over stdio: diagnostics, hover, inlay
 * hints and code lenses for a DeepSpeed config, and a module of torchtitan configuration functions whose "Analyse this
 * one" lens Neovim runs through the server (workspace/executeCommand). Needs `npm run build` (`node scripts/test.mjs
 * nvim` builds first).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SERVER = resolve('dist/server.js');
const LUA = resolve('test/nvim/lsp_check.lua');
const hasNvim = spawnSync('nvim', ['--version'], { encoding: 'utf8' }).status === 0;

// ZeRO-1 with micro batch 4: the values are arbitrary; the test checks that each feature answers at the right key.
const DS = `{
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": 8,
  "bf16": { "enabled": true },
  "zero_optimization": {
    "stage": 1
  }
}
`;

interface Lens { range: { start: { line: number } }; command?: { title: string; command: string; arguments?: unknown[] } }
interface Result {
  started: boolean;
  got_diagnostics: boolean;
  diagnostics: { lnum: number; col: number; message: string }[];
  hover: { contents: { value: string } } | null;
  hints: { label: string; position: { line: number } }[] | null;
  lenses: Lens[] | null;
  executed?: { command: string; arguments: unknown[] };
  selected?: boolean;
  lenses_after?: Lens[] | null;
}

const skip = !hasNvim && process.env.CI !== 'true' ? 'nvim is not installed' : false;

/** Opens `file` of the folder `ws` in headless Neovim with lsp_check.lua and returns what it wrote. */
function runNvim(ws: string, file: string, env: Record<string, string>): Result {
  const out = join(ws, 'out.json');
  const r = spawnSync('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', file, '-c', `luafile ${LUA}`], {
    cwd: ws, encoding: 'utf8', timeout: 60_000, env: { ...process.env, SHARDLENS_SERVER: SERVER, SHARDLENS_OUT: out, ...env },
  });
  assert.ok(existsSync(out), `nvim wrote no result: ${r.stderr || r.stdout}`);
  return JSON.parse(readFileSync(out, 'utf8')) as Result;
}

test('neovim drives the server over stdio', { skip }, () => {
  assert.ok(hasNvim, 'nvim is required in CI (apt-get install neovim)');
  assert.ok(existsSync(SERVER), 'dist/server.js is missing: run npm run build');
  const ws = mkdtempSync(join(tmpdir(), 'shardlens-nvim-'));
  try {
    writeFileSync(join(ws, 'ds_config.json'), DS);
    const hoverLine = DS.split('\n').findIndex((l) => l.includes('"stage"'));
    const res = runNvim(ws, 'ds_config.json', { SHARDLENS_HOVER_LINE: String(hoverLine), SHARDLENS_HOVER_COL: '6' });
    assert.equal(res.started, true);
    assert.equal(res.got_diagnostics, true, 'no diagnostics arrived');
    assert.match(res.hover?.contents.value ?? '', /zero_optimization\.stage/);
    assert.ok(Array.isArray(res.hints) && res.hints.length > 0, 'no inlay hints');
    assert.ok(res.hints.some((h) => h.position.line === hoverLine && /^states ≈/.test(h.label)), 'no model-state hint at the stage key');
    assert.ok(res.lenses?.some((l) => l.command?.command === 'shardlens.simulateStep'), 'no Simulate Step lens');
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});

test('neovim runs a configuration function\'s "Analyse this one" lens of a torchtitan Python module through the server', { skip }, () => {
  assert.ok(hasNvim, 'nvim is required in CI (apt-get install neovim)');
  const ws = mkdtempSync(join(tmpdir(), 'shardlens-nvim-py-'));
  try {
    // examples/torchtitan/torchtitan_recipes/llama3.py: llama3_8b_fsdp, llama3_8b_tp2_32k and llama3_70b_fsdp.
    const text = readFileSync(resolve('examples/torchtitan/torchtitan_recipes/llama3.py'), 'utf8');
    writeFileSync(join(ws, 'llama3.py'), text);
    const lines = text.split('\n');
    const defLine = (name: string) => lines.findIndex((l) => l.startsWith(`def ${name}(`));
    const second = defLine('llama3_8b_tp2_32k');
    assert.ok(second > 0 && defLine('llama3_8b_fsdp') >= 0);
    const keyLine = lines.findIndex((l) => l.includes('max_context_length='));
    assert.ok(keyLine > 0);
    const res = runNvim(ws, 'llama3.py', {
      SHARDLENS_HOVER_LINE: String(keyLine), SHARDLENS_HOVER_COL: String(lines[keyLine].indexOf('max_context_length') + 2),
      SHARDLENS_SELECT: 'llama3_8b_tp2_32k', SHARDLENS_SELECT_LINE: String(second),
    });
    assert.equal(res.started, true);
    // The first function is analysed: its row has the Dashboard lens; the second has "Analyse this one".
    assert.ok(res.lenses?.some((l) => l.command?.title === 'Dashboard' && l.range.start.line === defLine('llama3_8b_fsdp')), JSON.stringify(res.lenses));
    // llama3_70b_fsdp does not fit on 8 H100s (≈ 131 GiB of fp32 weights, gradients and Adam states before activations).
    assert.ok(res.diagnostics.some((d) => d.lnum === defLine('llama3_70b_fsdp') && /^llama3_70b_fsdp: /.test(d.message)), JSON.stringify(res.diagnostics));
    assert.match(res.hover?.contents.value ?? '', /max_context_length|seq_len/);
    assert.deepEqual(res.executed, { title: 'Analyse this one', command: 'shardlens.selectConfiguration', arguments: [res.executed?.arguments[0], 'llama3_8b_tp2_32k'] });
    assert.equal(res.selected, true, `the chosen function was not analysed: ${JSON.stringify(res.lenses_after)}`);
    assert.ok(res.lenses_after?.some((l) => l.command?.title === 'Analyse this one' && l.range.start.line === defLine('llama3_8b_fsdp')), 'the first function is no longer the analysed one');
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
