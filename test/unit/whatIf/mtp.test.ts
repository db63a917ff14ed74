/**
 * The what-if of multi-token prediction (shared/model/mtp.ts): where a Megatron launch builds modules
 * (`--mtp-num-layers D`), the hover offers training without them, written as `--mtp-num-layers 0`, and its figures are
 * the edited file's read again. Expected relations from Megatron-LM's module layout (multi_token_prediction.py,
 * gpt_model.py at d98e8a64dd): without the module the last pipeline stage loses one MoE layer, the embedding's copy and
 * one more logits pass, and no other stage changes.
 */
import { readFileSync } from 'node:fs';
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { initFormats } from '../../../formats/index';
import { estimateMemory } from '../../../shared/memory/estimate';
import { whatIfsFor } from '../../../shared/plan/whatIf';
import { resolvePlan } from '../../../shared/plan/resolve';
import { loadConfigGraph, modelLookup } from '../../../server/formats/workspace';
import { estimateStepTime } from '../../../shared/time/estimate';
import { memoryHost, whatIfs } from './helpers';

const PATH = '/ws/deepseek_v3_gb200.sh';
/** Megatron-Bridge 26.06's DeepSeek-V3 on 256 GB200 as Megatron-LM flags (the check set's launch file). */
const FILES = { [PATH]: readFileSync('data/calibration/checks/mbridge2606/deepseek_v3_gb200.sh', 'utf8') };

describe('what-if: multi-token prediction', () => {
  before(async () => { await initFormats(); });

  test('offered as "1 → 0 modules", written --mtp-num-layers 0, and equal to the edited file read again', () => {
    const { plan, results } = whatIfs(FILES, PATH, 'model.mtpLayers');
    assert.deepEqual(whatIfsFor(plan, 'model.mtpLayers').map((w) => [w.label, w.value]), [['multi-token prediction 1 → 0 modules', 0]]);
    assert.equal(results.length, 1);
    assert.match(results[0].text, /--mtp-num-layers 0 /);
    const edited = results[0].edited;
    assert.equal(edited.model.mtpLayers, undefined);
    const host = memoryHost(FILES);
    const ctx = { lookupModel: modelLookup(host) };
    const g = loadConfigGraph(PATH, host, ctx);
    const predicted = resolvePlan(g.primary, g.related, ctx, { 'model.mtpLayers': 0 }).plan!;
    const [a, b] = [estimateMemory(predicted), estimateMemory(edited)];
    assert.deepEqual(a.stages.map((s) => s.peakReservedBytes), b.stages.map((s) => s.peakReservedBytes));
    assert.equal(estimateStepTime(predicted).stepSeconds, estimateStepTime(edited).stepSeconds);
    // Only the last stage changes, and it gets lighter.
    const before = estimateMemory(plan).stages.map((s) => s.peakReservedBytes);
    for (let i = 0; i < 3; i++) assert.equal(b.stages[i].peakReservedBytes, before[i], `stage ${i}`);
    assert.ok(b.stages[3].peakReservedBytes < before[3]);
  });

  test('a model without modules offers nothing', () => {
    const text = FILES[PATH].replace(' --mtp-num-layers 1 \\\n', ' \\\n').replace('--mtp-num-layers 1', '');
    const { plan } = whatIfs({ [PATH]: text }, PATH, 'model.mtpLayers');
    assert.equal(plan.model.mtpLayers, undefined);
    assert.deepEqual(whatIfsFor(plan, 'model.mtpLayers'), []);
  });
});
