/**
 * A small evaluator over a tree-sitter-bash tree: assignments (strings, arrays, `+=`), `${VAR:-default}`,
 * `$(( ))` arithmetic, `${ARR[@]}`, quoting and word splitting, and heredocs. Commands are returned with
 * their expanded words; nothing is executed. Both branches of an `if` are read in order (the later wins).
 */
import type { Node } from 'web-tree-sitter';
import { append, computed, FIELD_SEP, lit, push, setBudget, splitWords, sv, unresolved, type SV } from './sval';

export interface Heredoc { readonly body: SV; readonly target?: string }
export interface EvalCommand { readonly words: SV[]; readonly heredoc?: Heredoc; readonly node: Node }

export class ShellEnv {
  readonly vars = new Map<string, SV>();
  readonly arrays = new Map<string, SV[]>();
  readonly commands: EvalCommand[] = [];
  private steps = 0;

  constructor(private readonly src: string, private readonly env: Readonly<Record<string, string>> = {}) {
    setBudget(Math.max(200_000, src.length * 4));
  }

  /** Walks statements in document order. */
  run(node: Node, depth = 0): void {
    if (depth > 200 || ++this.steps > 200_000) return;
    switch (node.type) {
      case 'variable_assignment': this.assign(node); return;
      case 'declaration_command': for (const c of node.namedChildren) if (c?.type === 'variable_assignment') this.assign(c); return;
      case 'command': this.command(node, undefined); return;
      case 'redirected_statement': {
        const body = node.childForFieldName('body');
        const hd = node.namedChildren.find((c) => c?.type === 'heredoc_redirect');
        if (body?.type === 'command') this.command(body, hd ?? undefined);
        else if (body) this.run(body, depth + 1);
        return;
      }
      case 'function_definition': return;
      default:
        for (const c of node.namedChildren) if (c) this.run(c, depth + 1);
    }
  }

  private assign(node: Node): void {
    const kids = node.namedChildren;
    const nameNode = kids[0];
    const name = nameNode?.text;
    const value = kids.length > 1 ? kids[kids.length - 1] : null;
    if (!name || !nameNode) return;
    const plus = this.src.charCodeAt(nameNode.endIndex) === 43; // "+="

    if (value?.type === 'array') {
      const items: SV[] = [];
      for (const c of value.namedChildren) if (c && c.type !== 'comment') items.push(...this.fields(c));
      this.arrays.set(name, (plus ? [...(this.arrays.get(name) ?? []), ...items] : items).slice(0, 2_000));
      return;
    }
    const v = value ? this.expand(value, true) : sv();
    if (plus) { const old = this.vars.get(name) ?? sv(); append(old, v); this.vars.set(name, old); }
    else this.vars.set(name, v);
  }

