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
  /**
   * The value holds a script argument (`$1`…) the reading did not get: empty as the script runs without
   * arguments, but chosen by whoever runs it (a test of it against a word is not decided by the reading).
   */
  arg?: boolean;
}

export function sv(): SV {
  return { t: '', o: [], e: [], s: [], u: [] };
}

/** Literal source text starting at `offset`. */
export function lit(text: string, offset: number): SV {
  const v = sv();
  const n = take(v, text.length);
  if (n < text.length) text = text.slice(0, n);
  v.t = text;
  for (let i = 0; i < n; i++) { v.o.push(offset + i); v.e.push(offset + i + 1); v.s.push(false); v.u.push(false); }
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

/** How many of `len` characters may be appended to `v` (as `len` calls of `push` would), charging the budget. */
function take(v: SV, len: number): number {
  if (v.t.length > 200_000) return 0;
  const k = Math.min(len, 200_001 - v.t.length);
  const n = Math.min(k, Math.max(0, budget));
  budget -= k;
  return n;
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
  if (b.arg) a.arg = true;
  const n = take(a, b.t.length);
  if (!n) return;
  a.t += n < b.t.length ? b.t.slice(0, n) : b.t;
  for (let i = 0; i < n; i++) { a.o.push(b.o[i]!); a.e.push(b.e[i]!); a.s.push(split || b.s[i]!); a.u.push(b.u[i]!); }
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
    // An expansion that could not be evaluated (`$(cmd …)` kept as written) stays one word, as it would be one value.
    const sep = ch === undefined || ch === FIELD_SEP || ((all || v.s[i]) && /\s/.test(ch) && !v.u[i]);
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
