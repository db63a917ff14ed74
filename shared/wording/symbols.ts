/**
 * What each formula symbol means, in words, so a hover defines every symbol its formulas use once ("where s = 2048
 * tokens, the sequence length (assumed)"). Symbols come from the memory terms' inputs (shared/plan/result.ts Term)
 * and from their formula texts (shared/memory/termInfo.ts). Pure.
 */
import type { InputSource } from '../plan/types';
import type { MemoryTermName, Term } from '../plan/result';

/** Meanings of the symbols, for every term unless a term overrides one below. */
export const SYMBOL_MEANINGS: Readonly<Record<string, string>> = {
  's': 'sequence length (tokens)',
  'b': 'micro batch (sequences per GPU per pass)',
  'h': 'hidden size',
  't': 'tensor-parallel degree',
  'a': 'attention heads',
  'd': 'head dimension',
  'KV': 'key/value heads',
  'f': 'FFN (MLP) size',
  'gated': 'gated MLP (SwiGLU: three projections)',
  'B': 'bytes per activation element',
  'SP': 'sequence parallelism on',
  'sp': 'sequence parallelism on',
  'flash': 'fused/flash attention',
  'recompute': 'activation recomputation',
  'cp': 'context-parallel degree',
  'V': 'vocabulary size',
  'L_stage': 'transformer layers on this pipeline stage',
  'm_inflight': 'micro-batches whose activations are alive at the peak',
  'Ψ_rank': 'parameters held by one GPU before ZeRO/FSDP sharding',
  'Ψ_train': 'parameters that receive gradients',
  'Ψ_stage': 'parameters of this pipeline stage',
  'Ψ_unit': 'largest unit gathered at once (a layer or the embedding)',
  'Ψ_linear': 'parameters of the linear layers',
  'b_param': 'bytes per parameter',
  'b_grad': 'bytes per gradient',
  'b_opt': 'optimizer-state bytes per parameter',
  'b_master': 'bytes per fp32 master weight',
  'N_shard': 'GPUs the states are sharded over',
  'offload': 'offload target',
  'style': 'sharding implementation',
  'bucket': 'communication bucket (elements)',
  'overlap': 'communication overlapped with compute',
  'C_ctx': 'CUDA context, cuBLAS workspace and NCCL buffers',
  'reshardAfterForward': 'FSDP frees gathered parameters after forward',
  'prefetch': 'ZeRO-3 prefetch bucket (elements)',
  'max_live': 'ZeRO-3 maximum live parameters',
  'reduce': 'reduce bucket (elements)',
  'allgather': 'all-gather bucket (elements)',
};

/** Terms that use a symbol in another sense. */
const TERM_OVERRIDES: Partial<Record<MemoryTermName, Readonly<Record<string, string>>>> = {
  fragmentation: {
    f: 'flat override (shardlens.overhead.fragmentation; 0 = modelled), as a fraction of allocated bytes',
    B_root: 'gathered bytes of FSDP2\'s root group (embedding, final norm, LM head) per rank',
    B_unit: 'gathered bytes of one FSDP2 block per rank', N: 'FSDP shard ranks', b: 'bytes per logit', n: 'logits per rank per micro-batch',
  },
};

/** The meaning of `symbol` in `term`. */
export function meaningOf(term: MemoryTermName, symbol: string): string | undefined {
  return TERM_OVERRIDES[term]?.[symbol] ?? SYMBOL_MEANINGS[symbol];
}

/** Where a value came from, in words users know ("set in this file", "assumed", "default"). */
export function sourceWords(s: Pick<InputSource, 'kind'>): string {
  switch (s.kind) {
    case 'explicit': return 'in this file';
    case 'referenced': return 'in the referenced file';
    case 'setting': return 'from your settings';
    case 'preset': return 'from the model preset';
    case 'derived': return 'derived';
    case 'default': return 'framework default';
    default: return 'assumed';
  }
}

/** Formula-only symbols (not among a term's inputs) as whole tokens of its formula text. */
function formulaSymbols(formula: string): string[] {
  return Object.keys(SYMBOL_MEANINGS).filter((sym) => new RegExp(`(^|[^\\w_Ψ])${sym.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^\\w_])`).test(formula));
}

/** One symbol of the "where" list. */
export interface SymbolLine {
  readonly symbol: string;
  readonly meaning: string;
  /** The value and where it came from, when the term has it as an input. */
  readonly value?: string;
  readonly source?: string;
}

/**
 * Every symbol the terms use, once, in order of first use: inputs first, then formula-only symbols. A symbol whose
 * value differs between terms (N_shard of parameters vs optimizer states) lists each value with its terms.
 */
export function symbolLines(terms: readonly (readonly [MemoryTermName, Term])[]): SymbolLine[] {
  const out = new Map<string, SymbolLine>();
  const values = new Map<string, Map<string, string[]>>();
  for (const [name, t] of terms) {
    for (const [sym, inp] of Object.entries(t.inputs)) {
      const v = String(inp.value);
      const byValue = values.get(sym) ?? new Map<string, string[]>();
      byValue.set(v, [...(byValue.get(v) ?? []), t.label.toLowerCase()]);
      values.set(sym, byValue);
      if (!out.has(sym)) out.set(sym, { symbol: sym, meaning: meaningOf(name, sym) ?? sym, value: v, source: sourceWords(inp.source) });
    }
  }
  for (const [sym, byValue] of values) {
    const line = out.get(sym);
    if (!line || byValue.size < 2) continue;
    out.set(sym, { ...line, value: [...byValue].map(([v, labels]) => `${v} for ${labels.join(' and ')}`).join(', ') });
  }
  const meanings = new Set([...out.values()].map((l) => l.meaning));
  for (const [name, t] of terms) {
    for (const sym of formulaSymbols(t.formula)) {
      const meaning = meaningOf(name, sym) ?? sym;
      // "SP" in a formula is the "sp" input: one line for one meaning.
      if (!out.has(sym) && !meanings.has(meaning)) { out.set(sym, { symbol: sym, meaning }); meanings.add(meaning); }
    }
  }
  return [...out.values()];
}
