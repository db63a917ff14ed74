/**
 * A small evaluator over a tree-sitter-bash tree (plain copies, plainTree.ts): assignments (strings, arrays, `+=`),
 * `${VAR:-default}`, `$(( ))` arithmetic, `${ARR[@]}`, quoting and word splitting, heredocs, `source`d files, scripts
 * run with arguments, functions (evaluated where called) and `cd`. Commands are returned with their expanded words;
 * nothing is executed. The script is read as it runs without
 * arguments ($1… are empty): decidable `if`/`case` tests pick their branch (conditions.ts); undecidable ones read
 * every branch in order (the later wins). For speed on long scripts, inert statements are skipped and literal values
 * are expanded on first use.
 */
import { argumentChoice, argumentSubject, caseArm, truth } from './conditions';
import type { SNode, Statement } from './plainTree';
import { Expander, type Deferred } from './expand';
import { append, computed, lit, setBudget, slice, sv, unresolved, type SV } from './sval';

export interface Heredoc { readonly body: SV; readonly target?: string }
export interface EvalCommand {
  readonly words: SV[];
  readonly heredoc?: Heredoc;
  /** `NAME=value` prefixes of the command (`NPROC_PER_NODE=4 swift sft …`). */
  readonly env?: ReadonlyMap<string, SV>;
  /** Folder the script had `cd`ed into when the command ran (relative to the script's folder, "" for itself). */
  readonly cwd: string;
  /**
   * The commands of one redirected pipeline share its number and the file it writes (`sed … tmpl.json | sed … >
   * ds.json`): what a script generates from a template.
   */
  readonly pipe?: { readonly id: number; readonly output?: string };
}

/** A file read by `source`/`.`/`sbatch`: its URI, text and top-level statements. */
export interface Included { readonly uri: string; readonly text: string; readonly statements: readonly Statement[] }

export interface ShellHooks {
  /** Reads a sourced file named `target` (as expanded) from the script's `cwd`; undefined when it cannot be read. */
  include?(target: string, cwd: string): Included | undefined;
}

/** A stretch of the evaluated text that came from one file (the script, or a file it sourced). */
export interface Segment { readonly start: number; readonly end: number; readonly uri?: string }

const MAX_INCLUDES = 16;
/** Makes `m` hold exactly `entries` (the evaluator's maps are read-only fields, changed in place). */
function refill<K, V>(m: Map<K, V>, entries: Iterable<readonly [K, V]>): void {
  m.clear();
  for (const [k, v] of entries) m.set(k, v);
}

/** Arguments a called script gets, and passes of a loop over them, at most. */
const MAX_ARGUMENTS = 256;

/**
 * Index of the script a command runs: `bash [-x] x.sh …` / `sh x.sh …` (1, or after the shell's options) or
 * `./x.sh …` / `dir/x.sh …` (0), one further after `nohup`; undefined for anything else.
 */
function calledScript(words: readonly SV[]): number | undefined {
  // `nohup bash train.sh … &` runs it the same way.
  const at = words[0]?.t === 'nohup' ? 1 : 0;
  const name = words[at]?.t ?? '';
  if (/^(?:\S*\/)?(?:bash|sh)$/.test(name)) {
    let i = at + 1;
    while (i < words.length && /^-[a-z]+$/.test(words[i]!.t)) i++;
    return i < words.length && /\.(?:sh|bash)$/.test(words[i]!.t) ? i : undefined;
  }
  return /^\S*\/\S*\.(?:sh|bash)$/.test(name) ? at : undefined;
}


export class ShellEnv extends Expander {
  readonly commands: EvalCommand[] = [];
  /** Names `export`ed so far: the environment of a script this one runs (see call). */
  private readonly exported = new Set<string>();
  /** Functions defined so far: the body and the offset its nodes are relative to (see callFunction). */
  private readonly functions = new Map<string, { readonly body: SNode; readonly base: number }>();
  /** One frame per function call in progress: its `local` names with the values they had before. */
  private readonly frames: Map<string, SV | Deferred | undefined>[] = [];
  private calls = 0;
  private steps = 0;
  /** Where each sourced file's text starts in `src` (the script itself is not listed). */
  readonly segments: Segment[] = [];
  private includeDepth = 0;

