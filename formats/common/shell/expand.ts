/**
 * Expansion of shell words for the script evaluator (evaluate.ts): quoting, `${VAR:-default}`, `${ARR[@]}`, `$(( ))`
 * arithmetic, the command substitutions substitution.ts understands, and word splitting. Values keep the offsets
 * of the characters they came from (sval.ts).
 */
import type { SNode } from './plainTree';
import { globRegex } from './conditions';
import { echoed, substitute } from './substitution';
import { append, computed, FIELD_SEP, lit, push, slice, splitWords, sv, unresolved, type SV } from './sval';
import { own } from '../../../shared/lookup';

/** A literal assignment not expanded yet: most variables of a long script are never read. */
export interface Deferred { readonly node: SNode; readonly base: number }

const POSITIONAL = /^[1-9@*]$/;
/** What `${BASH_SOURCE[0]}` stands for: a file in the script's folder (shell/substitution.ts reads `dirname` of it as "."). */
const SELF_PATH = './$BASH_SOURCE';

export class Expander {
  protected readonly vars = new Map<string, SV | Deferred>();
  readonly arrays = new Map<string, SV[]>();
  /** Absolute offset of the statement being evaluated (node offsets are relative to it). */
  protected base = 0;
  /** Folder the script `cd`ed into, relative to its own folder. */
  cwd = '';

  /**
   * Where the script fell back to its own default for a variable it never sets and the environment did not give
   * (`${SLURM_NNODES:-1}`): the expansion's source span and the variable (commandLine.ts `SourceMap.envDefaultOf`).
   */
  readonly envDefaults: { readonly start: number; readonly end: number; readonly name: string }[] = [];

  /**
   * The positional parameters of a script another script runs with arguments (`bash ./run.sh --zero-stage 3`);
   * undefined for the script itself, which is read as it runs without arguments.
   */
  protected positional: SV[] | undefined;

  /** `$1`…`$9`, `$@` and `$*`: the arguments a calling script gave, or an empty value marked as an argument not given. */
  private argument(name: string): SV {
    const args = this.positional;
    if (!args) return { ...sv(), arg: true };
    if (name !== '@' && name !== '*') return args[Number(name) - 1] ?? sv();
    // Each argument stays one field (as "$@" keeps them), like the items of an array.
    const v = sv();
    args.forEach((w, i) => {
      if (i) push(v, FIELD_SEP, w.o[0] ?? 0, w.o[0] ?? 0, true, false);
      append(v, w);
    });
    return v;
  }

  /** `src`: the script's text, later followed by the text of every file it sourced (offsets index it). */
  constructor(protected src: string, private readonly env: Readonly<Record<string, string>> = {}) {}

