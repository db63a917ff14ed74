/**
 * Command lines of launch scripts: where each evaluated word was written (the script or a file it sourced), the
 * `--flag value` arguments, and the invocation: which launcher (torchrun, deepspeed, accelerate, srun, ray, …) runs
 * which program (a script, a `-m` module, or a CLI such as `swift sft`) with which arguments.
 */
import type { TextRange } from '../../../shared/plan/types';
import type { LineIndex } from '../text';
import type { EvalCommand, Segment } from './evaluate';
import { slice, span, splitWords, unresolved, type SV } from './sval';

/** One `--flag [value]` argument; ranges point into `uri` when it is set (a sourced file), else the script. */
export interface FlagArg {
  readonly flag: string;
  /** Value as evaluated (undefined for a bare flag). */
  readonly value?: string;
  readonly flagRange?: TextRange;
  readonly valueRange?: TextRange;
  /** The value still holds an unexpanded variable. */
  readonly unresolved?: boolean;
  /** File the flag and its value were written in, when it is not the script itself (the value's, when they differ). */
  readonly uri?: string;
  /** The value is the script's fallback for this scheduler variable, which nothing set (`${SLURM_NNODES:-1}`). */
  readonly envDefault?: string;
  /** The key as the file writes it where that is not the flag (a Megatron YAML field, `num_layers`): facts carry it. */
  readonly spelled?: string;
  /** Words after the value up to the next flag: the rest of a list argument (`--target_modules q_proj v_proj`). */
  readonly more?: readonly string[];
}

/** Offsets of the evaluated text → ranges in the script or in the file it came from. */
export class SourceMap {
  constructor(
    private readonly main: LineIndex, private readonly segments: readonly Segment[], private readonly indexOf: (uri: string) => LineIndex | undefined,
    private readonly envDefaults: readonly { readonly start: number; readonly end: number; readonly name: string }[] = [],
  ) {}

  /**
   * The scheduler variable whose fallback the whole of `w` comes from (shell/expand.ts `envDefaults`), if any: a
   * fallback for a variable the script's own knobs use (`NGPU=${NGPU:-8}`) is the script's setting, not a guess.
   */
  envDefaultOf(w: SV): string | undefined {
    if (!w.o.length) return undefined;
    const d = this.envDefaults.find((x) => w.o.every((o) => o >= x.start && o < x.end));
    return d && SCHEDULER_VARIABLE.test(d.name) ? d.name : undefined;
  }

  /** Range and file of [a, b). */
  place(a: number, b: number): { range?: TextRange; uri?: string } {
    const seg = this.segments.find((s) => a >= s.start && a <= s.end);
    if (!seg) return { range: this.main.range(a, b) };
    const li = seg.uri ? this.indexOf(seg.uri) : undefined;
    return { range: li?.range(a - seg.start, Math.min(b, seg.end) - seg.start), uri: seg.uri };
  }

  /** Range and file of an evaluated word. */
  of(w: SV): { range?: TextRange; uri?: string } {
    const sp = span(w);
    return sp ? this.place(sp[0], sp[1]) : {};
  }
}

/** Flags that take no value in any dialect ShardLens reads (so the next word is not taken as their value). */
const SWITCHES = /^--(bf16$|fp16$|deepspeed$|gradient[_-]checkpointing|offload|adam[_-]offload|packing[_-]samples|flash[_-]attn|use[_-]|no[_-]|enable[_-]|disable[_-]|only[_-]optimize[_-]lora|colocate|load[_-]checkpoint|apply[_-]chat[_-]template|do[_-]train|do[_-]eval|overwrite|plot[_-]loss|trust[_-]remote[_-]code|lazy|normalize|sequence[_-]parallel$|swiglu|untie|group[_-]query|finetune|mock[_-]data|recompute[_-]activations|checkpoint[_-]activations|multi[_-]latent|qk[_-]layernorm|vllm[_-]enable|deepspeed[_-]enable|enforce|ds\.(packing|enable)|actor\.gradient|model\.gradient|train\.colocate|ckpt\.(save_hf|load_enable)|data\.apply|algo\.kl\.use|algo\.dynamic_filtering_enable|vllm\.(enforce|enable))/;

