/**
 * Neovim (Debian's 0.7.2) as an independent LSP client of the bundled server over stdio: diagnostics, hover, inlay
 * hints and code lenses for a DeepSpeed config. Needs `npm run build` (`node scripts/test.mjs nvim` builds first).
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

interface Result {
  started: boolean;
  got_diagnostics: boolean;
  diagnostics: { lnum: number; col: number; message: string }[];
  hover: { contents: { value: string } } | null;
  hints: { label: string; position: { line: number } }[] | null;
  lenses: { command?: { title: string; command: string } }[] | null;
}

test('neovim drives the server over stdio', { skip: !hasNvim && process.env.CI !== 'true' ? 'nvim is not installed' : false }, () => {
  assert.ok(hasNvim, 'nvim is required in CI (apt-get install neovim)');
  assert.ok(existsSync(SERVER), 'dist/server.js is missing: run npm run build');
  const ws = mkdtempSync(join(tmpdir(), 'shardlens-nvim-'));
  try {
    writeFileSync(join(ws, 'ds_config.json'), DS);
    const out = join(ws, 'out.json');
    const lines = DS.split('\n');
    const hoverLine = lines.findIndex((l) => l.includes('"stage"'));
    const r = spawnSync('nvim', ['--headless', '-u', 'NONE', '-i', 'NONE', 'ds_config.json', '-c', `luafile ${LUA}`], {
      cwd: ws, encoding: 'utf8', timeout: 60_000,
      env: { ...process.env, SHARDLENS_SERVER: SERVER, SHARDLENS_OUT: out, SHARDLENS_HOVER_LINE: String(hoverLine), SHARDLENS_HOVER_COL: '6' },
    });
    assert.ok(existsSync(out), `nvim wrote no result: ${r.stderr || r.stdout}`);
    const res = JSON.parse(readFileSync(out, 'utf8')) as Result;
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
