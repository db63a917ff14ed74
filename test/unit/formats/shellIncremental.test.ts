/**
 * Editing a launch script re-parses it incrementally and reuses the copies of unchanged statements. Each edit is
 * applied to one document in turn; its facts must equal a first read of the same text (a new document), and the
 * values follow bash semantics on the edited text (DP = GPUS_PER_NODE·NNODES / (TP·PP), GBS = MBS·DP·16).
 */
import { before, describe, test } from 'node:test';
import type { PlanPath } from '../../../shared/plan/paths';
import assert from 'node:assert/strict';
import { initFormats, parseConfig } from '../../../formats/index';
import { fixture } from './helpers';

interface Step {
  readonly name: string;
  readonly edit: (text: string) => string;
  readonly expect: Readonly<Partial<Record<PlanPath, unknown>>>;
  /** A value whose range must point at this text in the edited script. */
  readonly at?: readonly [path: PlanPath, needle: string];
}

const STEPS: readonly Step[] = [
  { name: 'lines inserted above shift every statement', edit: (t) => t.replace('#!/bin/bash\n', '#!/bin/bash\n# one\n# two\nexport A=1\n'),
    expect: { 'parallel.pp': 2, 'parallel.tp': 4, 'training.globalBatch': 32 }, at: ['parallel.pp', '2'] },
  // PP=4: DP = 8·2/(4·4) = 1, GBS = 1·1·16 = 16.
  { name: 'a literal value changes', edit: (t) => t.replace('PP=2', 'PP=4'), expect: { 'parallel.pp': 4, 'training.globalBatch': 16 } },
  // MBS=2 (a literal read later through $MBS): GBS = 2·1·16 = 32.
  { name: 'a literal read through a variable changes', edit: (t) => t.replace('MBS=1', 'MBS=2'), expect: { 'training.microBatch': 2, 'training.globalBatch': 32 }, at: ['training.microBatch', '2'] },
  // TP defaults to 2: DP = 16/(2·4) = 2, GBS = 2·2·16 = 64.
  { name: 'a default inside ${:-} changes', edit: (t) => t.replace('TP=${TP:-4}', 'TP=${TP:-2}'), expect: { 'parallel.tp': 2, 'training.globalBatch': 64 } },
  { name: 'a statement that only echoes is added', edit: (t) => t.replace('GBS=', 'if [ -n "$DEBUG" ]; then echo "debug run"; fi\nGBS='), expect: { 'parallel.tp': 2, 'training.globalBatch': 64 } },
  // An `if` that assigns is evaluated (both branches are read in order): PP=8 → DP = 16/(2·8) = 1, GBS = 2·1·16 = 32.
  { name: 'an if that assigns is added', edit: (t) => t.replace('MBS=2', 'MBS=2\nif [ -n "$BIG" ]; then PP=8; fi'), expect: { 'parallel.pp': 8, 'training.globalBatch': 32 } },
  { name: 'a value is half typed', edit: (t) => t.replace('--num-layers 32', '--num-layers 3'), expect: { 'model.layers': 3 } },
  { name: 'an unterminated string swallows the rest', edit: (t) => t.replace('PARALLEL_ARGS="', 'PARALLEL_ARGS="x "'), expect: {} },
];

describe('shell scripts edited in place', () => {
  before(async () => { await initFormats(); });

  test('every edit reads the same as a first read of the edited text', () => {
    const { text: original } = fixture('megatron/pretrain_llama.sh');
    const uri = 'file:///ws/edited/pretrain_llama.sh';
    const read = (u: string, t: string) => JSON.parse(JSON.stringify(parseConfig(u, t)).replaceAll(u, 'DOC')) as ReturnType<typeof parseConfig>;
    read(uri, original);
    let text = original;
    STEPS.forEach((step, i) => {
      text = step.edit(text);
      const edited = read(uri, text);
      const fresh = read(`file:///ws/fresh/${i}/pretrain_llama.sh`, text);
      assert.deepEqual(edited.facts, fresh.facts, step.name);
      assert.deepEqual(edited.diagnostics, fresh.diagnostics, step.name);
      for (const [path, value] of Object.entries(step.expect) as [PlanPath, unknown][]) assert.equal(edited.facts[path]?.value, value, `${step.name}: ${path}`);
      if (step.at) {
        const [path, needle] = step.at;
        // The value range is the digits after "PP=" / "MBS=" on their line of the edited text.
        const lines = text.split('\n');
        const line = lines.findIndex((l) => l.startsWith(path === 'parallel.pp' ? 'PP=' : 'MBS='));
        const character = lines[line]!.indexOf('=') + 1;
        assert.deepEqual(edited.facts[path]?.source.range, { start: { line, character }, end: { line, character: character + needle.length } }, step.name);
      }
    });
    // Back to the original text: the facts of a first read again.
    assert.deepEqual(read(uri, original).facts, read('file:///ws/fresh/back/pretrain_llama.sh', original).facts);
  });
});
