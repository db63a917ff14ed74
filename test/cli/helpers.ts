/** Runs the `shardlens` CLI from source in a child process, in a temporary workspace built by the test. */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const ROOT = resolve(__dirname, '../..');
// SHARDLENS_TEST_CLI runs the suite against another checkout's CLI (to show that a test fails without its fix).
const CLI = process.env.SHARDLENS_TEST_CLI ?? join(ROOT, 'cli/main.ts');
const TSX = pathToFileURL(join(ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const SEAL = pathToFileURL(join(ROOT, 'test/setup/seal-prototypes.mjs')).href;

export interface CliResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd: string;
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Seal the built-in prototypes in the CLI process too (default true). Attack reproductions turn it off: with sealed
   * prototypes a polluting write fails on its own, which would hide whether the CLI itself is safe.
   */
  readonly sealed?: boolean;
  readonly timeoutMs?: number;
}

/** The node arguments that run `shardlens <args>` from source (for spawning it asynchronously). */
export function cliArgv(args: readonly string[], sealed = true): string[] {
  return ['--import', TSX, ...(sealed ? ['--import', SEAL] : []), CLI, ...args];
}

/** Runs `shardlens <args>` from `cwd`; never throws. */
export function runCli(args: readonly string[], o: RunOptions): CliResult {
  const r: SpawnSyncReturns<string> = spawnSync(process.execPath, cliArgv(args, o.sealed !== false), {
    cwd: o.cwd, encoding: 'utf8', timeout: o.timeoutMs ?? 120_000,
    env: { ...process.env, NO_COLOR: '1', ...o.env },
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** A temporary folder with the given files (path → text; executable when the path ends in .sh or is under bin/). */
export function tempTree(files: Readonly<Record<string, string>>, prefix = 'shardlens-cli-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [rel, text] of Object.entries(files)) {
    const p = join(dir, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
    if (rel.endsWith('.sh') || rel.startsWith('bin/')) chmodSync(p, 0o755);
  }
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A small DeepSpeed config every command can resolve (model and cluster assumed). */
export const DS_CONFIG = JSON.stringify({
  train_micro_batch_size_per_gpu: 1, gradient_accumulation_steps: 1, zero_optimization: { stage: 2 }, bf16: { enabled: true },
});

/**
 * A stand-in Python for `shardlens probe`: it answers the interpreter check as a Python with torch 2.13 on CPU, and
 * when launched as torchrun it logs its arguments to launched.log beside it and writes a stub report to `--out`,
 * so tests see exactly what would be run and where the report would go, without torch.
 */
export const FAKE_PYTHON = `#!/bin/sh
for a in "$@"; do if [ "$a" = "-c" ]; then echo 'SHARDLENS_PY {"executable":"fake-python","pythonVersion":"3.11.0","torch":"2.13.0","cuda":false,"gpus":0,"distributed":true,"deepspeed":null}'; exit 0; fi; done
out=""; prev=""
for a in "$@"; do if [ "$prev" = "--out" ]; then out="$a"; fi; prev="$a"; done
echo "$@" >> "$(dirname "$0")/launched.log"
if [ -n "$out" ]; then echo '{"fake": true}' > "$out"; fi
exit 1
`;