  protected at(n: SNode): number { return this.base + n.s; }
  protected end(n: SNode): number { return this.base + n.e; }
  text(n: SNode): string { return this.src.slice(this.base + n.s, this.base + n.e); }
  between(a: SNode, b: SNode): string { return this.src.slice(this.end(a), this.at(b)).trim(); }

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
      case 'command_substitution': {
        const e = echoed(this, node);
        if (e) return e;
        const v = substitute(this, node);
        return computed(v ?? this.text(node), this.at(node), this.end(node), v === undefined);
      }
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
      // tree-sitter-bash puts a line continuation before `$X` inside a string into the expansion node (`" \\\n  $X"`):
      // that text is string content, not part of the variable.
      const lead = c.type === 'simple_expansion' || c.type === 'expansion' ? this.text(c).indexOf('$') : 0;
      if (lead > 0) append(v, this.stringContent(this.text(c).slice(0, lead), cs));
      append(v, c.type === 'string_content' || c.type === 'heredoc_content' ? this.stringContent(this.text(c), cs) : this.expand(c, quoted));
      pos = this.end(c);
    }
    if (end > pos) append(v, this.stringContent(this.src.slice(pos, end), pos));
    return v;
  }

  protected variable(node: SNode, quoted: boolean): SV {
    const sub = node.nk.find((c) => c.type === 'subscript');
    const split = !quoted;
    if (sub) {
      const nameNode = sub.name ?? sub.nk[0];
      const idxNode = sub.index ?? sub.nk[1];
      const name = nameNode ? this.text(nameNode) : '';
      const idx = idxNode ? this.text(idxNode) : '';
      const arr = this.arrays.get(name);
      // The script's own path, as far as its folder goes: `dirname` of it is the script's folder ("."), which is all
      // launch scripts use it for (`SCRIPT_PATH="${BASH_SOURCE[0]}"; source $(dirname $SCRIPT_PATH)/common.sh`).
      if (!arr && name === 'BASH_SOURCE' && (idx === '0' || idx === '@' || idx === '*')) return computed(SELF_PATH, this.at(node), this.end(node));
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
        if (!set && this.envDefaults.length < 256) this.envDefaults.push({ start: this.at(node), end: this.end(node), name });
        return this.copy(dflt, split);
      }
      if (op.endsWith('+')) return empty ? sv() : this.copy(dflt, split);
    }
    if (node.type === 'expansion' && node.kids.some((c) => !c.named && ['#', '##', '/', '//', '%', '%%', ':', ',', ',,', '^', '^^', '@'].includes(c.type))) {
      const trimmed = nameNode ? this.trimmed(node, nameNode, set) : undefined;
      return trimmed ? this.copy(trimmed, split) : computed(this.text(node), this.at(node), this.end(node), true);
    }
    if (set) return this.copy(set, split);
    return computed(this.text(node), this.at(node), this.end(node), true);
  }

  /**
   * `${X#pat}`, `${X##pat}`, `${X%pat}`, `${X%%pat}` with a literal glob: the value without its shortest or longest
   * matching prefix or suffix (bash(1), Parameter Expansion), as a slice that keeps the characters' offsets
   * (`--zero-stage=3` → `${1#*=}` is the "3" written after the `=`). Undefined for the other operators, a pattern
   * holding an expansion, an unknown value, or a value or pattern too long to match safely.
   */
  private trimmed(node: SNode, nameNode: SNode, value: SV | undefined): SV | undefined {
    const ops = node.kids.filter((c) => !c.named && c.s >= nameNode.e && c.type !== '}');
    const op = ops[0]?.type;
    const pat = node.nk.filter((c) => c.s > nameNode.e);
    if (ops.length !== 1 || !op || !['#', '##', '%', '%%'].includes(op) || pat.length !== 1 || !value || unresolved(value)) return undefined;
    if (pat[0]!.type !== 'regex' && pat[0]!.type !== 'word') return undefined;
    // A bracket expression ([a-z]) is not matched: it stays unresolved.
    const glob = this.text(pat[0]!);
    const re = /[[\]]/.test(glob) ? undefined : globRegex(glob);
    const t = value.t;
    if (!re || t.length > 2000) return undefined;
    const n = t.length;
    if (op.startsWith('#')) {
      // Prefix lengths tried shortest first for `#`, longest first for `##`.
      for (let k = 0; k <= n; k++) {
        const i = op === '#' ? k : n - k;
        if (re.test(t.slice(0, i))) return slice(value, i, n);
      }
    } else {
      for (let k = 0; k <= n; k++) {
        const i = op === '%' ? n - k : k;
        if (re.test(t.slice(i))) return slice(value, 0, i);
      }
    }
    return value;
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

  protected lookup(name: string): SV | undefined {
    if (POSITIONAL.test(name)) return this.argument(name);
    if (name === '#') return computed(String(this.positional?.length ?? 0), 0, 0);
    if (name === 'PWD') return computed(this.cwd || '.', 0, 0);
    const v = this.getVar(name);
    if (v) return v;
    const arr = this.arrays.get(name);
    if (arr?.[0]) return arr[0];
    const e = own(this.env, name);
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

