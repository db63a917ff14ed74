/**
 * Every real config in the team corpus (/work/shared/corpus, see SOURCES.md) that "Apply layout" can rewrite is
 * rewritten for two layouts and read back with the format parser: the file stays valid (no new error diagnostics)
 * and the parser reads the layout's values for the keys that format owns.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { detectFormat, initFormats, parseConfig } from '../../../formats/index';
import { canApplyLayout, layoutEdits, type LayoutTarget } from '../../../formats/layout';
import { applyTextEdits } from '../../../formats/common/edit/text';
import type { ConfigFacts, FormatId } from '../../../shared/plan/facts';
import type { PlanPath } from '../../../shared/plan/paths';
import { CORPUS as FOUND, corpusPresent, corpusSkip } from '../../support/corpus';

const CORPUS = FOUND ?? '/nonexistent/corpus';

const TARGETS: LayoutTarget[] = [
  { tp: 2, pp: 2, vpp: 1, cp: 1, ep: 1, dp: 2, sp: true, zero: 3, sharding: 'deepspeed', distributedOptimizer: true, microBatch: 3, gradAccum: 5, recompute: 'full', offload: 'none', globalBatch: 30, layers: 32 },
  { tp: 1, pp: 1, vpp: 1, cp: 1, ep: 1, dp: 8, sp: false, zero: 2, sharding: 'deepspeed', distributedOptimizer: false, microBatch: 2, gradAccum: 1, recompute: 'none', offload: 'none', globalBatch: 16, layers: 32 },
  { tp: 1, pp: 4, vpp: 2, cp: 1, ep: 1, dp: 2, sp: false, zero: 3, sharding: 'fsdp2', distributedOptimizer: false, microBatch: 2, gradAccum: 8, recompute: 'full', offload: 'none', globalBatch: 32, layers: 32 },
];

/** Plan paths each format's rewriter owns, with the value the target gives (undefined: not checked for this target). */
function owned(format: FormatId, t: LayoutTarget): Partial<Record<PlanPath, number | undefined>> {
  switch (format) {
    case 'megatron-script': return { 'parallel.tp': t.tp, 'parallel.pp': t.pp, 'training.microBatch': t.microBatch };
    // torchtitan splits local_batch_size into PP micro-batches of pipeline_parallel_microbatch_size; without PP it is
    // the micro batch. Either way the reader must read back the layout's micro batch and virtual stages.
    case 'torchtitan': return { 'parallel.tp': t.tp, 'parallel.pp': t.pp, 'training.microBatch': t.microBatch, 'parallel.vpp': t.pp > 1 ? t.vpp : undefined };
    case 'deepspeed': return { 'parallel.sharding.stage': t.zero, 'training.microBatch': t.microBatch };
    case 'axolotl': return { 'training.microBatch': t.microBatch, 'training.gradAccum': t.gradAccum };
    case 'llamafactory': return { 'training.microBatch': t.microBatch, 'training.gradAccum': t.gradAccum };
    default: return {};
  }
}

function corpusFiles(): string[] {
  if (!existsSync(CORPUS)) return [];
  return readdirSync(CORPUS).filter((d) => !d.endsWith('.md')).flatMap((d) => readdirSync(join(CORPUS, d)).map((f) => join(CORPUS, d, f)));
}

describe('corpus configs round-trip through "Apply layout"', () => {
  before(async () => {
    await initFormats();
  });
  const files = corpusFiles();
  test('the corpus is there', { skip: corpusSkip }, () => {
    corpusPresent();
    assert.ok(files.length > 50);
  });
  for (const path of files) {
    const name = path.slice(CORPUS.length + 1);
    test(name, () => {
      const text = readFileSync(path, 'utf8');
      const uri = `file://${path}`;
      const format = detectFormat(uri, text);
      if (!format || !canApplyLayout(format)) return;
      const errors = (s: string): number => parseConfig(uri, s, format).diagnostics.filter((d) => d.severity === 'error').length;
      const original = parseConfig(uri, text, format);
      const errorsBefore = original.diagnostics.filter((d) => d.severity === 'error').length;
      for (const t of TARGETS) {
        const r = layoutEdits(format, text, t);
        const out = applyTextEdits(text, r.edits);
        assert.ok(errors(out) <= errorsBefore, `new errors after rewriting for ${JSON.stringify(t)}`);
        // Files that do not parse (templates) are left alone; values computed in the script are reported, not edited.
        if (errorsBefore > 0) continue;
        const facts: ConfigFacts['facts'] = parseConfig(uri, out, format).facts;
        for (const [key, want] of Object.entries(owned(format, t)) as [PlanPath, number | undefined][]) {
          if (want === undefined || original.facts[key]?.value === 'auto' || r.notes.some((n) => n.includes('computed')) || r.unwritable?.includes(key)) continue;
          // Absent degrees are the frameworks' default of 1.
          const got: unknown = facts[key]?.value ?? (key.startsWith('parallel.') && key !== 'parallel.sharding.stage' ? 1 : undefined);
          assert.equal(got, want, `${key} after rewrite`);
        }
      }
    });
  }
});
