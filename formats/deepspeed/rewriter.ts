/**
 * DeepSpeed JSON: zero stage, micro batch, accumulation, train batch, optimizer offload and AutoTP degree, with
 * jsonc-parser `modify` so comments, key order and indentation stay as written.
 * Keys: DeepSpeed `deepspeed/runtime/config.py` and `runtime/zero/config.py` (see config-formats.md §1).
 */
import { applyEdits, modify, parse, type FormattingOptions, type JSONPath, type ParseError } from 'jsonc-parser';
import type { LayoutTarget, Rewrite } from '../common/edit/types';

/** The indentation the file already uses (first indented line), else two spaces. */
export function jsonFormatting(text: string): FormattingOptions {
  const m = /\n([ \t]+)\S/.exec(text);
  const indent = m?.[1] ?? '  ';
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  return indent.startsWith('\t') ? { insertSpaces: false, tabSize: 1, eol } : { insertSpaces: true, tabSize: indent.length, eol };
}

function get(obj: unknown, path: JSONPath): unknown {
  let cur = obj;
  for (const k of path) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string | number, unknown>)[k] : undefined;
  return cur;
}

/** Rewrites a DeepSpeed config for a layout; "auto" values are left for the HF Trainer/Accelerate to fill. */
export function rewriteDeepSpeed(text: string, t: LayoutTarget): Rewrite {
  const notes: string[] = [];
  const fmt = jsonFormatting(text);
  let out = text;
  const errors: ParseError[] = [];
  const original = parse(text, errors, { allowTrailingComma: true });
  if (errors.length || original === null || typeof original !== 'object' || Array.isArray(original)) {
    return { text, notes: ['The JSON does not parse (a template or a syntax error); nothing was changed.'] };
  }
  const set = (path: JSONPath, value: unknown, onlyIfPresent = false): void => {
    const cur = get(original, path);
    if (cur === value) return;
    if (cur === 'auto') {
      notes.push(`${path.join('.')} is "auto": set ${String(value)} where the trainer's value comes from.`);
      return;
    }
    if (onlyIfPresent && cur === undefined) return;
    out = applyEdits(out, modify(out, path, value, { formattingOptions: fmt }));
  };
  set(['zero_optimization', 'stage'], t.zero);
  set(['train_micro_batch_size_per_gpu'], t.microBatch);
  set(['gradient_accumulation_steps'], t.gradAccum);
  set(['train_batch_size'], t.microBatch * t.gradAccum * t.dp, true);
  const offloadNow = get(original, ['zero_optimization', 'offload_optimizer', 'device']);
  if (t.offload !== 'none' || (offloadNow !== undefined && offloadNow !== 'none')) {
    set(['zero_optimization', 'offload_optimizer', 'device'], t.offload);
  }
  const paramNow = get(original, ['zero_optimization', 'offload_param', 'device']);
  if (t.zero < 3 && paramNow !== undefined && paramNow !== 'none') set(['zero_optimization', 'offload_param', 'device'], 'none');
  if (t.tp > 1 || get(original, ['tensor_parallel', 'autotp_size']) !== undefined) set(['tensor_parallel', 'autotp_size'], t.tp);
  if (t.pp > 1) notes.push(`Pipeline parallelism (PP ${t.pp}) is set in code (PipelineModule(num_stages=${t.pp})), not in the DeepSpeed JSON.`);
  if (t.cp > 1) notes.push(`Context parallelism (CP ${t.cp}) has no DeepSpeed JSON key; use Megatron or torchtitan.`);
  if (t.recompute !== 'none') {
    notes.push(`Recomputation (${t.recompute}) is switched on by the trainer (gradient_checkpointing) or Megatron-DeepSpeed flags.`);
  }
  return { text: out, notes };
}
