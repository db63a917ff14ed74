/**
 * The CLI's plain-text output as a shell user meets it: tables whose columns line up whatever the catalog names, and
 * a quiet end when the reader closes the pipe early (`shardlens gpus | head`), as `ls` or `grep` behave.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cliArgv, runCli, ROOT } from './helpers';

describe('CLI text output', () => {
  test('shardlens gpus: every row starts its memory column where the header does', () => {
    const r = runCli(['gpus'], { cwd: ROOT });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.split('\n').filter((l) => /GiB/.test(l));
    const header = r.stdout.split('\n')[0];
    // The header's "memory" is right-aligned over "NN GiB": the unit ends where the header word ends.
    const end = header.indexOf('memory') + 'memory'.length;
    assert.ok(lines.length >= 10, 'the catalog lists at least ten GPUs');
    for (const l of lines) assert.equal(l.indexOf('GiB') + 3, end, `aligned: ${l}`);
  });

  test('a reader that closes the pipe early ends the CLI quietly (no stack trace, exit 0)', async () => {
    const child = spawn(process.execPath, cliArgv(['gpus']), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    // Read the first chunk, then close our end as `head -1` does.
    await new Promise<void>((done) => child.stdout.once('data', () => { child.stdout.destroy(); done(); }));
    const code = await new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    assert.doesNotMatch(stderr, /EPIPE|internal error|at \w+ \(/, stderr);
    assert.equal(code, 0);
  });
});
