/**
 * A static reading of Python configuration modules (torchtitan's `Trainer.Config` functions): tokens, the top-level
 * functions and assignments, and the value of a function's `return` as far as literals, keyword calls, lists,
 * arithmetic on numbers, local names, attribute assignments and calls to the module's other functions without
 * arguments allow. Nothing is executed: a call to anything else is kept as a call (its callee name and arguments), and
 * what cannot be followed is an `unknown` value that says why. Bounded: a file over MAX_CHARS is not read, functions call each
 * other at most MAX_DEPTH deep, and each function is read once.
 */

/** Text span (offsets into the module's text). */
export interface Span { readonly start: number; readonly end: number }

interface Tok { readonly k: 'name' | 'num' | 'str' | 'op'; readonly v: string; readonly start: number; readonly end: number }

/** A statement: its tokens (one logical line) and the indentation of its first token. */
interface Stmt { readonly indent: number; readonly toks: readonly Tok[] }

/** A keyword argument or attribute of a call value: its value and where its name and value are written. */
export interface Field { readonly value: Value; readonly key: Span; readonly at: Span }

export type Value =
  | { readonly t: 'num'; readonly v: number; readonly at: Span }
  | { readonly t: 'str'; readonly v: string; readonly at: Span }
  | { readonly t: 'bool'; readonly v: boolean; readonly at: Span }
  | { readonly t: 'none'; readonly at: Span }
  | { readonly t: 'list'; readonly items: readonly Value[]; readonly at: Span }
  | { readonly t: 'call'; readonly callee: string; readonly args: Value[]; readonly fields: Map<string, Field>; readonly at: Span }
  | { readonly t: 'unknown'; readonly why: string; readonly at: Span };

export const MAX_CHARS = 500_000;
const MAX_DEPTH = 32;

const OPS = ['**', '//', '->', '==', '!=', '<=', '>=', ':=', '(', ')', '[', ']', '{', '}', ',', ':', '.', '=', '+', '-', '*', '/', '%', '@', '<', '>', '|', '&', '~', '^', ';'];

/** Python's tokens, grouped into logical lines (brackets, backslashes and triple-quoted strings join physical lines). */
/** The last text lexed and its statements: a module is read once per function of it on every edit (read-only). */
let lexed: { readonly text: string; readonly stmts: readonly Stmt[] } | undefined;

/** statements(text), lexed once per text in a row. */
function statementsOf(text: string): readonly Stmt[] {
  if (lexed?.text !== text) lexed = { text, stmts: statements(text) };
  return lexed.stmts;
}

