/**
 * Cancel and failure paths: aborting ends the runner and every rank (threads of the runner) within 2 s and leaves no
 * process behind; a runner that exits, runs out of memory or loses a rank yields an error report, never a rejection.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { runValidation } from '../../validation/index';
import { LLAMA3_8B, planOf } from './models';

/**
 * Live process ids in process group `pgid` (the runner leads its group; probes join it). Zombies count as gone: an
 * orphaned runner has exited once it is a zombie, whenever PID 1 gets round to reaping it.
 */
function groupMembers(pgid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,pgid=,stat='], { encoding: 'utf8' });
  return out.split('\n').map((l) => l.trim().split(/\s+/)).filter(([, g, st]) => Number(g) === pgid && !st?.startsWith('Z')).map(([p]) => Number(p));
}

async function waitGone(pgid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (groupMembers(pgid).length === 0) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const small = { hiddenSize: 32, vocabSize: 64, seqLen: 16 };

describe('cancel', () => {
  test('abort during training ends the runner and its ranks within 2 s, with a cancelled report', async () => {
    const ac = new AbortController();
    let pid = 0;
    const report = runValidation({
      plan: planOf(LLAMA3_8B), ranks: 4, steps: 1000, signal: ac.signal, scale: small,
      onSpawn: (p) => { pid = p; },
      onProgress: (p) => { if (p.fraction > 0 && !ac.signal.aborted) ac.abort(); },
    });
    const r = await report;
    const abortedAt = Date.now();
    assert.equal(r.status, 'cancelled');
    assert.ok(pid > 0);
    assert.ok(await waitGone(pid, 2000 - (Date.now() - abortedAt)), `runner group ${pid} still has ${groupMembers(pid).join(',')}`);
  });

  test('abort while the backends are being probed also ends everything within 2 s', async () => {
    const ac = new AbortController();
    let pid = 0;
    const r = await runValidation({ plan: planOf(LLAMA3_8B), ranks: 2, scale: small, signal: ac.signal, onSpawn: (p) => { pid = p; ac.abort(); } });
    assert.equal(r.status, 'cancelled');
    assert.ok(await waitGone(pid, 2000), `runner group ${pid} still has ${groupMembers(pid).join(',')}`);
  });

  test('when the launching process is killed (the extension cancelling the CLI), the runner exits within 2 s', async () => {
    const parent = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'fixtures', 'launch-parent.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const pid = await new Promise<number>((resolve, reject) => {
      parent.on('exit', (code) => reject(new Error(`the launching process exited early (${code})`)));
      parent.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /runner (\d+)/.exec(out);
        if (m && out.includes('training')) resolve(Number(m[1]));
      });
    });
    parent.kill('SIGKILL');
    assert.ok(await waitGone(pid, 2000), `runner group ${pid} still has ${groupMembers(pid).join(',')}`);
  });

  test('abort before the start does not launch anything', async () => {
    const ac = new AbortController();
    ac.abort();
    let spawned = false;
    const r = await runValidation({ plan: planOf(LLAMA3_8B), signal: ac.signal, onSpawn: () => { spawned = true; } });
    assert.equal(r.status, 'cancelled');
    assert.equal(spawned, false);
  });
});

describe('failures become error reports', () => {
  const withFault = async (fault: string, steps = 2, readyTimeoutMs?: number) => {
    process.env.SHARDLENS_VALIDATION_FAULT = fault;
    try {
      let pid = 0;
      const r = await runValidation({ plan: planOf(LLAMA3_8B), ranks: 2, steps, modes: ['ddp'], scale: small, readyTimeoutMs, onSpawn: (p) => { pid = p; } });
      assert.ok(await waitGone(pid, 2000));
      return r;
    } finally {
      delete process.env.SHARDLENS_VALIDATION_FAULT;
    }
  };

  test('the runner exits without a report', async () => {
    const r = await withFault('exit');
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /exited \(code 3\)/);
  });

  test('the runner runs out of memory', async () => {
    const r = await withFault('oom');
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /out of memory/);
  });

  test('a rank fails; the others, blocked in the ring, are ended with the runner', async () => {
    const r = await withFault('worker');
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /rank 0: injected fault/);
  });

  test('a rank that never starts its backend ends the run at the start deadline, naming the rank', async () => {
    const t0 = Date.now();
    const r = await withFault('stall', 2, 3_000);
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /rank 0 did not start the \w+ backend within 3 s/);
    // The deadline, not the 120 s default or a wait without end (probes and rank 1's start come before it).
    assert.ok(Date.now() - t0 < 60_000, `${Date.now() - t0} ms`);
  });

  test('a plan without a model is reported, not thrown', async () => {
    const r = await runValidation({ plan: {} as Parameters<typeof runValidation>[0]['plan'] });
    assert.equal(r.status, 'error');
    assert.match(r.error ?? '', /no model/);
  });

  test('a missing runner bundle is reported, not thrown', async () => {
    const r = await runValidation({ plan: planOf(LLAMA3_8B), distDir: '/nonexistent' });
    assert.equal(r.status, 'error');
  });
});
