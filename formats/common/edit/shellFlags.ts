/**
 * Finding and editing `--flag value` pairs in launch scripts (bash arrays, `\` continuations, option strings),
 * including values held in variables (`TP=8`, `${TP:-8}`). Edits are collected on the original text.
 */

/** One `--flag [value]` occurrence outside comments. */
export interface FlagHit {
  readonly flag: string;
  /** Offset of the `--`. */
  readonly start: number;
  /** Offset after the flag name. */
  readonly flagEnd: number;
  /** Offsets of the value token (quotes included) when one follows. */
  readonly valueStart?: number;
  readonly valueEnd?: number;
  readonly value?: string;
  readonly lineStart: number;
  readonly lineEnd: number;
}

export interface OffsetEdit {
  readonly from: number;
  readonly to: number;
  readonly text: string;
}

const FLAG = /(^|[\s"'(])(--[A-Za-z0-9][A-Za-z0-9_-]*)(?:(=|[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s"'()\\#-][^\s"'()\\]*))?/g;

/** The code part of a line: up to a `#` that starts a comment (at line start or after whitespace). */
function codeEnd(line: string): number {
  const m = /(^|\s)#/.exec(line);
  return m ? m.index + m[1].length : line.length;
}

/** Every flag occurrence in the script, in order. */
export function findFlags(text: string): FlagHit[] {
  const hits: FlagHit[] = [];
  let lineStart = 0;
  for (const line of text.split('\n')) {
    const code = line.slice(0, codeEnd(line));
    FLAG.lastIndex = 0;
    for (let m = FLAG.exec(code); m; m = FLAG.exec(code)) {
      const start = lineStart + m.index + m[1].length;
      const flagEnd = start + m[2].length;
      const hit: FlagHit = m[4] !== undefined
        ? { flag: m[2], start, flagEnd, valueStart: flagEnd + m[3].length, valueEnd: flagEnd + m[3].length + m[4].length, value: m[4], lineStart, lineEnd: lineStart + line.length }
        : { flag: m[2], start, flagEnd, lineStart, lineEnd: lineStart + line.length };
      hits.push(hit);
      // A value that is itself a flag would have been skipped; resume right after the flag name.
      FLAG.lastIndex = m.index + m[1].length + m[2].length;
      if (m[4] !== undefined) FLAG.lastIndex += m[3].length + m[4].length;
    }
    lineStart += line.length + 1;
  }
  return hits;
}