  private command(node: Node, hd: Node | undefined): void {
    const words: SV[] = [];
    for (const c of node.namedChildren) {
      if (!c || c.type === 'comment' || c.type === 'file_redirect' || c.type === 'variable_assignment') continue;
      if (c.type === 'command_name') { words.push(...this.fields(c.namedChildren[0] ?? c)); continue; }
      words.push(...this.fields(c));
    }
    let heredoc: Heredoc | undefined;
    if (hd) {
      const body = hd.namedChildren.find((c) => c?.type === 'heredoc_body');
      const quoted = /^['"]/.test(hd.namedChildren.find((c) => c?.type === 'heredoc_start')?.text ?? '');
      if (body) heredoc = { body: quoted ? lit(body.text, body.startIndex) : this.expandParts(body, true) };
      const first = words[0]?.t;
      if (first === 'read' && heredoc) {
        const v = words[words.length - 1]?.t;
        if (v && /^\w+$/.test(v)) this.vars.set(v, heredoc.body);
      }
    }
    this.commands.push({ words, heredoc, node });
  }

  /** Expands a node into words (unquoted expansions split; arrays give one word per element). */
  fields(node: Node): SV[] {
    return splitWords(this.expand(node, false));
  }

  /** Expands a node to a value; `quoted` means inside double quotes (no splitting). */
  expand(node: Node, quoted: boolean): SV {
    switch (node.type) {
      case 'word': case 'number': case 'command_name': return this.word(node);
      case 'raw_string': return lit(node.text.slice(1, -1), node.startIndex + 1);
      case 'ansi_c_string': return lit(node.text.slice(2, -1), node.startIndex + 2);
      case 'string': return this.expandParts(node, true, 1);
      case 'string_content': return this.stringContent(node.text, node.startIndex);
      case 'concatenation': { const v = sv(); for (const c of node.children) if (c) append(v, this.expand(c, quoted)); return v; }
      case 'simple_expansion': case 'expansion': return this.variable(node, quoted);
      case 'arithmetic_expansion': {
        const n = this.arith(node.namedChildren[0] ?? null);
        return computed(n === undefined ? node.text : String(n), node.startIndex, node.endIndex, n === undefined);
      }
      case 'command_substitution': return computed(node.text, node.startIndex, node.endIndex, true);
      default: return lit(node.text, node.startIndex);
    }
  }

  /** Words: backslash escapes removed, a backslash-newline dropped. */
  private word(node: Node): SV {
    const v = sv();
    const t = node.text;
    for (let i = 0; i < t.length; i++) {
      if (t[i] === '\\' && i + 1 < t.length) { i++; if (t[i] === '\n') continue; }
      push(v, t[i]!, node.startIndex + i, node.startIndex + i + 1, false, false);
    }
    return v;
  }

  /** Double-quoted literal text: backslash-newline removed, \" \$ \\ unescaped. */
  private stringContent(t: string, start: number): SV {
    const v = sv();
    for (let i = 0; i < t.length; i++) {
      if (t[i] === '\\' && i + 1 < t.length && '\n"$`\\'.includes(t[i + 1]!)) { i++; if (t[i] === '\n') continue; }
      push(v, t[i]!, start + i, start + i + 1, false, false);
    }
    return v;
  }

  /** Expands a string or heredoc body: named children expanded, the gaps between them taken literally. */
  expandParts(node: Node, quoted: boolean, trim = 0): SV {
    const v = sv();
    let pos = node.startIndex + trim;
    const end = node.endIndex - trim;
    for (const c of node.namedChildren) {
      if (!c || c.startIndex < pos) continue;
      if (c.startIndex > pos) append(v, this.stringContent(this.src.slice(pos, c.startIndex), pos));
      append(v, c.type === 'string_content' || c.type === 'heredoc_content' ? this.stringContent(c.text, c.startIndex) : this.expand(c, quoted));
      pos = c.endIndex;
    }
    if (end > pos) append(v, this.stringContent(this.src.slice(pos, end), pos));
    return v;
  }

  private variable(node: Node, quoted: boolean): SV {
    const sub = node.namedChildren.find((c) => c?.type === 'subscript');
    const split = !quoted;
    if (sub) {
      const name = sub.childForFieldName('name')?.text ?? sub.namedChildren[0]?.text ?? '';
      const idx = sub.childForFieldName('index')?.text ?? sub.namedChildren[1]?.text ?? '';
      const arr = this.arrays.get(name);
      if (!arr) return computed(node.text, node.startIndex, node.endIndex, true);
      if (idx === '@' || idx === '*') {
        const v = sv();
        arr.forEach((w, i) => { if (i) push(v, FIELD_SEP, node.startIndex, node.endIndex, true, false); append(v, w, split); });
        return v;
      }
      const n = Number(idx);
      const item = Number.isInteger(n) ? arr[n] : undefined;
      return item ? this.copy(item, split) : computed(node.text, node.startIndex, node.endIndex, true);
    }
    const nameNode = node.namedChildren.find((c) => c?.type === 'variable_name' || c?.type === 'special_variable_name');
    const name = nameNode?.text ?? '';
    const op = node.children.find((c) => c && !c.isNamed && /^:?[-=+?]$/.test(c.type))?.type;
    const set = this.lookup(name);
    if (op && nameNode) {
      const rest = node.namedChildren.filter((c) => c && c.startIndex > nameNode.endIndex);
      const dflt = sv();
      for (const c of rest) if (c) append(dflt, this.expand(c, true));
      const empty = !set || (op.startsWith(':') && set.t === '');
      if (op.endsWith('-') || op.endsWith('=')) {
        if (!empty && set) return this.copy(set, split);
        if (op.endsWith('=')) this.vars.set(name, dflt);
        return this.copy(dflt, split);
      }
      if (op.endsWith('+')) return empty ? sv() : this.copy(dflt, split);
    }
    if (node.type === 'expansion' && node.children.some((c) => c && !c.isNamed && ['#', '/', '//', '%', '%%', ':'].includes(c.type))) {
      return computed(node.text, node.startIndex, node.endIndex, true);
    }
    if (set) return this.copy(set, split);
    return computed(node.text, node.startIndex, node.endIndex, true);
  }

  private lookup(name: string): SV | undefined {
    const v = this.vars.get(name);
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
  arith(n: Node | null, depth = 0): number | undefined {
    if (!n || depth > 50) return undefined;
    switch (n.type) {
      case 'number': { const x = Number(n.text); return Number.isFinite(x) ? x : undefined; }
      case 'variable_name': case 'word': {
        if (/^\d+$/.test(n.text)) return Number(n.text);
        const v = this.lookup(n.text);
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
      case 'parenthesized_expression': return this.arith(n.namedChildren[0] ?? null, depth + 1);
      case 'unary_expression': {
        const x = this.arith(n.namedChildren[0] ?? null, depth + 1);
        const op = n.children[0]?.type;
        return x === undefined ? undefined : op === '-' ? -x : op === '!' ? Number(!x) : x;
      }
      case 'binary_expression': {
        const [left, right] = n.namedChildren;
        if (!left || !right) return undefined;
        const a = this.arith(left, depth + 1);
        const b = this.arith(right, depth + 1);
        const op = this.src.slice(left.endIndex, right.startIndex).trim();
        if (a === undefined || b === undefined) return undefined;
        const r = ({ '+': a + b, '-': a - b, '*': a * b, '/': b ? Math.trunc(a / b) : NaN, '%': b ? a % b : NaN, '**': a ** b,
          '<': Number(a < b), '>': Number(a > b), '<=': Number(a <= b), '>=': Number(a >= b), '==': Number(a === b), '!=': Number(a !== b) } as Record<string, number>)[op ?? ''];
        return r === undefined || !Number.isFinite(r) ? undefined : r;
      }
      default: return undefined;
    }
  }
}