function statements(text: string): Stmt[] {
  const out: Stmt[] = [];
  let toks: Tok[] = [];
  let depth = 0, indent = 0, lineStart = true, i = 0;
  const end = () => { if (toks.length) out.push({ indent, toks }); toks = []; lineStart = true; };
  while (i < text.length) {
    const c = text[i]!;
    if (lineStart && depth === 0) {
      let n = 0;
      while (text[i + n] === ' ' || text[i + n] === '\t') n++;
      indent = n;
      i += n;
      lineStart = false;
      continue;
    }
    if (c === '\n') { if (depth === 0) end(); i++; continue; }
    if (c === '\r' || c === ' ' || c === '\t' || c === '\f') { i++; continue; }
    if (c === '\\' && (text[i + 1] === '\n' || text[i + 1] === '\r')) { i += text[i + 1] === '\r' && text[i + 2] === '\n' ? 3 : 2; continue; }
    if (c === '#') { while (i < text.length && text[i] !== '\n') i++; continue; }
    const str = /^([rRbBuUfF]{0,2})('''|"""|'|")/.exec(text.slice(i, i + 5));
    if (str) {
      const q = str[2]!;
      let j = i + str[0].length;
      const raw = /[rR]/.test(str[1]!);
      while (j < text.length && !text.startsWith(q, j)) {
        if (!raw && text[j] === '\\') j++;
        else if (q.length === 1 && text[j] === '\n') break;
        j++;
      }
      const bodyEnd = Math.min(j, text.length);
      j = Math.min(text.length, bodyEnd + q.length);
      toks.push({ k: 'str', v: text.slice(i + str[0].length, bodyEnd), start: i, end: j });
      i = j;
      continue;
    }
    const num = /^(0[xX][0-9a-fA-F_]+|(\d[\d_]*\.?[\d_]*|\.\d[\d_]*)([eE][+-]?\d+)?)/.exec(text.slice(i, i + 64));
    if (num && /[\d.]/.test(c) && (c !== '.' || /\d/.test(text[i + 1] ?? ''))) {
      toks.push({ k: 'num', v: num[0], start: i, end: i + num[0].length });
      i += num[0].length;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i, i + 256));
    if (name) { toks.push({ k: 'name', v: name[0], start: i, end: i + name[0].length }); i += name[0].length; continue; }
    const op = OPS.find((o) => text.startsWith(o, i)) ?? c;
    if (op === '(' || op === '[' || op === '{') depth++;
    if (op === ')' || op === ']' || op === '}') depth = Math.max(0, depth - 1);
    toks.push({ k: 'op', v: op, start: i, end: i + op.length });
    i += op.length;
  }
  end();
  return out;
}

/** A top-level function: its name, where the name is written, and its body's statements. */
interface Fn { readonly name: string; readonly at: Span; readonly body: readonly Stmt[] }

/** A module read statically: its functions, top-level names and `from X import a as b` imports. */
export class PyModule {
  readonly functions = new Map<string, Fn>();
  /** Top-level classes with the names of their bases as written (`class _KimiTrainerConfig(Trainer.Config)`). */
  readonly classes = new Map<string, string[]>();
  /** Local name → the module it was imported from ("torchtitan.models.llama3", "." for a relative import). */
  readonly imports = new Map<string, string>();
  private readonly globals = new Map<string, Stmt>();
  /** Statements the reading skipped inside a function (branches, loops), by function. */
  readonly skipped = new Map<string, Span[]>();
  /** Each function's value, read once (a function without arguments always returns the same): no blow-up when configurations derive from each other many times over. */
  private readonly memo = new Map<string, Value>();

  constructor(readonly text: string) {
    if (text.length > MAX_CHARS) return;
    const stmts = statementsOf(text);
    for (let i = 0; i < stmts.length; i++) {
      const s = stmts[i]!;
      if (s.indent > 0) continue;
      const t = s.toks;
      if (t[0]?.v === 'def' && t[1]?.k === 'name') {
        const body: Stmt[] = [];
        while (i + 1 < stmts.length && stmts[i + 1]!.indent > 0) body.push(stmts[++i]!);
        this.functions.set(t[1].v, { name: t[1].v, at: { start: t[1].start, end: t[1].end }, body });
      } else if (t[0]?.v === 'class' && t[1]?.k === 'name') {
        // Bases: the dotted names between the parentheses (keyword arguments such as metaclass= are not bases).
        const bases: string[] = [];
        let cur = '';
        for (let j = 3; t[2]?.v === '(' && j < t.length && t[j]!.v !== ')'; j++) {
          const x = t[j]!;
          if (x.v === ',') { if (cur) bases.push(cur); cur = ''; } else if (x.k === 'name' || x.v === '.') cur += x.v;
          else if (x.v === '=') cur = '';
        }
        if (cur) bases.push(cur);
        this.classes.set(t[1].v, bases);
      } else if (t[0]?.v === 'from' && t.some((x) => x.v === 'import')) {
        const k = t.findIndex((x) => x.v === 'import');
        const mod = t.slice(1, k).map((x) => x.v).join('');
        for (let j = k + 1; j < t.length; j++) {
          if (t[j]!.k !== 'name') continue;
          const alias = t[j + 1]?.v === 'as' && t[j + 2]?.k === 'name' ? t[j + 2]!.v : t[j]!.v;
          this.imports.set(alias, mod);
          if (t[j + 1]?.v === 'as') j += 2;
        }
      } else if (t[0]?.k === 'name' && t[1]?.v === '=') this.globals.set(t[0].v, s);
    }
  }

  /** The value a function returns, read statically; undefined when the module has no such function. */
  returnOf(name: string, depth = 0, seen: ReadonlySet<string> = new Set()): Value | undefined {
    const fn = this.functions.get(name);
    if (!fn) return undefined;
    const known = this.memo.get(name);
    if (known) return copy(known);
    const v = this.evaluate(fn, depth, seen);
    this.memo.set(name, v);
    return copy(v);
  }

  private evaluate(fn: Fn, depth: number, seen: ReadonlySet<string>): Value {
    const name = fn.name;
    if (depth > MAX_DEPTH || seen.has(name)) return { t: 'unknown', why: `${name} calls itself or nests too deep`, at: fn.at };
    const scope = new Map<string, Value>();
    const inner = new Set([...seen, name]);
    const base = fn.body.find((s) => !(s.toks.length === 1 && s.toks[0]!.k === 'str'))?.indent ?? 0;
    for (const s of fn.body) {
      if (s.indent > base) continue;
      const t = s.toks;
      if (t[0]?.v === 'return') return this.expr(t, 1, scope, depth, inner).value;
      if (['if', 'for', 'while', 'with', 'try', 'elif', 'else', 'except', 'finally'].includes(t[0]?.v ?? '')) {
        const list = this.skipped.get(name) ?? [];
        list.push({ start: t[0]!.start, end: t[t.length - 1]!.end });
        this.skipped.set(name, list);
        continue;
      }
      const eq = t.findIndex((x) => x.v === '=');
      if (eq < 1 || t[0]!.k !== 'name') continue;
      const target = t.slice(0, eq);
      const value = this.expr(t, eq + 1, scope, depth, inner).value;
      // `name = …`, `name: T = …`, or `name.a.b = …` (an attribute of a call value).
      if (target.length === 1 || target[1]?.v === ':') { scope.set(target[0]!.v, value); continue; }
      if (!target.every((x, j) => (j % 2 === 0 ? x.k === 'name' : x.v === '.'))) continue;
      let obj = scope.get(target[0]!.v);
      for (let j = 2; j < target.length - 1 && obj?.t === 'call'; j += 2) {
        const key = target[j]!.v;
        let next = obj.fields.get(key)?.value;
        if (next?.t !== 'call') {
          next = { t: 'call', callee: key, args: [], fields: new Map(), at: { start: target[j]!.start, end: target[j]!.end } };
          obj.fields.set(key, { value: next, key: { start: target[j]!.start, end: target[j]!.end }, at: next.at });
        }
        obj = next;
      }
      const last = target[target.length - 1]!;
      if (obj?.t === 'call') obj.fields.set(last.v, { value, key: { start: last.start, end: last.end }, at: value.at });
    }
    return { t: 'unknown', why: `${name} returns nothing ShardLens can read`, at: fn.at };
  }

  /** Parses and evaluates an expression from token `i`; returns the value and the index after it. */
  private expr(t: readonly Tok[], i: number, scope: Map<string, Value>, depth: number, seen: ReadonlySet<string>): { value: Value; next: number } {
    const r = this.sum(t, i, scope, depth, seen);
    // A conditional expression or a comparison is not followed.
    if (t[r.next] && ['if', 'and', 'or', 'in', 'not', 'is', '==', '!=', '<', '>', '<=', '>='].includes(t[r.next]!.v)) {
      let j = r.next, d = 0;
      while (j < t.length && !(d === 0 && [',', ')', ']', '}'].includes(t[j]!.v))) { if ('([{'.includes(t[j]!.v)) d++; if (')]}'.includes(t[j]!.v)) d--; j++; }
      return { value: { t: 'unknown', why: 'a conditional expression', at: { start: t[i]!.start, end: t[j - 1]!.end } }, next: j };
    }
    return r;
  }

  private sum(t: readonly Tok[], i: number, scope: Map<string, Value>, depth: number, seen: ReadonlySet<string>): { value: Value; next: number } {
    let l = this.product(t, i, scope, depth, seen);
    while (t[l.next] && (t[l.next]!.v === '+' || t[l.next]!.v === '-')) {
      const op = t[l.next]!.v;
      const r = this.product(t, l.next + 1, scope, depth, seen);
      l = { value: arith(op, l.value, r.value), next: r.next };
    }
    return l;
  }

  private product(t: readonly Tok[], i: number, scope: Map<string, Value>, depth: number, seen: ReadonlySet<string>): { value: Value; next: number } {
    let l = this.unary(t, i, scope, depth, seen);
    while (t[l.next] && ['*', '/', '//', '%', '**'].includes(t[l.next]!.v)) {
      const op = t[l.next]!.v;
      const r = this.unary(t, l.next + 1, scope, depth, seen);
      l = { value: arith(op, l.value, r.value), next: r.next };
    }
    return l;
  }

  private unary(t: readonly Tok[], i: number, scope: Map<string, Value>, depth: number, seen: ReadonlySet<string>): { value: Value; next: number } {
    if (t[i]?.v === '-' || t[i]?.v === '+') {
      const r = this.unary(t, i + 1, scope, depth, seen);
      const v = r.value;
      return { value: v.t === 'num' ? { ...v, v: t[i]!.v === '-' ? -v.v : v.v, at: { start: t[i]!.start, end: v.at.end } } : v, next: r.next };
    }
    return this.postfix(t, i, scope, depth, seen);
  }

  private postfix(t: readonly Tok[], i: number, scope: Map<string, Value>, depth: number, seen: ReadonlySet<string>): { value: Value; next: number } {
    const tok = t[i];
    if (!tok) return { value: { t: 'unknown', why: 'an incomplete expression', at: { start: t[t.length - 1]?.end ?? 0, end: t[t.length - 1]?.end ?? 0 } }, next: i };
    let j = i + 1;
    let value: Value;
    let dotted: string | undefined;
    if (tok.k === 'num') {
      const n = Number(tok.v.replace(/_/g, ''));
      value = Number.isFinite(n) ? { t: 'num', v: n, at: span(tok) } : { t: 'unknown', why: `the number ${tok.v}`, at: span(tok) };
    } else if (tok.k === 'str') {
      let s = tok.v, e = tok.end;
      while (t[j]?.k === 'str') { s += t[j]!.v; e = t[j]!.end; j++; }
      value = { t: 'str', v: s, at: { start: tok.start, end: e } };
    } else if (tok.k === 'name') {
      if (tok.v === 'True' || tok.v === 'False') value = { t: 'bool', v: tok.v === 'True', at: span(tok) };
      else if (tok.v === 'None') value = { t: 'none', at: span(tok) };
      else if (tok.v === 'lambda') return this.skip(t, i, 'a lambda');
      else {
        dotted = tok.v;
        while (t[j]?.v === '.' && t[j + 1]?.k === 'name') { dotted += `.${t[j + 1]!.v}`; j += 2; }
        value = this.lookup(dotted, scope, { start: tok.start, end: t[j - 1]!.end });
      }
    } else if (tok.v === '(') {
      const inner = this.expr(t, i + 1, scope, depth, seen);
      if (t[inner.next]?.v === ')') { value = inner.value; j = inner.next + 1; } else return this.skip(t, i, 'a tuple');
    } else if (tok.v === '[') {
      const items: Value[] = [];
      j = i + 1;
      while (j < t.length && t[j]!.v !== ']') {
        const r = this.expr(t, j, scope, depth, seen);
        items.push(r.value);
        j = r.next;
        if (t[j]?.v === 'for') return this.skip(t, i, 'a comprehension');
        if (t[j]?.v === ',') j++;
        else if (t[j]?.v !== ']') return this.skip(t, i, 'a list ShardLens cannot read');
      }
      value = { t: 'list', items, at: { start: tok.start, end: t[j]?.end ?? tok.end } };
      j++;
    } else return this.skip(t, i, `"${tok.v}"`);
    // Calls and attributes of the value.
    while (t[j]?.v === '(' || (t[j]?.v === '.' && t[j + 1]?.k === 'name') || t[j]?.v === '[') {
      if (t[j]!.v === '[') return this.skip(t, i, 'an index');
      if (t[j]!.v === '.') {
        const key = t[j + 1]!.v;
        value = value.t === 'call' && value.fields.has(key) ? value.fields.get(key)!.value : { t: 'unknown', why: `the attribute ${key}`, at: { start: tok.start, end: t[j + 1]!.end } };
        dotted = undefined;
        j += 2;
        continue;
      }
      const call = this.call(t, j, dotted ?? (value.t === 'call' ? value.callee : '?'), scope, depth, seen, tok.start);
      value = call.value;
      dotted = undefined;
      j = call.next;
    }
    return { value, next: j };
  }

  /** A call from its `(`: a function of this module without arguments is followed; anything else is kept as a call. */
  private call(t: readonly Tok[], open: number, callee: string, scope: Map<string, Value>, depth: number, seen: ReadonlySet<string>, start: number): { value: Value; next: number } {
    const args: Value[] = [];
    const fields = new Map<string, Field>();
    let j = open + 1;
    while (j < t.length && t[j]!.v !== ')') {
      if (t[j]!.v === '*' || t[j]!.v === '**') {
        const r = this.expr(t, j + 1, scope, depth, seen);
        args.push({ t: 'unknown', why: 'unpacked arguments', at: r.value.at });
        j = r.next;
      } else if (t[j]!.k === 'name' && t[j + 1]?.v === '=') {
        const r = this.expr(t, j + 2, scope, depth, seen);
        fields.set(t[j]!.v, { value: r.value, key: span(t[j]!), at: r.value.at });
        j = r.next;
      } else {
        const r = this.expr(t, j, scope, depth, seen);
        args.push(r.value);
        j = r.next;
      }
      if (t[j]?.v === ',') j++;
      else if (t[j]?.v !== ')') {
        // Something this reading does not parse: skip to the call's own closing bracket, keeping what came before.
        let d = 0;
        while (j < t.length && !(d === 0 && t[j]!.v === ')')) { if (t[j]!.k === 'op' && '([{'.includes(t[j]!.v)) d++; else if (t[j]!.k === 'op' && ')]}'.includes(t[j]!.v)) d--; j++; }
        args.push({ t: 'unknown', why: 'arguments ShardLens cannot read', at: { start, end: t[Math.min(j, t.length - 1)]!.end } });
      }
    }
    const at = { start, end: t[j]?.end ?? t[t.length - 1]!.end };
    const next = j + 1;
    if (callee === 'cast' && args.length === 2) return { value: args[1]!, next };
    if (this.functions.has(callee) && !args.length && !fields.size) {
      const v = this.returnOf(callee, depth + 1, seen);
      return { value: v ? copy(v) : { t: 'unknown', why: callee, at }, next };
    }
    return { value: { t: 'call', callee, args, fields, at }, next };
  }

  private lookup(name: string, scope: Map<string, Value>, at: Span): Value {
    const head = name.split('.')[0]!;
    let v = scope.get(head);
    if (!v) {
      const g = this.globals.get(head);
      if (g && name === head) {
        const eq = g.toks.findIndex((x) => x.v === '=');
        const r = this.expr(g.toks, eq + 1, new Map(), MAX_DEPTH, new Set());
        if (r.value.t !== 'unknown') return { ...r.value, at } as Value;
      }
      // A name or dotted path the module does not bind here: a callee (FullAC.Config) or an imported constant.
      return { t: 'unknown', why: name, at };
    }
    for (const key of name.split('.').slice(1)) v = v?.t === 'call' ? v.fields.get(key)?.value : undefined;
    return v ?? { t: 'unknown', why: name, at };
  }

  /** Skips an expression ShardLens does not read, up to the `,` or closing bracket at its level. */
  private skip(t: readonly Tok[], i: number, why: string): { value: Value; next: number } {
    let j = i, d = 0;
    while (j < t.length) {
      const v = t[j]!.v;
      if (t[j]!.k === 'op' && '([{'.includes(v)) d++;
      else if (t[j]!.k === 'op' && ')]}'.includes(v)) { if (d === 0) break; d--; }
      else if (d === 0 && t[j]!.k === 'op' && v === ',') break;
      j++;
    }
    return { value: { t: 'unknown', why, at: { start: t[i]?.start ?? 0, end: t[Math.max(i, j - 1)]?.end ?? 0 } }, next: Math.max(j, i + 1) };
  }
}

const span = (t: Tok): Span => ({ start: t.start, end: t.end });

function arith(op: string, a: Value, b: Value): Value {
  const at = { start: a.at.start, end: b.at.end };
  if (a.t !== 'num' || b.t !== 'num') return { t: 'unknown', why: 'arithmetic on values ShardLens cannot read', at };
  const v = op === '+' ? a.v + b.v : op === '-' ? a.v - b.v : op === '*' ? a.v * b.v : op === '/' ? a.v / b.v
    : op === '//' ? Math.floor(a.v / b.v) : op === '%' ? a.v % b.v : op === '**' ? a.v ** b.v : NaN;
  return Number.isFinite(v) ? { t: 'num', v, at } : { t: 'unknown', why: `${a.v} ${op} ${b.v}`, at };
}

/** A deep copy (a configuration derived from another is changed by attribute assignments, not its source). */
function copy(v: Value): Value {
  if (v.t === 'list') return { ...v, items: v.items.map(copy) };
  if (v.t === 'call') return { ...v, args: v.args.map(copy), fields: new Map([...v.fields].map(([k, f]) => [k, { ...f, value: copy(f.value) }])) };
  return v;
}
