/** Offset ↔ line/character conversion for one document, shared by every parser. */
import type { TextPosition, TextRange } from '../../shared/plan/types';

/** Maps UTF-16 offsets to zero-based LSP positions by binary search over line starts. */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(readonly text: string) {
    // Line breaks are LF, CRLF or a lone CR. Without any CR, the native search for LF finds every line start.
    if (text.indexOf('\r') < 0) {
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
      return;
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10) this.starts.push(i + 1);
      else if (c === 13 && text.charCodeAt(i + 1) !== 10) this.starts.push(i + 1);
    }
  }

  /** Position of an offset (clamped to the document). */
  position(offset: number): TextPosition {
    const off = Math.max(0, Math.min(this.text.length, Math.floor(offset)));
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.starts[mid] ?? 0) <= off) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo, character: off - (this.starts[lo] ?? 0) };
  }

  /** Range covering [start, end) offsets. */
  range(start: number, end: number): TextRange {
    return { start: this.position(start), end: this.position(Math.max(start, end)) };
  }

  /** Offset of a position (clamped). */
  offset(pos: TextPosition): number {
    const line = Math.max(0, Math.min(this.starts.length - 1, pos.line));
    return Math.min(this.text.length, (this.starts[line] ?? 0) + Math.max(0, pos.character));
  }
}

/** The empty range at the start of a document, used for file-level diagnostics. */
export const TOP: TextRange = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** Last path segment of a URI or path, for "file: key" details. */
export function baseName(uri: string): string {
  const clean = uri.replace(/[?#].*$/, '');
  const i = Math.max(clean.lastIndexOf('/'), clean.lastIndexOf('\\'));
  return decodeURIComponent(i >= 0 ? clean.slice(i + 1) : clean);
}

/** Parses numbers written as ints, floats, exponents or with underscores ("5e8", "220_000_000"); undefined otherwise. */
export function toNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v !== 'string') return undefined;
  const s = v.trim().replace(/_/g, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

/** Reads booleans written as true/false, True/False, yes/no, t/f, y/n, 1/0 (HfArgumentParser's string_to_bool words). */
export function toBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v !== 'string') return undefined;
  const s = v.trim().toLowerCase();
  if (['true', 'yes', 'on', '1', 't', 'y'].includes(s)) return true;
  if (['false', 'no', 'off', '0', 'f', 'n', 'none', 'null', ''].includes(s)) return false;
  return undefined;
}

/** A number as shown in messages: typographic minus, so a shown text never reads as a negative figure. */
export function shown(n: number): string {
  return String(n).replace('-', '−');
}
