/**
 * A small evaluator over a tree-sitter-bash tree (plain copies, plainTree.ts): assignments (strings, arrays, `+=`),
 * `${VAR:-default}`, `$(( ))` arithmetic, `${ARR[@]}`, quoting and word splitting, and heredocs. Commands are
 * returned with their expanded words; nothing is executed. Both branches of an `if` are read in order (the later
 * wins). For speed on long scripts, inert statements are skipped and literal values are expanded on first use.
 */
import type { SNode, Statement } from './plainTree';
import { append, computed, FIELD_SEP, lit, push, setBudget, splitWords, sv, unresolved, type SV } from './sval';

export interface Heredoc { readonly body: SV; readonly target?: string }
export interface EvalCommand { readonly words: SV[]; readonly heredoc?: Heredoc }

/** A literal assignment not expanded yet: most variables of a long script are never read. */
interface Deferred { readonly node: SNode; readonly base: number }

export class ShellEnv {
  private readonly vars = new Map<string, SV | Deferred>();
  readonly arrays = new Map<string, SV[]>();
  readonly commands: EvalCommand[] = [];
  private steps = 0;
  /** Absolute offset of the statement being evaluated (node offsets are relative to it). */
  private base = 0;

  constructor(private readonly src: string, private readonly env: Readonly<Record<string, string>> = {}) {
    setBudget(Math.max(200_000, src.length * 4));
  }

  /** Evaluates top-level statements in document order. */
  runAll(stmts: readonly Statement[]): void {
    for (const st of stmts) if (!st.inert) { this.base = st.base; this.run(st.node, 1); }
  }

  private at(n: SNode): number { return this.base + n.s; }
  private end(n: SNode): number { return this.base + n.e; }
  private text(n: SNode): string { return this.src.slice(this.base + n.s, this.base + n.e); }

  /** Walks one statement and what it contains; node offsets are relative to `this.base`. */
  run(node: SNode, depth = 0): void {
    if (depth > 200 || ++this.steps > 200_000) return;
    switch (node.type) {
      case 'variable_assignment': this.assign(node); return;
      case 'declaration_command': for (const c of node.nk) if (c.type === 'variable_assignment') this.assign(c); return;
      case 'command': this.command(node, undefined); return;
      case 'redirected_statement': {
        const body = node.body;
        const hd = node.nk.find((c) => c.type === 'heredoc_redirect');
        if (body?.type === 'command') this.command(body, hd ?? undefined);
        else if (body) this.run(body, depth + 1);
        return;
      }
      case 'function_definition': return;
      default:
        for (const c of node.nk) this.run(c, depth + 1);
    }
  }

  private assign(node: SNode): void {
    const kids = node.nk;
    const nameNode = kids[0];
    const name = nameNode && this.text(nameNode);
    const value = kids.length > 1 ? kids[kids.length - 1] : null;
    if (!name || !nameNode) return;
    const plus = this.src.charCodeAt(this.end(nameNode)) === 43; // "+="

    if (value?.type === 'array') {
      const items: SV[] = [];
      for (const c of value.nk) if (c.type !== 'comment') items.push(...this.fields(c));
      this.arrays.set(name, (plus ? [...(this.arrays.get(name) ?? []), ...items] : items).slice(0, 2_000));
      return;
    }
    if (value && !value.dyn && !plus) { this.vars.set(name, { node: value, base: this.base }); return; }
    const v = value ? this.expand(value, true) : sv();
    if (plus) { const old = this.getVar(name) ?? sv(); append(old, v); this.vars.set(name, old); }
    else this.vars.set(name, v);
  }

