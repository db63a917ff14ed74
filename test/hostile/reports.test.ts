/**
 * Issue 16, medium: validation reports are written atomically, only into real folders below the config (a
 * repository's `.shardlens` symlink cannot send them elsewhere), saved reports are never read through such a link,
 * and a read-only folder is reported as such.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listReports, saveReport } from '../../extension/validation/store';
import { errorReport } from '../../validation/report/assemble';
import type { ValidationReport } from '../../validation/types';
import { workspace } from './workspace';

/** A report with one (empty) run, as saveReport stores them. */
const report = (startedAt: string): ValidationReport => ({ ...errorReport({ ranks: 2, steps: 1, modes: ['ddp'] }, Date.parse(startedAt), [], 'x'), status: 'ok', startedAt });

describe('saved validation reports', () => {
  test('a symlinked .shardlens pointing out of the workspace is refused and nothing is written there', async () => {
    const ws = workspace();
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'shardlens-outside-')));
    try {
      const configPath = ws.file('ds_config.json', '{}');
      ws.link('.shardlens', outside);
      await assert.rejects(saveReport(report('2025-01-01T00:00:00.000Z'), { configPath }), /symbolic link/);
      assert.deepEqual(readdirSync(outside), []);
    } finally {
      ws.cleanup();
      rmSync(outside, { recursive: true, force: true });
    }
  });

  test('reports behind a symlinked .shardlens are not listed', async () => {
    const ws = workspace();
    const outside = workspace('shardlens-outside-');
    try {
      const configPath = ws.file('ds_config.json', '{}');
      await saveReport(report('2025-01-01T00:00:00.000Z'), { configPath: join(outside.dir, 'ds_config.json') });
      ws.link('.shardlens', join(outside.dir, '.shardlens'));
      assert.deepEqual(await listReports({ configPath }), []);
    } finally {
      ws.cleanup();
      outside.cleanup();
    }
  });

  test('a report is written whole (temporary file renamed into place) and no temporary file remains', async () => {
    const ws = workspace();
    try {
      const configPath = ws.file('ds_config.json', '{}');
      const path = await saveReport(report('2025-01-01T00:00:00.000Z'), { configPath });
      assert.equal(path, join(ws.dir, '.shardlens/validation/ds_config.json.2025-01-01T00-00-00-000Z.json'));
      assert.equal((JSON.parse(readFileSync(path, 'utf8')) as ValidationReport).startedAt, '2025-01-01T00:00:00.000Z');
      assert.deepEqual(readdirSync(join(ws.dir, '.shardlens/validation')).filter((n) => n.endsWith('.tmp')), []);
      assert.equal((await listReports({ configPath })).length, 1);
    } finally {
      ws.cleanup();
    }
  });

  test('a folder that cannot be written is reported as read-only', async () => {
    // As root, permission bits do not stop writes: /sys refuses creating folders (EPERM) on Linux instead.
    const root = process.getuid?.() === 0;
    const ws = workspace();
    try {
      const configPath = root ? '/sys/ds_config.json' : ws.file('ro/ds_config.json', '{}');
      if (!root) chmodSync(join(ws.dir, 'ro'), 0o555);
      await assert.rejects(saveReport(report('2025-01-01T00:00:00.000Z'), { configPath }), /read-only/);
    } finally {
      if (!root) chmodSync(join(ws.dir, 'ro'), 0o755);
      ws.cleanup();
    }
  });
});
