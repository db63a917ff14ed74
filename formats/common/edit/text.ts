/**
 * Text helpers shared by the layout rewriters: positions, and the minimal edits that turn one text into another.
 * Edits have the shape of LSP TextEdits and refer to the ORIGINAL text.
 */
import type { TextPosition, TextRange } from '../../../shared/plan/types';

export interface TextEdit {
  readonly range: TextRange;
  readonly newText: string;
}

/** Offsets where each line starts. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts.push(i + 1);
  return starts;
}

export function positionAt(starts: readonly number[], offset: number): TextPosition {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, character: offset - starts[lo] };
}

export function offsetAt(starts: readonly number[], pos: TextPosition): number {
  return (starts[pos.line] ?? starts[starts.length - 1]) + pos.character;
}

/** The text a range covers. */
export function textOf(text: string, r: TextRange): string {
  const starts = lineStarts(text);
  return text.slice(offsetAt(starts, r.start), offsetAt(starts, r.end));
}

/** Applies edits (ranges in the original text, not overlapping) and returns the new text. */
export function applyTextEdits(text: string, edits: readonly TextEdit[]): string {
  const starts = lineStarts(text);
  const sorted = edits
    .map((e) => ({ from: offsetAt(starts, e.range.start), to: offsetAt(starts, e.range.end), text: e.newText }))
    .map((e, i) => ({ ...e, i }))
    // LSP: inserts at one position appear in array order, so the later one is applied first.
    .sort((a, b) => b.from - a.from || b.to - a.to || b.i - a.i);
  let out = text;
  for (const e of sorted) out = out.slice(0, e.from) + e.text + out.slice(e.to);
  return out;
}

/** One edit replacing the differing middle of two strings (common prefix and suffix kept). */
function trimmedEdit(before: string, after: string, baseOffset: number, starts: readonly number[]): TextEdit {
  let p = 0;
  while (p < before.length && p < after.length && before[p] === after[p]) p++;
  let s = 0;
  while (s < before.length - p && s < after.length - p && before[before.length - 1 - s] === after[after.length - 1 - s]) s++;
  return {
    range: { start: positionAt(starts, baseOffset + p), end: positionAt(starts, baseOffset + before.length - s) },
    newText: after.slice(p, after.length - s),
  };
}

/**
 * Minimal edits from `before` to `after`: a line diff (longest common subsequence), each changed hunk trimmed to
 * the characters that differ. Applying them to `before` gives `after`.
 */
export function diffEdits(before: string, after: string): TextEdit[] {
  if (before === after) return [];
  // Lines keep their terminators, so joining a slice gives back the exact text.
  const a = before.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const b = after.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  // Lines of common prefix and suffix are skipped before the quadratic LCS.
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const A = a.slice(head, a.length - tail);
  const Bl = b.slice(head, b.length - tail);
  const n = A.length;
  const m = Bl.length;
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) lcs[i][j] = A[i] === Bl[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  // Walk the table into hunks of (old lines i0..i1, new lines j0..j1).
  const hunks: [number, number, number, number][] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && A[i] === Bl[j]) { i++; j++; continue; }
    const i0 = i;
    const j0 = j;
    while ((i < n || j < m) && !(i < n && j < m && A[i] === Bl[j])) {
      if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) j++;
      else i++;
    }
    hunks.push([i0, i, j0, j]);
  }
  const starts = lineStarts(before);
  let offset = 0;
  const lineOffset: number[] = a.map((line) => ((offset += line.length), offset - line.length));
  lineOffset.push(before.length);
  const edits: TextEdit[] = [];
  for (const [i0, i1, j0, j1] of hunks) {
    // Changed lines are paired one to one; the lines left over form one insertion or deletion.
    const pairs = Math.min(i1 - i0, j1 - j0);
    for (let k = 0; k < pairs; k++) edits.push(trimmedEdit(A[i0 + k], Bl[j0 + k], lineOffset[head + i0 + k], starts));
    if (i1 - i0 > pairs || j1 - j0 > pairs) {
      const oldText = A.slice(i0 + pairs, i1).join('');
      const newText = Bl.slice(j0 + pairs, j1).join('');
      edits.push(trimmedEdit(oldText, newText, lineOffset[head + i0 + pairs], starts));
    }
  }
  return mergeTouching(edits, starts);
}

/** Joins edits where one ends exactly where the next starts, so no two edits share a position. */
function mergeTouching(edits: TextEdit[], starts: readonly number[]): TextEdit[] {
  const out: TextEdit[] = [];
  for (const e of edits) {
    const prev = out[out.length - 1];
    if (prev && offsetAt(starts, prev.range.end) === offsetAt(starts, e.range.start)) {
      out[out.length - 1] = { range: { start: prev.range.start, end: e.range.end }, newText: prev.newText + e.newText };
    } else out.push(e);
  }
  return out;
}
