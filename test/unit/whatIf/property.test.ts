/**
 * "What if I change this key" equals changing it (issue 11). For every config in examples/ and in the team corpus,
 * every key of the file that has a what-if (ZeRO stage, TP, PP, micro batch, recomputation, offload, sequence length)
 * and each of its what-ifs: the what-if's figures (the file's facts replaced, the plan derived again) equal the
 * figures of the file edited the way a quick fix edits it and read again — every stage's peak bytes, the step seconds
 * and the bytes communicated per step, to the last digit. Where the format has a layout rewriter, the file rewritten
 * by "Apply layout" for the what-if plan's layout must give the same figures too.
 * No expected number is written here: the two sides are computed independently (resolver overrides vs. editor + reader).
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { detectFormat, initFormats } from '../../../formats/index';
import { applyTextEdits, type TextEdit } from '../../../formats/common/edit/text';
import { localFactOf } from '../../../formats/common/edit/keyEdit';
import { expressibleWhatIfs, readsBack, rewriterEdits } from '../../../formats/whatIfEdit';
import { loadConfigGraph, modelLookup, type WorkspaceHost } from '../../../server/formats/workspace';
import { estimateMemory } from '../../../shared/memory/estimate';
import { resolvePlan, type ResolveContext } from '../../../shared/plan/resolve';
import type { Plan } from '../../../shared/plan/types';
import { WHAT_IF_PATHS, whatIfsFor, type WhatIf } from '../../../shared/plan/whatIf';
import { estimateStepTime } from '../../../shared/time/estimate';
import { CORPUS, corpusFiles, corpusPresent, corpusSkip } from '../../support/corpus';

const EXAMPLES = resolve(__dirname, '../../../examples');

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? filesUnder(p) : /\.(json|ya?ml|toml|sh|slurm)$/.test(n) ? [p] : [];
  });
}

/** Reads files from disk, with `edited` (path → text) in place of what is on disk. */
function hostFor(root: string, edited: ReadonlyMap<string, string> = new Map()): WorkspaceHost {
  const read = (p: string) => edited.get(p) ?? (() => { try { return readFileSync(p, 'utf8'); } catch { return undefined; } })();
  return {
    root,
    readFile: read,
    exists: (p) => edited.has(p) || existsSync(p),
    listDir: (p) => { try { return statSync(p).isDirectory() ? readdirSync(p) : undefined; } catch { return undefined; } },
  };
}

/** What the hover and the quick fix titles show: every stage's peak, the step time, the bytes sent per step. */
function figures(plan: Plan | undefined): unknown {
  if (!plan) return undefined;
  const m = estimateMemory(plan);
  const t = estimateStepTime(plan);
  return {
    peakReservedBytes: m.stages.map((s) => s.peakReservedBytes),
    peakAllocatedBytes: m.stages.map((s) => s.peakAllocatedBytes),
    stepSeconds: t?.stepSeconds,
    commBytes: (t?.collectives ?? []).map((c) => c.bytesPerRank),
  };
}

interface Checked { readonly literal: number; readonly rewriter: number; readonly unexpressed: string[] }

/** Runs every what-if of one file; returns how many were compared and which the file cannot express. */
function checkFile(path: string, root: string): Checked {
  const text = readFileSync(path, 'utf8');
  const format = detectFormat(path, text);
  const out = { literal: 0, rewriter: 0, unexpressed: [] as string[] };
  if (!format) return out;
  const host = hostFor(root);
  const ctx: ResolveContext = { lookupModel: modelLookup(host) };
  const g = loadConfigGraph(path, host, ctx);
  const plan = g.resolved.plan;
  if (!plan) return out;
  const file = { uri: path, text, format, facts: g.primary };
  const readBack = (edits: TextEdit[]) => {
    const editedText = applyTextEdits(text, edits);
    return loadConfigGraph(path, hostFor(root, new Map([[path, editedText]])), ctx).resolved.plan;
  };
  const resolveWith = (o: WhatIf['overrides']) => resolvePlan(g.primary, g.related, ctx, o).plan;
  for (const key of WHAT_IF_PATHS) {
    const fact = localFactOf(file, key);
    if (!fact) continue;
    const offered = expressibleWhatIfs(file, plan, key, resolveWith);
    out.unexpressed.push(...whatIfsFor(plan, key).filter((w) => !offered.some((o) => o.whatIf.label === w.label)).map((w) => `${key}: ${w.label}`));
    for (const { whatIf: w, plan: after, edits, how } of offered) {
      const want = figures(after);
      assert.deepEqual(figures(readBack(edits)), want, `${w.label} (${how} edit) differs from the what-if`);
      out.literal++;
      // "Apply layout" writes the whole layout; where it can hold the what-if too, it must give the same figures.
      const rewritten = rewriterEdits(file, w.overrides, after);
      if (rewritten && how !== 'rewriter' && readsBack(file, w.overrides, rewritten.edits)) {
        assert.deepEqual(figures(readBack(rewritten.edits)), want, `${w.label} ("Apply layout" rewrite) differs from the what-if`);
        out.rewriter++;
      }
    }
  }
  return out;
}

describe('what-if = edit the file and read it again', () => {
  before(async () => { await initFormats(); });
  const total = { literal: 0, rewriter: 0 };

  describe('examples/', () => {
    for (const path of filesUnder(EXAMPLES)) {
      test(relative(EXAMPLES, path), () => {
        const r = checkFile(path, EXAMPLES);
        total.literal += r.literal;
        total.rewriter += r.rewriter;
        // What-ifs the file cannot hold (a boolean cannot say "selective") are not offered; they are listed here.
        if (r.unexpressed.length) console.log(`# ${relative(EXAMPLES, path)}: not expressible in the file: ${r.unexpressed.join('; ')}`);
      });
    }
  });

  describe('corpus', { skip: corpusSkip }, () => {
    test('the corpus is there', () => { corpusPresent(); });
    for (const [folder, name, path] of corpusFiles()) {
      test(`${folder}/${name}`, () => {
        const r = checkFile(path, dirname(path));
        total.literal += r.literal;
        total.rewriter += r.rewriter;
        if (r.unexpressed.length) console.log(`# ${folder}/${name}: not expressible in the file: ${r.unexpressed.join('; ')}`);
      });
    }
  });

  test('enough what-ifs were compared to mean something', () => {
    // examples/ alone has ZeRO stages, TP, PP, micro batches and recomputation keys in several formats.
    assert.ok(total.literal >= (CORPUS ? 150 : 25), `only ${total.literal} what-ifs compared`);
    assert.ok(total.rewriter >= (CORPUS ? 50 : 10), `only ${total.rewriter} layout rewrites compared`);
  });
});
