/**
 * Issue 16, high: `shardlens probe` leaves nothing running, however it ends. The CLI runs a real probe (torch 2.x of
 * .venv on CPU, two gloo ranks) in a temporary workspace; once the ranks run, the CLI gets SIGTERM, SIGHUP, SIGINT or
 * SIGKILL, and every process it started must be gone within a few seconds (before the fix, torchrun and the ranks ran
 * on at full CPU until a 595 s watchdog). While the ranks run, every listening socket of the run is on 127.0.0.1.
 * Its temporary folder is removed when the CLI can still act (not after SIGKILL).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { descendants } from '../../validation/processGroups';
import { cliArgv, DS_CONFIG, tempTree } from '../cli/helpers';

const ci = process.env.CI === 'true';
const VENV = resolve('.venv/bin/python');
const hasTorch2 = existsSync(VENV) && spawnSync(VENV, ['-c', 'import torch, sys; sys.exit(0 if int(torch.__version__.split(".")[0]) >= 2 else 1)'], { stdio: 'ignore', timeout: 120_000 }).status === 0;
const skip = hasTorch2 ? false : `no torch >= 2 in ${VENV} (bash scripts/setup-python.sh)`;

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Command line of a process, or '' when it is gone. */
function cmdline(pid: number): string {
  try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '); } catch { return ''; }
}

/** Local addresses (hex, as /proc/net/tcp writes them) of the sockets the processes listen on. */
function listeningAddresses(pids: readonly number[]): string[] {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[] = [];
    try { fds = readdirSync(`/proc/${pid}/fd`); } catch { continue; }
    for (const fd of fds) {
      try { const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`)); if (m) inodes.add(m[1]); } catch { /* Closed meanwhile. */ }
    }
  }
  const out: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A' && inodes.has(f[9])) out.push(f[1].split(':')[0]);
    }
  }
  return out;
}

/** 127.0.0.1 in /proc/net/tcp, and ::1 or ::ffff:127.0.0.1 in /proc/net/tcp6. */
const LOOPBACK = new Set(['0100007F', '00000000000000000000000001000000', '0000000000000000FFFF00000100007F']);

describe('signals to `shardlens probe` (torch 2.x, CPU ranks)', { skip: ci ? false : skip }, () => {
  for (const sig of (process.env.SIGS?.split(',') ?? ['SIGTERM', 'SIGHUP', 'SIGINT', 'SIGKILL']) as NodeJS.Signals[]) {
    test(`${sig} to the CLI: torchrun and every rank are gone within 10 s`, { timeout: 240_000 }, async () => {
      assert.ok(hasTorch2, `CI=true but ${skip}`);
      const ws = tempTree({ 'ds_config.json': DS_CONFIG });
      const tmp = mkdtempSync(join(tmpdir(), 'shardlens-signals-'));
      const cli = spawn(process.execPath, cliArgv(['probe', 'ds_config.json', '--trust', '--ranks', '2', '--mode', 'ddp', '--steps', '1000']), {
        cwd: ws.dir, stdio: 'ignore', env: { ...process.env, SHARDLENS_PYTHON: VENV, TMPDIR: tmp },
      });
      try {
        let tree: number[] = [];
        for (let t = 0; t < 180 && tree.filter((p) => cmdline(p).includes('shardlens_probe.py')).length < 3; t++) {
          await sleep(500);
          tree = descendants(cli.pid ?? 0);
        }
        const ranks = tree.filter((p) => cmdline(p).includes('shardlens_probe.py') && !cmdline(p).includes('torchrun_compat'));
        assert.equal(ranks.length, 2, `two ranks running under the CLI: ${tree.map(cmdline).join(' | ')}`);
        await sleep(3000);
        const addresses = listeningAddresses(descendants(cli.pid ?? 0));
        assert.ok(addresses.length > 0, 'the run listens (rendezvous store, gloo pairs)');
        assert.deepEqual(addresses.filter((a) => !LOOPBACK.has(a)), [], 'nothing listens beyond the loopback interface');
        const all = descendants(cli.pid ?? 0);
        cli.kill(sig);
        let left = all;
        for (let t = 0; t < 40 && left.length; t++) {
          await sleep(250);
          left = all.filter(alive);
        }
        assert.deepEqual(left.map(cmdline), [], `processes left after ${sig}`);
        if (sig !== 'SIGKILL') assert.deepEqual(readdirSync(tmp).filter((n) => n.startsWith('shardlens-probe-')), [], 'the temporary folder is removed');
      } finally {
        cli.kill('SIGKILL');
        ws.cleanup();
        rmSync(tmp, { recursive: true, force: true });
      }
    });
  }
});