/**
 * Where a flag's value is: its range and file, with the flag's range when both are in one file. A value can come
 * from another file than its flag (`--seq_length $2` in a script another script runs with `--seq-length 1024`, or a
 * flag in a sourced file with its variable set here): the value's own place is where it is read and changed.
 */
function placed(flag: { range?: TextRange; uri?: string }, value: { range?: TextRange; uri?: string }): Pick<FlagArg, 'flagRange' | 'valueRange' | 'uri'> {
  if (!value.range || value.uri === flag.uri) return { flagRange: flag.range, valueRange: value.range, uri: flag.uri };
  return { valueRange: value.range, uri: value.uri };
}

/** `--flag value` pairs of a word list; `takesValue` decides for a flag followed by a non-flag word. */
export function toArgs(words: readonly SV[], map: SourceMap, takesValue: (flag: string, next: string) => boolean = defaultTakes): FlagArg[] {
  const args: FlagArg[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.t.startsWith('--') || w.t === '--') continue;
    const eq = w.t.indexOf('=');
    const where = map.of(w);
    if (eq > 0) {
      const v: SV = { t: w.t.slice(eq + 1), o: w.o.slice(eq + 1), e: w.e.slice(eq + 1), s: w.s.slice(eq + 1), u: w.u.slice(eq + 1) };
      const f: SV = { t: w.t.slice(0, eq), o: w.o.slice(0, eq), e: w.e.slice(0, eq), s: [], u: [] };
      args.push({ flag: f.t, value: v.t, ...placed(map.of(f), map.of(v)), unresolved: unresolved(v), ...envOf(map, v) });
      continue;
    }
    const next = words[i + 1];
    if (next && (!next.t.startsWith('--') || /^--?\d/.test(next.t)) && takesValue(w.t, next.t)) {
      const more: string[] = [];
      for (let j = i + 2; j < words.length && !words[j]!.t.startsWith('-'); j++) more.push(words[j]!.t);
      args.push({ flag: w.t, value: next.t, ...placed(where, map.of(next)), unresolved: unresolved(next), ...envOf(map, next), ...(more.length ? { more } : {}) });
      i++;
    } else args.push({ flag: w.t, flagRange: where.range, uri: where.uri });
  }
  return args;
}

/**
 * Variables a scheduler sets for each job (Slurm, PBS, LSF, Open MPI and PMI, Kubeflow's PyTorchJob `PET_*`, Volcano's
 * `MLP_*`): a script's fallback for one of them is a guess at what the scheduler will say. A knob with a default
 * (`NGPU=${NGPU:-8}`, `NNODES=${NNODES:-1}`) is the script's own setting.
 */
const SCHEDULER_VARIABLE = /^(SLURM|PBS|LSB|OMPI|PMI|PMIX|PET|MLP)_/;

/** `{ envDefault }` when a value is a scheduler variable's fallback, else nothing. */
function envOf(map: SourceMap, v: SV): { envDefault?: string } {
  const name = map.envDefaultOf(v);
  return name ? { envDefault: name } : {};
}

/**
 * Words a boolean argument takes as its value: HfArgumentParser's string_to_bool accepts yes/no, true/false, t/f,
 * y/n and 1/0 (transformers/hf_argparser.py), so `--gradient_checkpointing 0` is off.
 */
const BOOL_WORD = /^(true|false|yes|no|[tfyn01])$/i;

function defaultTakes(flag: string, next: string): boolean {
  // `--use_*` flags are switches, except InternVL's integer ones (`--use_llm_lora 16`, `--use_backbone_lora 0`).
  return !SWITCHES.test(flag) || BOOL_WORD.test(next) || (flag === '--deepspeed' && /\.json$|^zero/.test(next)) || (/^--use[_-]\w+$/.test(flag) && /^\d+$/.test(next));
}

