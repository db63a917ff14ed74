/**
 * Text edits in the language server: offsets and positions in a document's text, and applying edits (tests,
 * previews). The edits themselves come from formats/ (keyEdit.ts, whatIfEdit.ts), which speak LSP's TextEdit shape.
 */
import type { TextEdit } from 'vscode-languageserver';

/** Offset of a position in `text` (clamped). */
export function offsetAt(text: string, pos: { line: number; character: number }): number {
  let line = 0;
  let i = 0;
  while (line < pos.line) {
    const nl = text.indexOf('\n', i);
    if (nl < 0) return text.length;
    i = nl + 1;
    line++;
  }
  const end = text.indexOf('\n', i);
  return Math.min(i + pos.character, end < 0 ? text.length : end);
}

/** Applies edits to text (for tests and previews); edits must not overlap. */
export function applyEdits(text: string, edits: readonly TextEdit[]): string {
  const sorted = [...edits].sort((x, y) => offsetAt(text, y.range.start) - offsetAt(text, x.range.start));
  let out = text;
  for (const e of sorted) out = out.slice(0, offsetAt(out, e.range.start)) + e.newText + out.slice(offsetAt(out, e.range.end));
  return out;
}
