/**
 * The few command substitutions a launch script uses to find its own files, read without running anything:
 * `$(pwd)`, `$(dirname "${BASH_SOURCE[0]}")`, `$(cd "$DIR/.." && pwd)`, `$(realpath X)` give a path relative to the
 * script's folder ("." for the folder itself), `$(expr 16 / $N)` is integer arithmetic, and
 * `$(echo "$ARGS" | tr '\n' ' ' | sed 's/  \+/ /g')` is the echoed text (filters that only change whitespace leave
 * the words as they are). Anything else stays unresolved.
 */
import type { SNode } from './plainTree';
import { append, lit, unresolved, type SV } from './sval';

export interface SubstEnv {
  expand(node: SNode, quoted: boolean): SV;
  text(node: SNode): string;
}

const SELF_DIR = /\bdirname\b[^)]*(BASH_SOURCE|\$0\b|\$\{0\})/;

/** Words of a simple command: its name and arguments. */
function words(cmd: SNode): SNode[] {
  const out: SNode[] = [];
  for (const k of cmd.nk) {
    if (k.type === 'command_name') out.push(k.nk[0] ?? k);
    else if (k.type !== 'file_redirect' && k.type !== 'variable_assignment') out.push(k);
  }
  return out;
}

function known(env: SubstEnv, n: SNode | undefined): string | undefined {
  if (!n) return undefined;
  const v = env.expand(n, true);
  return unresolved(v) ? undefined : v.t;
}

function apply(a: number, op: string, b: number): number {
  return ({ '+': a + b, '-': a - b, '*': a * b, '/': b ? Math.trunc(a / b) : NaN, '%': b ? a % b : NaN } as Record<string, number>)[op] ?? NaN;
}

/** `expr A op B op C …` (integer arithmetic; `*` `/` `%` before `+` `-`, left to right). */
function expr(env: SubstEnv, args: SNode[]): string | undefined {
  const vals = args.map((a) => known(env, a));
  if (vals.length < 3 || vals.length % 2 === 0 || vals.some((v) => v === undefined)) return undefined;
  const nums: number[] = [Number(vals[0])];
  const ops: string[] = [];
  for (let i = 1; i < vals.length; i += 2) {
    const op = vals[i]!;
    const b = Number(vals[i + 1]);
    if (['*', '/', '%'].includes(op)) nums[nums.length - 1] = apply(nums[nums.length - 1]!, op, b);
    else if (op === '+' || op === '-') { ops.push(op); nums.push(b); }
    else return undefined;
  }
  let r = nums[0]!;
  for (let i = 0; i < ops.length; i++) r = apply(r, ops[i]!, nums[i + 1]!);
  return Number.isFinite(r) ? String(r) : undefined;
}

/** The value of a command substitution node, or undefined when it needs running. */
export function substitute(env: SubstEnv, node: SNode): string | undefined {
  const text = env.text(node);
  if (SELF_DIR.test(text) && !/\|/.test(text)) return '.';
  const inner = node.nk.filter((k) => k.type !== 'comment');
  if (inner.length !== 1) return undefined;
  const first = inner[0]!;
  // `cd DIR [&>/dev/null] && pwd`: DIR.
  if (first.type === 'list') {
    const parts = first.nk.map((k) => (k.type === 'redirected_statement' && k.body ? k.body : k));
    const last = parts[parts.length - 1];
    if (parts.length === 2 && last?.type === 'command' && last.nk.length === 1 && env.text(last).trim() === 'pwd' && parts[0]!.type === 'command') {
      const w = words(parts[0]!);
      if (w[0] && env.text(w[0]) === 'cd') return w.length === 2 ? known(env, w[1]) : undefined;
    }
    return undefined;
  }
  const cmd = first.type === 'redirected_statement' && first.body ? first.body : first;
  if (cmd.type !== 'command') return undefined;
  const w = words(cmd);
  const name = w[0] ? env.text(w[0]) : '';
  if (name === 'pwd' && w.length === 1) return '.';
  if ((name === 'realpath' || name === 'readlink') && w.length >= 2) return known(env, w[w.length - 1]);
  if (name === 'expr') return expr(env, w.slice(1));
  // `dirname X` of a known path: its folder, as POSIX dirname gives it.
  if (name === 'dirname' && w.length === 2) {
    const p = known(env, w[1]);
    if (p === undefined) return undefined;
    const trimmed = p.replace(/\/+$/, '');
    const cut = trimmed.lastIndexOf('/');
    return cut < 0 ? '.' : cut === 0 ? '/' : trimmed.slice(0, cut);
  }
  return undefined;
}

/** A `tr` / `sed` / `xargs` filter that only changes whitespace (so the words it passes on are unchanged). */
function whitespaceFilter(env: SubstEnv, cmd: SNode): boolean {
  if (cmd.type !== 'command') return false;
  const w = words(cmd);
  const name = w[0] ? env.text(w[0]) : '';
  const args = w.slice(1).map((a) => known(env, a));
  if (args.some((a) => a === undefined)) return false;
  const blank = (a: string) => /^(?:\s|\\[ntr]|\[:space:\]|\[:blank:\])*$/.test(a);
  if (name === 'tr') return args.length >= 1 && args.every((a) => a === '-s' || a === '-d' || blank(a!));
  if (name === 'xargs') return args.length === 0;
  if (name === 'sed') {
    // s/<whitespace regex>/<spaces>/[g]
    return args.length === 1 && /^s(.)(?:\s|\\[ntrs]|\\?\+|\*|\[[ \t]*\]|\[:space:\])+\1 *\1g?$/.test(args[0]!);
  }
  return false;
}

/**
 * `$(echo WORDS | filters…)` where every filter only changes whitespace: the echoed words, newlines as spaces, each
 * character still pointing at where it was written. Undefined for anything else.
 */
export function echoed(env: SubstEnv, node: SNode): SV | undefined {
  const inner = node.nk.filter((k) => k.type !== 'comment');
  if (inner.length !== 1 || inner[0]!.type !== 'pipeline') return undefined;
  const cmds = inner[0]!.nk.filter((k) => k.type !== 'comment');
  const echo = cmds[0];
  if (!echo || echo.type !== 'command') return undefined;
  const w = words(echo);
  if (!w[0] || env.text(w[0]) !== 'echo' || cmds.length < 2 || !cmds.slice(1).every((c) => whitespaceFilter(env, c))) return undefined;
  const args = w.slice(1).filter((a) => !/^-[neE]+$/.test(env.text(a)));
  const out = lit('', 0);
  args.forEach((a, i) => {
    if (i) append(out, lit(' ', 0));
    append(out, env.expand(a, true));
  });
  out.t = out.t.replace(/[\n\t]/g, ' ');
  return out;
}
