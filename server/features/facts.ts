/** Finding facts of a document by plan path or by position, and placing plan paths at ranges. */
import { factEntries, type Fact } from '../../shared/plan/facts';
import type { TextPosition, TextRange } from '../../shared/plan/types';
import type { DocumentAnalysis } from '../analysis/analyze';
import type { PlanPath } from '../../shared/plan/paths';

export const TOP_RANGE: TextRange = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** True when the fact was written in this document (so its ranges point into it). */
export function isLocal(a: DocumentAnalysis, f: Fact): boolean {
  const k = f.source.kind;
  if (k !== 'explicit' && k !== 'derived') return false;
  if (!f.keyRange && !f.source.range) return false;
  return !f.source.uri || f.source.uri === a.uri || f.source.uri === a.facts?.uri;
}

/** The fact for a plan path written in this document, if any. */
export function localFact(a: DocumentAnalysis, path: PlanPath): Fact | undefined {
  const f = a.facts?.facts[path];
  return f && isLocal(a, f) ? f : undefined;
}

/** Range of the key (else the value) of a local fact. */
export function keyRangeOf(f: Fact): TextRange | undefined {
  return f.keyRange ?? f.source.range;
}

/** The first plan path of `paths` written in this document, with its range; else undefined. */
export function rangeForPaths(a: DocumentAnalysis, paths: readonly PlanPath[]): TextRange | undefined {
  for (const p of paths) {
    const f = localFact(a, p);
    if (f) return keyRangeOf(f);
  }
  return undefined;
}

function before(a: TextPosition, b: TextPosition): boolean {
  return a.line < b.line || (a.line === b.line && a.character <= b.character);
}

/** True when `pos` lies within `r` (inclusive of both ends, so a cursor at the end of a key counts). */
export function contains(r: TextRange | undefined, pos: TextPosition): boolean {
  return !!r && before(r.start, pos) && before(pos, r.end);
}

/** True when the value sits on its own line away from the key (a shell variable): that whole line counts. */
function onValueLine(f: Fact, pos: TextPosition): boolean {
  const v = f.source.range;
  return !!v && !!f.keyRange && v.start.line !== f.keyRange.start.line && v.start.line === pos.line;
}

/** Every local fact whose key or value is at `pos`, as [path, fact]; `prefer` paths come first. */
export function factsAt(a: DocumentAnalysis, pos: TextPosition, prefer: (path: PlanPath) => boolean = () => false): [PlanPath, Fact][] {
  const out: [PlanPath, Fact][] = [];
  for (const [path, f] of factEntries(a.facts?.facts ?? {})) {
    if (!isLocal(a, f)) continue;
    if (contains(f.keyRange, pos) || contains(f.source.range, pos) || onValueLine(f, pos)) out.push([path, f]);
  }
  return out.sort((x, y) => Number(prefer(y[0])) - Number(prefer(x[0])));
}

/** The local fact whose key or value is at `pos`, as [path, fact]. */
export function factAt(a: DocumentAnalysis, pos: TextPosition, prefer?: (path: PlanPath) => boolean): [PlanPath, Fact] | undefined {
  return factsAt(a, pos, prefer)[0];
}

/** The range that ends a fact's written text (its value, else its key): where a hint goes. */
export function endOf(f: Fact): TextPosition | undefined {
  return (f.source.range ?? f.keyRange)?.end;
}
