/**
 * "Calibrate from a Training Log…" in the extension (with the `vscode` stand-in): the picked log is read by its end and
 * compared with the active config's plan, and the correction is written to `shardlens.calibration` only when the user
 * saves it; a log of no known engine, a device file or a cancelled dialog write nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { tempTree } from '../cli/helpers';
import { tinyPlan } from '../probe/fixtures/plans';
import { installVscodeStub, stubRecord, type StubAnswers } from './vscodeStub';

// Megatron-LM training_log (megatron/training/training.py): "elapsed time per iteration (ms): …"; the steady steps
// take 2.0 s, so the measured step is 2.0 s whatever the tiny plan's estimate.
const megatronLine = (it: number, ms: number) => ` [2026-12-04 10:00:00] iteration ${String(it).padStart(8)}/     100 | consumed samples: ${it * 8} | `
  + `elapsed time per iteration (ms): ${ms.toFixed(1)} | learning rate: 1.000000E-04 | global batch size:     8 | lm loss: 7.000000E+00 | `
  + 'loss scale: 1.0 | grad norm: 1.000 | number of skipped iterations:   0 | number of nan iterations:   0 |';
const LOG = [megatronLine(1, 9000), ...[2, 3, 4, 5, 6, 7, 8, 9, 10].map((i) => megatronLine(i, 2000))].join('\n') + '\n';

/** One stand-in for the whole file (the extension's modules keep the `vscode` they first imported): answers change per run. */
const answers: StubAnswers = { inputBox: '', quickPick: '' };
installVscodeStub(answers);

async function run(a: Partial<StubAnswers>): Promise<void> {
  for (const k of ['openDialog', 'infoPick', 'settings'] as const) delete answers[k];
  Object.assign(answers, a);
  const { PROBE_BODIES, PROBE_COMMANDS } = await import('../../extension/probe/commands');
  const log = { info() {}, warn() {}, error() {}, show() {} };
  const deps = { getPlan: async () => tinyPlan(2), targetUri: () => undefined, showResult() {}, log: log as never };
  await PROBE_BODIES[PROBE_COMMANDS.calibrateFromLog](deps, undefined);
}

test('a Megatron log: the comparison is shown and the correction saved under the GPU\'s id only on "Save"', async () => {
  const t = tempTree({ 'train.log': LOG, 'noise.log': 'nothing here\n' });
  try {
    stubRecord.updates.length = 0; stubRecord.infos.length = 0;
    await run({ openDialog: [join(t.dir, 'train.log')] });
    assert.equal(stubRecord.updates.length, 0, 'nothing written without Save');
    assert.match(stubRecord.infos[0] ?? '', /step 2\.00 s measured/);
    await run({ openDialog: [join(t.dir, 'train.log')], infoPick: 'Save to Workspace Settings', settings: { 'shardlens.calibration': { other: { overheadBytes: 1, efficiency: 1 } } } });
    assert.equal(stubRecord.updates.length, 1);
    const { key, value } = stubRecord.updates[0]!;
    assert.equal(key, 'shardlens.calibration');
    const table = value as Record<string, { efficiency: number; source: { engine: string } }>;
    const id = tinyPlan(2).cluster.gpu.id;
    assert.deepEqual(Object.keys(table).sort(), [id, 'other'].sort());
    assert.equal(table[id]!.source.engine, 'megatron');
    assert.ok(table[id]!.efficiency > 0);
    // No known engine, a device, a cancelled dialog: an error or nothing, and nothing written.
    stubRecord.updates.length = 0;
    await assert.rejects(run({ openDialog: [join(t.dir, 'noise.log')], infoPick: 'Save to Workspace Settings' }), /torchtitan/);
    await assert.rejects(run({ openDialog: ['/dev/zero'], infoPick: 'Save to Workspace Settings' }), /not a regular file/);
    await run({ infoPick: 'Save to Workspace Settings' });
    assert.equal(stubRecord.updates.length, 0);
  } finally {
    t.cleanup();
  }
});