export function base(w: string): string {
  return w.slice(w.lastIndexOf('/') + 1);
}

/** Flattens `bash -c "…"` / `sh -c "…"` wrappers into words. */
/** A launcher or trainer at the start of a command (what `bash -c "set -e; cd x; torchrun …"` runs for training). */
const LAUNCHES = /^\s*(\S+=\S*\s+)*(torchrun|deepspeed|accelerate|srun|python3?|uv\s+run|\$\w+|\S*\.sh)\b/;

/**
 * The command of a `bash -c` script that launches: a script of several commands (lines, `;`, `&&`) runs its setup
 * first (`set -euo pipefail`, `export …`, `cd …`), so the last command that starts a launcher is the one read.
 */
function launchPart(v: SV): SV {
  if (!/[\n;&]/.test(v.t)) return v;
  const cuts: number[] = [0];
  // A separator inside an expansion kept as written (`$(a && b)`) does not end a command.
  for (const m of v.t.matchAll(/\n|;|&&/g)) if (!v.u[m.index!]) cuts.push(m.index!, m.index! + m[0].length);
  cuts.push(v.t.length);
  let best: SV | undefined;
  for (let k = 0; k + 1 < cuts.length; k += 2) {
    const part = slice(v, cuts[k]!, cuts[k + 1]!);
    if (LAUNCHES.test(part.t)) best = part;
  }
  return best ?? v;
}

export function flatten(words: readonly SV[]): SV[] {
  const out: SV[] = [];
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (/^-\w*c$/.test(w.t) && i > 0 && ['bash', 'sh'].includes(base(words[i - 1]!.t)) && words[i + 1]) {
      out.push(...splitWords(launchPart(words[i + 1]!), true));
      i++;
    } else out.push(w);
  }
  return out;
}

/** A CLI that is itself the trainer: its name, subcommand and the words after them. */
const CLIS: Record<string, readonly string[]> = { swift: ['sft', 'pt', 'rlhf'], megatron: ['sft', 'pt', 'rlhf'], 'llamafactory-cli': ['train'], tune: ['run'], litgpt: ['finetune', 'pretrain', 'finetune_lora', 'finetune_full'] };

/** How one command runs training. */
export interface Invocation {
  readonly command: EvalCommand;
  /** Words before the program (launchers and their options). */
  readonly launcher: SV[];
  /** The script path, `-m` module, or CLI with its subcommand ("swift sft"). */
  readonly program: string;
  readonly programWord?: SV;
  /** Words after the program. */
  readonly args: SV[];
}

/** The program of a command (after `ray job submit … --`, srun/torchrun/deepspeed/accelerate options), if any. */
export function invocation(cmd: EvalCommand): Invocation | undefined {
  let words = flatten(cmd.words);
  const dashdash = words.findIndex((w, i) => w.t === '--' && words.slice(0, i).some((x) => x.t === 'submit' || base(x.t) === 'ray'));
  if (dashdash >= 0) words = words.slice(dashdash + 1);
  for (let i = 0; i < words.length; i++) {
    const t = words[i]!.t;
    const name = base(t);
    const sub = CLIS[name];
    if (sub && words[i + 1] && sub.includes(words[i + 1]!.t)) {
      return { command: cmd, launcher: words.slice(0, i), program: `${name} ${words[i + 1]!.t}`, programWord: words[i], args: words.slice(i + 2) };
    }
    if ((t === '-m' || t === '--module') && i > 0 && words[i + 1] && !words[i + 1]!.t.startsWith('-') && !/^torch\.distributed\.(run|launch)$/.test(words[i + 1]!.t)) {
      return { command: cmd, launcher: words.slice(0, i), program: words[i + 1]!.t, programWord: words[i + 1], args: words.slice(i + 2) };
    }
    if (i > 0 && /\.py$/.test(t) && !t.startsWith('-') && !/=/.test(t)) {
      return { command: cmd, launcher: words.slice(0, i), program: t, programWord: words[i], args: words.slice(i + 1) };
    }
  }
  return undefined;
}