/** Where a value really lives: the literal after the flag, a variable's definition, or a `${VAR:-default}`. */
export function valueEdit(text: string, hit: FlagHit, value: string): OffsetEdit | string {
  if (hit.valueStart === undefined || hit.value === undefined || hit.valueEnd === undefined) return `${hit.flag} has no value to change.`;
  const raw = hit.value.replace(/^["']|["']$/g, '');
  const quoteOffset = hit.value.length !== raw.length ? 1 : 0;
  if (!raw.includes('$')) return { from: hit.valueStart + quoteOffset, to: hit.valueStart + quoteOffset + raw.length, text: value };
  const v = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}?$/.exec(raw);
  if (!v) return `${hit.flag} takes ${raw}, which is computed; set it to ${value}.`;
  const def = new RegExp(`^([ \\t]*(?:export[ \\t]+)?${v[1]}=)(\\S*)`, 'm').exec(text);
  if (def) {
    const from = def.index + def[1].length;
    const dv = def[2].replace(/^["']|["']$/g, '');
    const dq = def[2].length !== dv.length ? 1 : 0;
    if (/^-?\d+(\.\d+)?$/.test(dv)) return { from: from + dq, to: from + dq + dv.length, text: value };
    const dflt = /^\$\{[A-Za-z_][A-Za-z0-9_]*:-(\d+)\}$/.exec(dv);
    if (dflt) return { from: from + dq + dv.length - 1 - dflt[1].length, to: from + dq + dv.length - 1, text: value };
    return `${hit.flag} takes $${v[1]} = ${dv}, which is computed; set it to ${value}.`;
  }
  if (v[2] !== undefined && /^\d+$/.test(v[2])) {
    const from = hit.valueStart + quoteOffset + raw.indexOf(':-') + 2;
    return { from, to: from + v[2].length, text: value };
  }
  return `${hit.flag} takes $${v[1]}, which is set outside this file; set it to ${value}.`;
}

/** Lines' trailing continuation backslash. */
function continues(text: string, lineStart: number, lineEnd: number): boolean {
  return /\\\s*$/.test(text.slice(lineStart, lineEnd));
}

/** The edit that inserts `--flag value` next to an anchor flag, in the anchor's style (own line or inline). */
export function insertNear(text: string, anchor: FlagHit, flagText: string): OffsetEdit {
  const line = text.slice(anchor.lineStart, anchor.lineEnd);
  const indent = /^[ \t]*/.exec(line)?.[0] ?? '';
  const ownLine = line.trimStart().startsWith(anchor.flag);
  if (!ownLine) {
    const at = anchor.valueEnd ?? anchor.flagEnd;
    return { from: at, to: at, text: ` ${flagText}` };
  }
  const prevEnd = anchor.lineStart - 1;
  const prevStart = text.lastIndexOf('\n', prevEnd - 1) + 1;
  const anchorContinues = continues(text, anchor.lineStart, anchor.lineEnd);
  if (!anchorContinues && prevEnd > 0 && continues(text, prevStart, prevEnd)) {
    // The anchor ends a `\` chain: the new line goes before it, continued.
    return { from: anchor.lineStart, to: anchor.lineStart, text: `${indent}${flagText} \\\n` };
  }
  const at = anchor.lineEnd;
  return { from: at, to: at, text: `\n${indent}${flagText}${anchorContinues ? ' \\' : ''}` };
}

/** The edits that remove one flag occurrence (its line when it stands alone, keeping `\` chains intact). */
export function removeFlag(text: string, hit: FlagHit): OffsetEdit[] {
  const line = text.slice(hit.lineStart, hit.lineEnd);
  const end = hit.valueEnd ?? hit.flagEnd;
  // What else the line holds, comments aside: nothing means the whole line goes.
  const code = line.slice(0, codeEnd(line));
  const rest = (code.slice(0, hit.start - hit.lineStart) + code.slice(end - hit.lineStart)).replace(/\\\s*$/, '').trim();
  if (rest === '') {
    const edits: OffsetEdit[] = [{ from: hit.lineStart, to: Math.min(hit.lineEnd + 1, text.length), text: '' }];
    const prevEnd = hit.lineStart - 1;
    const prevStart = text.lastIndexOf('\n', prevEnd - 1) + 1;
    if (!continues(text, hit.lineStart, hit.lineEnd) && prevEnd > 0 && continues(text, prevStart, prevEnd)) {
      const prev = text.slice(prevStart, prevEnd);
      const cut = /[ \t]*\\\s*$/.exec(prev);
      if (cut) edits.push({ from: prevStart + cut.index, to: prevEnd, text: '' });
    }
    return edits;
  }
  let from = hit.start;
  while (from > hit.lineStart && (line[from - hit.lineStart - 1] === ' ' || line[from - hit.lineStart - 1] === '\t')) from--;
  return [{ from, to: end, text: '' }];
}

/** Applies offset edits to the text (edits must not overlap; at one offset, a replacement goes after insertions kept in order). */
export function applyOffsetEdits(text: string, edits: readonly OffsetEdit[]): string {
  const sorted = edits.map((e, i) => ({ ...e, i })).sort((a, b) => b.from - a.from || b.to - a.to || b.i - a.i);
  let out = text;
  for (const e of sorted) out = out.slice(0, e.from) + e.text + out.slice(e.to);
  return out;
}
