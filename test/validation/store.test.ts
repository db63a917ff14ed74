/**
 * Launching from the extension side: untrusted workspaces are refused without a process; reports are saved next to
 * the config, reload equal, list newest first, and the next run's view carries the previous one for comparison.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchValidation } from '../../extension/validation/launch';
import { listReports, loadReport, reportDir } from '../../extension/validation/store';
import { fromRunnerReport } from '../../extension/validation/results';
import { LLAMA3_8B, planOf } from './models';

const small = { hiddenSize: 32, vocabSize: 64, seqLen: 16, microBatch: 1 };

describe('launch, save and reload', () => {
  test('an untrusted workspace is refused and nothing is started', async () => {
    let spawned = false;
    const r = await launchValidation({ trusted: false, plan: planOf(LLAMA3_8B), onSpawn: () => { spawned = true; } });
    assert.equal(r.report.status, 'refused');
    assert.match(r.report.error ?? '', /untrusted/);
    assert.equal(spawned, false);
    assert.equal(r.reportPath, undefined);
  });

  test('two runs are saved next to the config, reload equal, and the second shows the first for comparison', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shardlens-val-'));
    const configPath = join(dir, 'ds_config.json');
    writeFileSync(configPath, '{}');
    const opts = { trusted: true, plan: planOf(LLAMA3_8B), ranks: 2, steps: 1, modes: ['ddp', 'zero1'] as const, scale: small, configPath };
    const first = await launchValidation({ ...opts, modes: [...opts.modes] });
    assert.equal(first.report.status, 'ok', first.report.error);
    assert.ok(first.reportPath?.startsWith(join(dir, '.shardlens', 'validation')));
    assert.equal(reportDir({ configPath }), join(dir, '.shardlens', 'validation'));
    const reloaded = await loadReport(first.reportPath ?? '');
    assert.deepEqual(reloaded, { ...first.report, configPath });
    assert.equal(first.view?.previous, undefined);
    await new Promise((r) => setTimeout(r, 10));
    const second = await launchValidation({ ...opts, modes: [...opts.modes] });
    const saved = await listReports({ configPath });
    assert.equal(saved.length, 2);
    assert.equal(saved[0].path, second.reportPath);
    assert.equal(second.view?.previous?.reportPath, first.reportPath);
  });

  test('the dashboard view pairs measured and formula traffic per collective kind', async () => {
    const r = await launchValidation({ trusted: true, plan: planOf(LLAMA3_8B), ranks: 2, steps: 1, modes: ['zero3'], scale: small, save: false });
    const view = fromRunnerReport(r.report);
    const rows = view?.runs[0].collectives ?? [];
    // ZeRO-3 on 2 ranks: all-gather forward + backward = 2·(N−1)/N·Ψ·4 = 4Ψ, reduce-scatter (N−1)/N·Ψ·4 = 2Ψ (no padding: Ψ is even).
    const psi = r.report.parameters;
    assert.equal(psi % 2, 0);
    assert.deepEqual(rows.map((x) => [x.label, x.measured, x.estimated]).sort(), [
      ['all-gather', 4 * psi, 4 * psi], ['reduce-scatter', 2 * psi, 2 * psi],
    ].sort());
    assert.ok(view?.checks?.length && view.checks.every((c) => c.passed !== false));
    assert.match(view?.scaling ?? '', /scaled to 2 layers/);
  });

  test('a file that is not a report is skipped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'shardlens-val-'));
    const f = join(dir, 'x.json');
    writeFileSync(f, '{"kind":"something else"}');
    assert.equal(await loadReport(f), undefined);
    assert.equal(await loadReport(join(dir, 'missing.json')), undefined);
  });
});
