/**
 * Cancel and failure paths: aborting ends the runner and every rank (threads of the runner) within 2 s and leaves no
 * process behind; a runner that exits, runs out of memory or loses a rank yields an error report, never a rejection.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { runValidation } from '../../validation/index';
import { LLAMA3_8B, planOf } from './models';

/** Process ids in process group `pgid` (the runner is its group's leader; probes join it). */
function groupMembers(pgid: number): number[] {
  const out = execFileSync('ps', ['-e', '-o', 'pid=,pgid='], { encoding: 'utf8' });
  return out.split('\n').map((l) => l.trim().split(/\s+/).map(Number)).filter(([, g]) => g === pgid).map(([p]) => p);
}

const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};

async function waitGone(pgid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pgid) && groupMembers(pgid).length === 0) return true;
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
  const withFault = async (fault: string, steps = 2) => {
    process.env.SHARDLENS_VALIDATION_FAULT = fault;
    try {
      let pid = 0;
      const r = await runValidation({ plan: planOf(LLAMA3_8B), ranks: 2, steps, modes: ['ddp'], scale: small, onSpawn: (p) => { pid = p; } });
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

  test('a missing runner bundle is reported, not thrown', async () => {
    const r = await runValidation({ plan: planOf(LLAMA3_8B), distDir: '/nonexistent' });
    assert.equal(r.status, 'error');
  });
});
