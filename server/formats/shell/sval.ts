/**
 * Shell values that remember where each character came from, so a flag's value found after variable expansion
 * still points at the text the user wrote (e.g. the "8" in TP=8).
 */
export interface SV {
  /** The text. */
  t: string;
  /** Source start offset of each character. */
  o: number[];
  /** Source end offset of each character. */
  e: number[];
  /** Character came from an unquoted expansion and may be split on whitespace. */
  s: boolean[];
  /** Character belongs to a variable that could not be resolved. */
  u: boolean[];
}

export function sv(): SV {
  return { t: '', o: [], e: [], s: [], u: [] };
}

/** Literal source text starting at `offset`. */
export function lit(text: string, offset: number): SV {
  const v = sv();
  for (let i = 0; i < text.length; i++) push(v, text[i]!, offset + i, offset + i + 1, false, false);
  return v;
}

/** Computed text attributed to one source span (arithmetic, defaults). */
export function computed(text: string, start: number, end: number, unresolved = false): SV {
  const v = sv();
  for (const ch of text) push(v, ch, start, end, false, unresolved);
  return v;
}

/** Characters the current evaluation may still produce (guards against exponential expansion). */
let budget = Infinity;

/** Sets the character budget of one evaluation. */
export function setBudget(chars: number): void {
  budget = chars;
}

export function push(v: SV, ch: string, o: number, e: number, split: boolean, unres: boolean): void {
  if (v.t.length > 200_000 || budget-- <= 0) return;
  v.t += ch;
  v.o.push(o);
  v.e.push(e);
  v.s.push(split);
  v.u.push(unres);
}

export function append(a: SV, b: SV, split = false): void {
  for (let i = 0; i < b.t.length; i++) push(a, b.t[i]!, b.o[i]!, b.e[i]!, split || b.s[i]!, b.u[i]!);
}

export function slice(v: SV, start: number, end: number): SV {
  return { t: v.t.slice(start, end), o: v.o.slice(start, end), e: v.e.slice(start, end), s: v.s.slice(start, end), u: v.u.slice(start, end) };
}

/** Source span covered by a value: [min start, max end]. */
export function span(v: SV): [number, number] | undefined {
  if (!v.t.length) return undefined;
  let a = Infinity;
  let b = -Infinity;
  for (let i = 0; i < v.t.length; i++) { a = Math.min(a, v.o[i]!); b = Math.max(b, v.e[i]!); }
  return [a, b];
}

export const FIELD_SEP = '\u0000';

/** Splits on whitespace that came from unquoted expansions and on field separators (word splitting). */
export function splitWords(v: SV, all = false): SV[] {
  const out: SV[] = [];
  let start = -1;
  for (let i = 0; i <= v.t.length; i++) {
    const ch = v.t[i];
    const sep = ch === undefined || ch === FIELD_SEP || ((all || v.s[i]) && /\s/.test(ch));
    if (sep) {
      if (start >= 0) out.push(slice(v, start, i));
      start = -1;
    } else if (start < 0) start = i;
  }
  return out;
}

export function unresolved(v: SV): boolean {
  return v.u.some(Boolean);
}