  constructor(src: string, env: Readonly<Record<string, string>> = {}, private readonly hooks: ShellHooks = {}) {
    super(src, env);
    setBudget(Math.max(200_000, src.length * 4));
  }

  /** Evaluates top-level statements in document order. */
  runAll(stmts: readonly Statement[]): void {
    for (const st of stmts) if (this.live(st)) { this.base = st.base; this.run(st.node, 1); }
  }

  /**
   * Whether a top-level statement is evaluated: any that is not inert, a function definition (kept for its calls),
   * and a call of a function defined so far (a literal command is inert on its own).
   */
  private live(st: Statement): boolean {
    if (!st.inert || st.node.type === 'function_definition') return true;
    return this.functions.size > 0 && this.callsFunction(st.node, st.base, 0);
  }

  /** Whether a statement runs a function defined so far (`run 4`, `run 4 | tee log`, `run 4 > log`). */
  private callsFunction(n: SNode, base: number, depth: number): boolean {
    if (n.type === 'command_name') return this.functions.has(this.src.slice(base + n.s, base + n.e));
    return depth < 6 && n.nk.some((c) => this.callsFunction(c, base, depth + 1));
  }
  /** Walks one statement and what it contains; node offsets are relative to `this.base`. */
  run(node: SNode, depth = 0): void {
    if (depth > 200 || ++this.steps > 200_000) return;
    switch (node.type) {
      case 'variable_assignment': this.assign(node); return;
      case 'declaration_command': {
        // `export A=1 B`: the names are exported (a script it runs sees them, see call). `local A=1` in a function:
        // A is the function's own, given back its value when the function returns.
        const exporting = /^export\b/.test(this.text(node));
        const local = this.frames.length > 0 && /^local\b/.test(this.text(node)) ? this.frames[this.frames.length - 1] : undefined;
        for (const c of node.nk) {
          const declared = c.type === 'variable_assignment' ? c.nk[0] : c.type === 'variable_name' ? c : undefined;
          const name = declared && this.text(declared);
          if (local && name && !local.has(name)) local.set(name, this.vars.get(name));
          if (c.type === 'variable_assignment') this.assign(c);
          if (exporting && name && this.exported.size < 1_000) this.exported.add(name);
        }
        return;
      }
      case 'command': this.command(node, undefined); return;
      case 'redirected_statement': {
        const body = node.body;
        const hd = node.nk.find((c) => c.type === 'heredoc_redirect');
        const out = node.nk.find((c) => c.type === 'file_redirect');
        if (body?.type === 'command') this.command(body, hd ?? undefined, out);
        else if (body) this.redirectedPipeline(body, out, depth);
        return;
      }
      case 'pipeline': {
        // `a | b > f` parses as a pipeline whose last command carries the redirect: the pipeline writes f.
        const last = node.nk[node.nk.length - 1];
        const out = last?.type === 'redirected_statement' ? last.nk.find((c) => c.type === 'file_redirect') : undefined;
        if (out) { this.redirectedPipeline(node, out, depth, true); return; }
        for (const c of node.nk) this.run(c, depth + 1);
        return;
      }
      case 'function_definition': {
        // `name() { … }` / `function name { … }`: kept, and evaluated where it is called (see callFunction).
        const nameNode = node.nk.find((c) => c.type === 'word' || c.type === 'variable_name');
        const body = node.nk[node.nk.length - 1];
        if (nameNode && body && body !== nameNode && this.functions.size < 256) this.functions.set(this.text(nameNode), { body, base: this.base });
        return;
      }
      case 'if_statement': this.ifStatement(node, depth); return;
      case 'case_statement': {
        const items = node.nk.filter((c) => c.type === 'case_item');
        const subject = node.nk.find((c) => c.type !== 'case_item' && c.type !== 'comment');
        // A selector over an argument not given, with two or more choices and no default arm: the script needs the
        // argument, so every choice is read (the later winning) rather than none.
        const selector = !!subject && items.length >= 2 && argumentSubject(this, subject) && !items.some((i) => /^\s*\*\s*\)/.test(this.text(i)));
        const arm = subject && !selector ? caseArm(this, subject, items) : undefined;
        if (arm === undefined) for (const c of items) this.run(c, depth + 1);
        else if (arm >= 0) this.run(items[arm]!, depth + 1);
        return;
      }
      case 'for_statement': {
        // `for X in a b c; do …; done`: the body is read once, with X the first item (a loop over layouts reads the
        // first; a loop with no items runs nothing). A loop over the arguments a calling script gave ("$@", or
        // `for x; do`) reads each of them, as an argument parser does.
        const body = node.nk.find((c) => c.type === 'do_group');
        const name = node.nk[0]?.type === 'variable_name' ? this.text(node.nk[0]) : undefined;
        const items = node.nk.slice(1).filter((c) => c !== body && c.type !== 'comment');
        const overArgs = !!this.positional && (items.length === 0 || (items.length === 1 && /^"?\$(?:@|\*|\{@\}|\{\*\})"?$/.test(this.text(items[0]!))));
        const values = items.length === 0 ? [...(this.positional ?? [])] : items.flatMap((c) => this.fields(c));
        for (const v of overArgs ? values.slice(0, MAX_ARGUMENTS) : values.slice(0, 1)) {
          if (name) this.vars.set(name, v);
          if (body) this.run(body, depth + 1);
        }
        return;
      }
      case 'while_statement': {
        const cond = node.nk[0];
        if (cond && this.argumentLoop(cond)) { this.whileArguments(cond, node.nk.slice(1), depth); return; }
        if (cond && this.positional && cond.type === 'command' && /^getopts\s/.test(this.text(cond))) { this.getopts(cond, node.nk.slice(1), depth); return; }
        if (cond && this.condition(cond) === false) return;
        for (const c of node.nk.slice(1)) this.run(c, depth + 1);
        return;
      }
      default:
        for (const c of node.nk) this.run(c, depth + 1);
    }
  }

  /** A pipeline whose output goes to a file: its commands are marked with one number and that file. */
  private redirectedPipeline(body: SNode, out: SNode | undefined, depth: number, children = false): void {
    const from = this.commands.length;
    if (children) for (const c of body.nk) this.run(c, depth + 1);
    else this.run(body, depth + 1);
    const dest = out && /^>/.test(this.text(out)) ? out.nk[out.nk.length - 1] : undefined;
    const target = dest ? this.expand(dest, true) : undefined;
    // The file name may hold values set at run time (a GPU count): the pipeline still writes it.
    if (!target || this.commands.length === from) return;
    const pipe = { id: from, output: target.t };
    for (let i = from; i < this.commands.length; i++) this.commands[i] = { ...this.commands[i]!, pipe };
  }

  /** The truth of an `if`/`while` condition (a test, or a list of them), undefined when unknown. */
  private condition(n: SNode): boolean | undefined {
    if (n.type === 'compound_statement' && this.positional && /^\(\(\s*"?\$#"?\s*\)\)$/.test(this.text(n))) return this.positional.length > 0;
    return n.type === 'test_command' || n.type === 'negated_command' || n.type === 'compound_statement' ? truth(this, n) : undefined;
  }

  /** Whether a `while` loop walks the arguments a calling script gave (its test reads `$#` or `$1`). */
  private argumentLoop(cond: SNode): boolean {
    return !!this.positional && /\$(?:#|\{#\}|1\b|\{1[}:#%])/.test(this.text(cond));
  }

  /**
   * `while [[ $# -gt 0 ]]; do case $1 in --zero-stage) ZERO_STAGE=$2; shift 2 ;; … esac; done`: the body runs while
   * the test holds, at most once per argument. A pass that consumes nothing (an arm that would `exit`, which the
   * reading does not do) drops the argument it was on, so the rest are still read.
   */
  private whileArguments(cond: SNode, body: readonly SNode[], depth: number): void {
    for (let i = 0; i < MAX_ARGUMENTS && this.positional && this.condition(cond) === true; i++) {
      const before = this.positional.length;
      for (const c of body) this.run(c, depth + 1);
      if (this.positional && this.positional.length === before) this.positional = this.positional.slice(1);
    }
  }

  /** Runs the branch a decidable test picks; with an undecidable test, every branch in order. */
  private ifStatement(node: SNode, depth: number): void {
    const arms: { cond?: SNode; body: SNode[] }[] = [];
    let cur: { cond?: SNode; body: SNode[] } = { cond: node.nk[0], body: [] };
    arms.push(cur);
    for (const c of node.nk.slice(1)) {
      if (c.type === 'elif_clause') { cur = { cond: c.nk[0], body: c.nk.slice(1) }; arms.push(cur); }
      else if (c.type === 'else_clause') { cur = { body: [...c.nk] }; arms.push(cur); }
      else cur.body.push(c);
    }
    // `if [ "$MODE" = a ]; … elif [ "$MODE" = b ]; … fi` with MODE=$1 and no else: the script needs the argument;
    // every choice is read in order (the later winning) rather than none.
    const selector = arms.length >= 2 && arms.every((a) => a.cond && argumentChoice(this, a.cond));
    for (const arm of arms) {
      const t = selector ? undefined : arm.cond ? this.condition(arm.cond) : true;
      if (t === false) continue;
      for (const c of arm.body) this.run(c, depth + 1);
      if (t === true) return;
    }
  }

  /** `source FILE` / `. FILE`: the file's statements run here, its text appended to `src` for offsets. */
  private include(words: SV[]): void {
    const inc = this.readable(words[1]);
    if (!inc) return;
    // `source f.sh a b`: the file's $1… are a b while it runs, then this script's again (bash(1), source).
    const args = words.slice(2);
    const saved = this.positional;
    if (args.length) this.positional = args.slice(0, MAX_ARGUMENTS);
    this.runIncluded(inc);
    this.positional = saved;
  }

  /** The file a `source`d or run script names, read through the hook, within the depth and file budgets. */
  private readable(target: SV | undefined): Included | undefined {
    if (!target || unresolved(target) || !this.hooks.include || this.includeDepth >= 4 || this.segments.length >= MAX_INCLUDES) return undefined;
    return this.hooks.include(target.t, this.cwd);
  }

  /** Evaluates an included file's statements here, its text appended to `src` for offsets. */
  private runIncluded(inc: Included): void {
    const start = this.src.length + 1;
    this.src += '\n' + inc.text;
    this.segments.push({ start, end: this.src.length, uri: inc.uri });
    const saved = this.base;
    this.includeDepth++;
    for (const st of inc.statements) if (this.live({ ...st, base: start + st.base })) { this.base = start + st.base; this.run(st.node, 1); }
    this.includeDepth--;
    this.base = saved;
  }

  /**
   * `bash ./run.sh --zero-stage 3 …`, `sh x.sh …`, `./x.sh …`: the script runs in a child shell with these arguments
   * as `$1`… (without arguments it is read as any script is, as run without them). As bash(1) runs it, it sees the
   * environment: the variables this script exported and the command's `NAME=value` prefixes, not its other variables
   * or arrays; what it assigns, its `cd` and its arguments stay its own. Relative paths in it start from the
   * folder this script is in then. Its commands join this script's; its text is appended to `src` like a sourced file's.
   */
  private call(target: SV, args: SV[], env: ReadonlyMap<string, SV> | undefined): void {
    const inc = this.readable(target);
    if (!inc) return;
    const saved = { positional: this.positional, cwd: this.cwd, vars: [...this.vars], arrays: [...this.arrays], exported: [...this.exported], functions: [...this.functions] };
    // The child's environment; a child shell does not get this script's functions (bash exports one only with `export -f`).
    refill(this.vars, saved.exported.flatMap((k) => { const v = this.vars.get(k); return v ? [[k, v] as const] : []; }));
    for (const [k, v] of env ?? []) { this.vars.set(k, v); this.exported.add(k); }
    refill(this.arrays, []);
    refill(this.functions, []);
    this.positional = args.length ? args.slice(0, MAX_ARGUMENTS) : undefined;
    this.runIncluded(inc);
    this.positional = saved.positional;
    this.cwd = saved.cwd;
    refill(this.vars, saved.vars);
    refill(this.arrays, saved.arrays);
    refill(this.functions, saved.functions);
    this.exported.clear();
    for (const k of saved.exported) this.exported.add(k);
  }

  /**
   * A call of a function the script defined: its body runs here, in this shell (its assignments are global, as in
   * bash, except its `local` ones), with the call's arguments as `$1`…; a call without arguments from a script read
   * without arguments keeps them unknown. At most 8 calls deep and 256 calls in all.
   */
  private callFunction(name: string, args: SV[]): void {
    const fn = this.functions.get(name);
    if (!fn || this.frames.length >= 8 || ++this.calls > 256) return;
    const saved = { positional: this.positional, base: this.base };
    if (args.length || this.positional) this.positional = args.slice(0, MAX_ARGUMENTS);
    const frame = new Map<string, SV | Deferred | undefined>();
    this.frames.push(frame);
    this.base = fn.base;
    this.run(fn.body, 1);
    this.frames.pop();
    for (const [k, v] of frame) { if (v) this.vars.set(k, v); else this.vars.delete(k); }
    this.positional = saved.positional;
    this.base = saved.base;
  }

  /**
   * `while getopts "n:t:v" opt; do case $opt in n) NODES=$OPTARG ;; … esac; done` over the arguments a calling script
   * gave, as bash's getopts walks them: each `-x` (or `-xVALUE`, or `-x VALUE` when the letter takes a value, marked
   * by `:`) sets the name to the letter and OPTARG to the value; an unknown letter sets it to `?`; the walk stops at the
   * first word that is not an option or after `--`. OPTIND is left at the index of the first argument not read, for
   * `shift $((OPTIND-1))`.
   */
  private getopts(cond: SNode, body: readonly SNode[], depth: number): void {
    const words = cond.nk.slice(1).map((c) => this.expand(c, true));
    const spec = words[0]?.t ?? '';
    const name = words[1]?.t;
    const args = this.positional ?? [];
    if (!name || !/^[A-Za-z_]\w*$/.test(name) || unresolved(words[0]!)) return;
    let i = 0;
    for (let pass = 0; pass < MAX_ARGUMENTS && i < args.length; pass++) {
      const w = args[i]!;
      if (w.t === '--') { i++; break; }
      if (!/^-[^-]/.test(w.t)) break;
      const letter = w.t[1]!;
      const at = spec.indexOf(letter);
      const takes = at >= 0 && spec[at + 1] === ':';
      let value: SV | undefined;
      i++;
      if (takes && w.t.length > 2) value = slice(w, 2, w.t.length);
      else if (takes) value = args[i++];
      this.vars.set(name, at >= 0 && letter !== ':' ? computed(letter, w.o[1] ?? 0, w.e[1] ?? 0) : computed('?', w.o[1] ?? 0, w.e[1] ?? 0));
      if (value) this.vars.set('OPTARG', value);
      else this.vars.delete('OPTARG');
      for (const c of body) this.run(c, depth + 1);
    }
    this.vars.set('OPTIND', computed(String(i + 1), 0, 0));
  }

  /** `shift [n]`: drops the first n arguments a calling script gave. */
  private shift(words: SV[]): void {
    if (!this.positional) return;
    const n = words[1] ? Number(words[1].t) : 1;
    if (Number.isInteger(n) && n >= 0) this.positional = this.positional.slice(Math.min(n, this.positional.length));
  }

  /** `cd DIR`: later relative paths are read from DIR (relative to the script's folder). */
  private cd(words: SV[]): void {
    const dir = words[1];
    if (!dir || unresolved(dir) || dir.t.startsWith('-')) return;
    this.cwd = dir.t.startsWith('/') ? dir.t : this.cwd ? `${this.cwd}/${dir.t}` : dir.t;
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

  private command(node: SNode, hd: SNode | undefined, out?: SNode): void {
    const words: SV[] = [];
    let env: Map<string, SV> | undefined;
    let here: SV | undefined;
    for (const c of node.nk) {
      if (c.type === 'comment' || c.type === 'file_redirect') continue;
      if (c.type === 'herestring_redirect') { here = c.nk[0] ? this.expand(c.nk[0], true) : sv(); continue; }
      if (c.type === 'variable_assignment') {
        const name = c.nk[0] ? this.text(c.nk[0]) : '';
        if (name) (env ??= new Map()).set(name, c.nk.length > 1 ? this.expand(c.nk[c.nk.length - 1]!, true) : sv());
        continue;
      }
      if (c.type === 'command_name') { words.push(...this.fields(c.nk[0] ?? c)); continue; }
      words.push(...this.fields(c));
    }
    const name = words[0]?.t;
    if (name === 'read' && here) { this.readHere(words, here, env?.get('IFS') ?? this.getVar('IFS')); return; }
    if (name === 'source' || name === '.') { this.include(words); return; }
    if (name === 'cd') { this.cd(words); return; }
    if (name === 'shift') { this.shift(words); return; }
    if (name !== undefined && this.functions.has(name)) { this.callFunction(name, words.slice(1)); return; }
    let heredoc: Heredoc | undefined;
    if (hd) {
      const body = hd.nk.find((c) => c.type === 'heredoc_body');
      const start = hd.nk.find((c) => c.type === 'heredoc_start');
      const quoted = !!start && /^['"]/.test(this.text(start));
      // `cat > ds.json << EOF`: the file the heredoc is written to (its last word, as expanded).
      const dest = out && /^>/.test(this.text(out)) ? out.nk[out.nk.length - 1] : undefined;
      const target = dest ? this.expand(dest, true) : undefined;
      if (body) heredoc = { body: quoted ? lit(this.text(body), this.at(body)) : this.expandParts(body, true), ...(target && !unresolved(target) ? { target: target.t } : {}) };
      const first = words[0]?.t;
      if (first === 'read' && heredoc) {
        const v = words[words.length - 1]?.t;
        if (v && /^\w+$/.test(v)) this.vars.set(v, heredoc.body);
      }
    }
    this.commands.push({ words, heredoc, env, cwd: this.cwd });
    const called = calledScript(words);
    if (called !== undefined && !heredoc) this.call(words[called]!, words.slice(called + 1), env);
    // `sbatch [options] job.sh [arguments]`: the job script runs with the variables this script exported, and the
    // arguments after it as its $1….
    const job = name === 'sbatch' && !heredoc ? words.findIndex((w, i) => i > 0 && /\.(sh|slurm|sbatch)$/.test(w.t)) : -1;
    if (job > 0) this.include([words[0]!, ...words.slice(job)]);
  }

  /**
   * `read [-r] A B C <<< "$X"`: X split on IFS (whitespace by default), one field per name, the last name taking the
   * rest of the line (bash's read builtin). `-a ARR` fills an array.
   */
  private readHere(words: SV[], value: SV, ifs: SV | undefined): void {
    const names: string[] = [];
    let array: string | undefined;
    for (let i = 1; i < words.length; i++) {
      const w = words[i]!.t;
      if (w === '-a') { array = words[++i]?.t; continue; }
      if (w === '-d' || w === '-p' || w === '-n' || w === '-N' || w === '-t' || w === '-u') { i++; continue; }
      if (w.startsWith('-')) continue;
      if (/^[A-Za-z_]\w*$/.test(w)) names.push(w);
    }
    const seps = ifs === undefined ? ' \t\n' : ifs.t;
    const isSep = (ch: string) => seps.includes(ch);
    const white = (ch: string) => isSep(ch) && /\s/.test(ch);
    const line = value.t.indexOf('\n') >= 0 ? slice(value, 0, value.t.indexOf('\n')) : value;
    const fields: [number, number][] = [];
    let i = 0;
    while (i < line.t.length && white(line.t[i]!)) i++;
    let start = i;
    for (; i <= line.t.length; i++) {
      const ch = line.t[i];
      if (ch !== undefined && !isSep(ch)) continue;
      fields.push([start, i]);
      while (i + 1 < line.t.length && white(line.t[i + 1]!)) i++;
      start = i + 1;
    }
    if (array) { this.arrays.set(array, fields.map(([a, b]) => slice(line, a, b))); return; }
    names.forEach((n, k) => {
      const f = fields[k];
      const last = k === names.length - 1;
      const v = !f ? sv() : last ? slice(line, f[0], line.t.length) : slice(line, f[0], f[1]);
      this.vars.set(n, v);
    });
  }
}
