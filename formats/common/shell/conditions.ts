/**
 * Decides `if`/`elif`/`while` tests and `case` patterns when the values are known, so a script reads as it runs
 * without arguments: `if [ "$ZERO_STAGE" == "" ]; then ZERO_STAGE=3; fi` with ZERO_STAGE=$2 takes the branch,
 * `if [ ${MODEL_SIZE} == "1.7B" ]` picks one arm of an if/elif chain. Undecidable tests return undefined (the caller
 * then reads every branch in order, the later winning).
 */
import type { SNode } from './plainTree';
import { unresolved, type SV } from './sval';

/** What the test reader needs from the evaluator. */
export interface CondEnv {
  expand(node: SNode, quoted: boolean): SV;
  /** Source text between two sibling nodes (the operator of a binary test). */
  between(a: SNode, b: SNode): string;
  text(node: SNode): string;
}

function value(env: CondEnv, n: SNode): string | undefined {
  const v = env.expand(n, true);
  return unresolved(v) ? undefined : v.t;
}

/** An empty value that holds a script argument not given (`MODE=$1`, run without arguments). */
function emptyArgument(v: SV): boolean {
  return v.arg === true && v.t === '';
}

/**
 * True when a test compares a script argument that was not given with a word: `[ "$MODE" = "superoffload" ]` with
 * MODE=$1. Run without arguments it is false; whoever runs the script picks it (a test for emptiness, `[ -z "$1" ]`
 * or `== ""`, is not such a choice).
 */
export function argumentChoice(env: CondEnv, n: SNode, depth = 0): boolean {
  if (depth > 20) return false;
  if (n.type === 'test_command' || n.type === 'parenthesized_expression') return n.nk.length === 1 && argumentChoice(env, n.nk[0]!, depth + 1);
  if (n.type !== 'binary_expression') return false;
  const opNode = n.nk.find((k) => k.type === 'test_operator');
  const [l, r] = n.nk.filter((k) => k !== opNode);
  if (!l || !r || !['==', '=', '!='].includes(opNode ? env.text(opNode) : env.between(l, r))) return false;
  const a = env.expand(l, true);
  const b = env.expand(r, true);
  return (emptyArgument(a) && b.t !== '') || (emptyArgument(b) && a.t !== '');
}

/** True when a `case` subject is a script argument that was not given. */
export function argumentSubject(env: CondEnv, subject: SNode): boolean {
  return emptyArgument(env.expand(subject, true));
}

function numeric(a: string, b: string, op: string): boolean | undefined {
  const x = Number(a.trim());
  const y = Number(b.trim());
  if (a.trim() === '' || b.trim() === '' || !Number.isFinite(x) || !Number.isFinite(y)) return undefined;
  return ({ '-eq': x === y, '-ne': x !== y, '-gt': x > y, '-lt': x < y, '-ge': x >= y, '-le': x <= y } as Record<string, boolean>)[op];
}

/**
 * A shell glob (`*`, `?`, the other characters literal) as an anchored regular expression; undefined for a pattern
 * too long or with too many stars to match without long backtracking (a hostile file must not make the reader wait).
 */
export function globRegex(p: string): RegExp | undefined {
  if (p.length > 200 || (p.match(/\*/g)?.length ?? 0) > 4) return undefined;
  return new RegExp(`^${p.replace(/[.+^${}()|\\[\]]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 's');
}

/**
 * Whether `s` matches a shell glob (`case` pattern, `[[ == ]]` right side); undefined for patterns or subjects too
 * long to match safely.
 */
function globMatch(p: string, s: string): boolean | undefined {
  const re = s.length > 2000 ? undefined : globRegex(p);
  return re ? re.test(s) : undefined;
}

/** The truth of a test expression node, or undefined when a value is unknown. */
export function truth(env: CondEnv, n: SNode, depth = 0): boolean | undefined {
  if (depth > 20) return undefined;
  switch (n.type) {
    case 'test_command': case 'parenthesized_expression':
      return n.nk.length === 1 ? truth(env, n.nk[0]!, depth + 1) : undefined;
    case 'negated_command': case 'unary_expression': {
      const op = n.kids.find((k) => k.type === 'test_operator' || k.type === '!');
      const arg = n.nk.find((k) => k.type !== 'test_operator');
      if (!arg) return undefined;
      const opText = op ? env.text(op) : '!';
      if (opText === '!') { const t = truth(env, arg, depth + 1); return t === undefined ? undefined : !t; }
      const v = value(env, arg);
      if (opText === '-z') return v === undefined ? undefined : v === '';
      if (opText === '-n') return v === undefined ? undefined : v !== '';
      return undefined;
    }
    case 'binary_expression': {
      // `[[ $a -gt 1 ]]` names its operator as a test_operator child; `[ a == b ]` leaves it between the operands.
      const opNode = n.nk.find((k) => k.type === 'test_operator');
      const [l, r] = n.nk.filter((k) => k !== opNode);
      if (!l || !r) return undefined;
      const op = opNode ? env.text(opNode) : env.between(l, r);
      if (op === '&&' || op === '||') {
        const a = truth(env, l, depth + 1);
        const b = truth(env, r, depth + 1);
        if (op === '&&') return a === false || b === false ? false : a && b ? true : undefined;
        return a === true || b === true ? true : a === false && b === false ? false : undefined;
      }
      const a = value(env, l);
      const b = value(env, r);
      if (a === undefined || b === undefined) return undefined;
      if (op === '==' || op === '=') return r.type === 'string' || r.type === 'raw_string' ? a === b : globMatch(b, a);
      if (op === '!=') return a !== b;
      return numeric(a, b, op);
    }
    default: return undefined;
  }
}

/** Index of the `case_item` whose pattern matches `subject`, -1 when none does, undefined when unknown. */
export function caseArm(env: CondEnv, subject: SNode, items: readonly SNode[]): number | undefined {
  const s = value(env, subject);
  if (s === undefined) return undefined;
  for (let i = 0; i < items.length; i++) {
    const pats = items[i]!.nk.filter((k) => k.type === 'extglob_pattern' || k.type === 'word' || k.type === 'string' || k.type === 'raw_string' || k.type === 'concatenation');
    for (const p of pats) {
      const v = value(env, p);
      if (v === undefined) return undefined;
      const m = globMatch(v, s);
      if (m === undefined) return undefined;
      if (m) return i;
    }
  }
  return -1;
}
