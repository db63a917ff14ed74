/**
 * Plain JavaScript copies of tree-sitter nodes. Reading a web-tree-sitter node crosses into wasm on every property,
 * so each top-level statement is copied once and reused while its text is unchanged (statementCache.ts). Offsets are
 * relative to the statement's start, so a copy stays valid when lines above move.
 */
import type { Node } from 'web-tree-sitter';

export interface SNode {
  readonly type: string;
  /** Start offset, relative to the top-level statement. */
  readonly s: number;
  /** End offset, relative to the top-level statement. */
  readonly e: number;
  readonly named: boolean;
  /** The node holds an expansion, so its value depends on variables. */
  readonly dyn: boolean;
  /** All children, anonymous tokens included, for the types in WITH_TOKENS; the named children for the others. */
  readonly kids: readonly SNode[];
  /** Named children only. */
  readonly nk: readonly SNode[];
  /** The `body` field of a redirected statement. */
  readonly body?: SNode;
  /** The `name` field of a subscript. */
  readonly name?: SNode;
  /** The `index` field of a subscript. */
  readonly index?: SNode;
}

/**
 * A top-level statement and its absolute start offset. `inert` statements cannot change a variable or add a command
 * the script reader looks at (see `isInert`), so the evaluator skips them.
 */
export interface Statement { readonly node: SNode; readonly base: number; readonly inert: boolean }

/**
 * The program names the script reader looks for (launchers and trainer CLIs, `read` for heredocs, `source`/`.`, `cd`
 * and `shift`, which change what later lines mean, and scripts run by path); any other literal command is inert.
 */
const WATCHED = /^(?:.*\/)?(?:torchrun|deepspeed|python3?|srun|sbatch|bash|sh|mpirun|accelerate|read|source|\.|cd|shift|swift|megatron|llamafactory-cli|tune|litgpt|ray|nohup|[^/\s]*\.(?:sh|bash))$/;

/**
 * True when evaluating `n` can neither assign a variable nor record a command that matters: it holds no
 * assignment, no heredoc, and only commands made of literal words (no expansion, no backslash) that name no
 * launcher and mention no `.py` file. `text` is the statement's own source text.
 */
export function isInert(n: SNode, text: string): boolean {
  switch (n.type) {
    case 'variable_assignment': case 'declaration_command': case 'heredoc_redirect': return false;
    case 'function_definition': case 'comment': return true;
    case 'command': {
      const name = n.nk.find((c) => c.type === 'command_name');
      const t = text.slice(n.s, n.e);
      return !!name && !n.dyn && !t.includes('\\') && !t.includes('.py') && !WATCHED.test(text.slice(name.s, name.e));
    }
    case 'redirected_statement': return !n.nk.some((c) => c.type === 'heredoc_redirect') && (!n.body || isInert(n.body, text));
    default: return n.nk.every((c) => isInert(c, text));
  }
}

/** Deeper nodes are cut off (the evaluator stops far earlier; this only bounds the copy's recursion). */
const MAX_DEPTH = 400;
const NO_KIDS: readonly SNode[] = [];
const NO_NODES: readonly (Node | null)[] = [];
/** The types whose anonymous tokens the evaluator reads (operators, concatenated pieces); others keep named children. */
const WITH_TOKENS = new Set(['concatenation', 'expansion', 'simple_expansion', 'unary_expression']);
/** Named token types of tree-sitter-bash (no children in its node-types.json); anonymous nodes are tokens too. */
const LEAVES = new Set(['word', 'ansi_c_string', 'comment', 'extglob_pattern', 'file_descriptor', 'heredoc_content', 'heredoc_end',
  'heredoc_start', 'raw_string', 'regex', 'special_variable_name', 'string_content', 'test_operator', 'variable_name']);
/** Node types whose value depends on variables or on running something. */
const DYNAMIC = new Set(['simple_expansion', 'expansion', 'command_substitution', 'arithmetic_expansion', 'process_substitution']);
/** Whether each grammar symbol is named (a property of the symbol, so asked once per symbol). */
const namedById: boolean[] = [];

/** The copy of `n`'s field `name` among the already copied `kids`. */
function fieldOf(n: Node, name: string, kids: readonly SNode[], base: number): SNode | undefined {
  const f = n.childForFieldName(name);
  return f ? kids.find((k) => k.s === f.startIndex - base && k.e === f.endIndex - base) : undefined;
}

/** Copies `n` and its subtree; offsets become relative to `base`. */
export function copy(n: Node, base: number, depth: number): SNode {
  const id = n.typeId;
  const type = n.tree.language.types[id] || 'ERROR';
  let named = namedById[id];
  if (named === undefined) named = namedById[id] = n.isNamed;
  let kids: SNode[] | readonly SNode[] = NO_KIDS;
  let nk: SNode[] | readonly SNode[] = NO_KIDS;
  let dyn = DYNAMIC.has(type);
  const all = WITH_TOKENS.has(type);
  const list = depth < MAX_DEPTH && named && !LEAVES.has(type) ? (all ? n.children : n.namedChildren) : NO_NODES;
  if (list.length) {
    const got: SNode[] = [];
    const nam: SNode[] = [];
    for (const k of list) {
      if (!k) continue;
      const c = copy(k, base, depth + 1);
      got.push(c);
      if (c.named) nam.push(c);
      if (c.dyn) dyn = true;
    }
    kids = all ? got : nam;
    nk = nam;
  }
  const redirected = type === 'redirected_statement';
  const sub = type === 'subscript';
  // A node ends where its last child ends (tree-sitter sizes a parent as the span of its children).
  const e = all && kids.length ? kids[kids.length - 1]!.e : n.endIndex - base;
  return {
    type, s: n.startIndex - base, e, named, dyn, kids, nk,
    body: redirected ? fieldOf(n, 'body', kids, base) : undefined,
    name: sub ? fieldOf(n, 'name', kids, base) : undefined,
    index: sub ? fieldOf(n, 'index', kids, base) : undefined,
  };
}