  private command(node: SNode, hd: SNode | undefined): void {
    const words: SV[] = [];
    for (const c of node.nk) {
      if (c.type === 'comment' || c.type === 'file_redirect' || c.type === 'variable_assignment') continue;
      if (c.type === 'command_name') { words.push(...this.fields(c.nk[0] ?? c)); continue; }
      words.push(...this.fields(c));
    }
    let heredoc: Heredoc | undefined;
    if (hd) {
      const body = hd.nk.find((c) => c.type === 'heredoc_body');
      const start = hd.nk.find((c) => c.type === 'heredoc_start');
      const quoted = !!start && /^['"]/.test(this.text(start));
      if (body) heredoc = { body: quoted ? lit(this.text(body), this.at(body)) : this.expandParts(body, true) };
      const first = words[0]?.t;
      if (first === 'read' && heredoc) {
        const v = words[words.length - 1]?.t;
        if (v && /^\w+$/.test(v)) this.vars.set(v, heredoc.body);
      }
    }
    this.commands.push({ words, heredoc });
  }

  /** Expands a node into words (unquoted expansions split; arrays give one word per element). */
  fields(node: SNode): SV[] {
    return splitWords(this.expand(node, false));
  }

  /** Expands a node to a value; `quoted` means inside double quotes (no splitting). */
  expand(node: SNode, quoted: boolean): SV {
    switch (node.type) {
      case 'word': case 'number': case 'command_name': return this.word(node);
      case 'raw_string': return lit(this.text(node).slice(1, -1), this.at(node) + 1);
      case 'ansi_c_string': return lit(this.text(node).slice(2, -1), this.at(node) + 2);
      case 'string': return this.expandParts(node, true, 1);
      case 'string_content': return this.stringContent(this.text(node), this.at(node));
      case 'concatenation': { const v = sv(); for (const c of node.kids) append(v, this.expand(c, quoted)); return v; }
      case 'simple_expansion': case 'expansion': return this.variable(node, quoted);
      case 'arithmetic_expansion': {
        const n = this.arith(node.nk[0] ?? null);
        return computed(n === undefined ? this.text(node) : String(n), this.at(node), this.end(node), n === undefined);
      }
      case 'command_substitution': return computed(this.text(node), this.at(node), this.end(node), true);
      default: return lit(this.text(node), this.at(node));
    }
  }

  /** Words: backslash escapes removed, a backslash-newline dropped. */
  private word(node: SNode): SV {
    const v = sv();
    const t = this.text(node);
    const at = this.at(node);
    if (!t.includes('\\')) return lit(t, at);
    for (let i = 0; i < t.length; i++) {
      if (t[i] === '\\' && i + 1 < t.length) { i++; if (t[i] === '\n') continue; }
      push(v, t[i]!, at + i, at + i + 1, false, false);
    }
    return v;
  }

  /** Double-quoted literal text: backslash-newline removed, \" \$ \\ unescaped. */
  private stringContent(t: string, start: number): SV {
    if (!t.includes('\\')) return lit(t, start);
    const v = sv();
    for (let i = 0; i < t.length; i++) {
      if (t[i] === '\\' && i + 1 < t.length && '\n"$`\\'.includes(t[i + 1]!)) { i++; if (t[i] === '\n') continue; }
      push(v, t[i]!, start + i, start + i + 1, false, false);
    }
    return v;
  }

  /** Expands a string or heredoc body: named children expanded, the gaps between them taken literally. */
  expandParts(node: SNode, quoted: boolean, trim = 0): SV {
    const v = sv();
    let pos = this.at(node) + trim;
    const end = this.end(node) - trim;
    for (const c of node.nk) {
      const cs = this.at(c);
      if (cs < pos) continue;
      if (cs > pos) append(v, this.stringContent(this.src.slice(pos, cs), pos));
      append(v, c.type === 'string_content' || c.type === 'heredoc_content' ? this.stringContent(this.text(c), cs) : this.expand(c, quoted));
      pos = this.end(c);
    }
    if (end > pos) append(v, this.stringContent(this.src.slice(pos, end), pos));
    return v;
  }

  private variable(node: SNode, quoted: boolean): SV {
    const sub = node.nk.find((c) => c.type === 'subscript');
    const split = !quoted;
    if (sub) {
      const nameNode = sub.name ?? sub.nk[0];
      const idxNode = sub.index ?? sub.nk[1];
      const name = nameNode ? this.text(nameNode) : '';
      const idx = idxNode ? this.text(idxNode) : '';
      const arr = this.arrays.get(name);
      if (!arr) return computed(this.text(node), this.at(node), this.end(node), true);
      if (idx === '@' || idx === '*') {
        const v = sv();
        arr.forEach((w, i) => { if (i) push(v, FIELD_SEP, this.at(node), this.end(node), true, false); append(v, w, split); });
        return v;
      }
      const n = Number(idx);
      const item = Number.isInteger(n) ? arr[n] : undefined;
      return item ? this.copy(item, split) : computed(this.text(node), this.at(node), this.end(node), true);
    }
    const nameNode = node.nk.find((c) => c.type === 'variable_name' || c.type === 'special_variable_name');
    const name = nameNode ? this.text(nameNode) : '';
    const op = node.kids.find((c) => !c.named && /^:?[-=+?]$/.test(c.type))?.type;
    const set = this.lookup(name);
    if (op && nameNode) {
      const rest = node.nk.filter((c) => c.s > nameNode.e);
      const dflt = sv();
      for (const c of rest) append(dflt, this.expand(c, true));
      const empty = !set || (op.startsWith(':') && set.t === '');
      if (op.endsWith('-') || op.endsWith('=')) {
        if (!empty && set) return this.copy(set, split);
        if (op.endsWith('=')) this.vars.set(name, dflt);
        return this.copy(dflt, split);
      }
      if (op.endsWith('+')) return empty ? sv() : this.copy(dflt, split);
    }
    if (node.type === 'expansion' && node.kids.some((c) => !c.named && ['#', '/', '//', '%', '%%', ':'].includes(c.type))) {
      return computed(this.text(node), this.at(node), this.end(node), true);
    }
    if (set) return this.copy(set, split);
    return computed(this.text(node), this.at(node), this.end(node), true);
  }

  /** The value of a scalar variable, expanding a deferred literal on first use. */
  getVar(name: string): SV | undefined {
    const v = this.vars.get(name);
    if (!v || !('node' in v)) return v;
    const saved = this.base;
    this.base = v.base;
    const out = this.expand(v.node, true);
    this.base = saved;
    this.vars.set(name, out);
    return out;
  }

  /** Every scalar variable with its value, in assignment order. */
  varEntries(): [string, SV][] {
    return [...this.vars.keys()].map((k) => [k, this.getVar(k) ?? sv()]);
  }

  private lookup(name: string): SV | undefined {
    const v = this.getVar(name);
    if (v) return v;
    const arr = this.arrays.get(name);
    if (arr?.[0]) return arr[0];
    const e = this.env[name];
    return e === undefined ? undefined : computed(e, 0, 0);
  }

  private copy(v: SV, split: boolean): SV {
    const out = sv();
    append(out, v, split);
    return out;
  }

  /** Integer arithmetic of `$(( ))`; undefined when a variable is unknown. */
  arith(n: SNode | null, depth = 0): number | undefined {
    if (!n || depth > 50) return undefined;
    switch (n.type) {
      case 'number': { const x = Number(this.text(n)); return Number.isFinite(x) ? x : undefined; }
      case 'variable_name': case 'word': {
        const t = this.text(n);
        if (/^\d+$/.test(t)) return Number(t);
        const v = this.lookup(t);
        if (!v || unresolved(v)) return undefined;
        const x = Number(v.t.trim());
        return Number.isFinite(x) ? x : undefined;
      }
      case 'simple_expansion': case 'expansion': {
        const v = this.variable(n, true);
        if (unresolved(v)) return undefined;
        const x = Number(v.t.trim());
        return Number.isFinite(x) ? x : undefined;
      }
      case 'parenthesized_expression': return this.arith(n.nk[0] ?? null, depth + 1);
      case 'unary_expression': {
        const x = this.arith(n.nk[0] ?? null, depth + 1);
        const op = n.kids[0]?.type;
        return x === undefined ? undefined : op === '-' ? -x : op === '!' ? Number(!x) : x;
      }
      case 'binary_expression': {
        const [left, right] = n.nk;
        if (!left || !right) return undefined;
        const a = this.arith(left, depth + 1);
        const b = this.arith(right, depth + 1);
        const op = this.src.slice(this.end(left), this.at(right)).trim();
        if (a === undefined || b === undefined) return undefined;
        const r = ({ '+': a + b, '-': a - b, '*': a * b, '/': b ? Math.trunc(a / b) : NaN, '%': b ? a % b : NaN, '**': a ** b,
          '<': Number(a < b), '>': Number(a > b), '<=': Number(a <= b), '>=': Number(a >= b), '==': Number(a === b), '!=': Number(a !== b) } as Record<string, number>)[op ?? ''];
        return r === undefined || !Number.isFinite(r) ? undefined : r;
      }
      default: return undefined;
    }
  }
}
