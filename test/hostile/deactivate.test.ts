/**
 * Issue 16, high: the extension's deactivate() cancels running probes. The "Run Probe Locally" command runs with a
 * stand-in Python whose launcher sleeps; cancelProbes (what deactivate awaits) must stop that process.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempTree } from '../cli/helpers';
import { tinyPlan } from '../probe/fixtures/plans';
import { installVscodeStub } from './vscodeStub';

/** Answers the interpreter check as torch 2.13 on CPU; launched, it records its pid and sleeps. */
const SLEEPY_PYTHON = `#!/bin/sh
for a in "$@"; do if [ "$a" = "-c" ]; then echo 'SHARDLENS_PY {"executable":"sleepy","pythonVersion":"3.11.0","torch":"2.13.0","cuda":false,"gpus":0,"distributed":true,"deepspeed":null}'; exit 0; fi; done
echo $$ > "$(dirname "$0")/launched.pid"
exec sleep 600
`;

const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('deactivate (cancelProbes) stops a probe the extension started', { timeout: 60_000 }, async () => {
  const t = tempTree({ 'bin/python': SLEEPY_PYTHON });
  const commands = installVscodeStub({ inputBox: '1', quickPick: 'ddp' });
  try {
    process.env.SHARDLENS_PYTHON = join(t.dir, 'bin/python');
    const { cancelProbes, PROBE_BODIES, PROBE_COMMANDS } = await import('../../extension/probe/commands');
    const log = { info() {}, warn() {}, error() {}, show() {} };
    void commands;
    const deps = { getPlan: async () => tinyPlan(1), targetUri: () => undefined, showResult() {}, log: log as never };
    const run = PROBE_BODIES[PROBE_COMMANDS.runLocal](deps, undefined);
    const pidFile = join(t.dir, 'bin/launched.pid');
    for (let i = 0; i < 200 && !existsSync(pidFile); i++) await sleep(100);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    assert.ok(alive(pid), 'the launcher runs');
    await cancelProbes();
    for (let i = 0; i < 40 && alive(pid); i++) await sleep(100);
    assert.equal(alive(pid), false, 'the launcher was stopped');
    await run;
  } finally {
    delete process.env.SHARDLENS_PYTHON;
    t.cleanup();
  }
});
