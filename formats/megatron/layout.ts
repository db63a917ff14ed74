/**
 * Megatron's `--pipeline-model-parallel-layout`: the layers of every virtual pipeline stage written out, e.g.
 * "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL" (Megatron-Bridge's Llama 3 70B on PP 8 · VPP 5). The grammar as
 * megatron/core/transformer/pipeline_parallel_layer_layout.py `parse_str_to_list` reads it: commas are cosmetic,
 * "(group)*n" repeats a group and then "x*n" a symbol, "|" separates stages; E is the embedding, L the loss, t a
 * decoder layer, m a multi-token-prediction layer. Stage i sits on pipeline rank i mod PP as its virtual stage ⌊i/PP⌋.
 */

/** A parsed layout: each stage's symbols, in order. */
export interface PipelineLayout {
  readonly stages: readonly string[];
}

/** Longest layout string read (a real one is under a few hundred characters) and most stages after unrolling. */
const MAX_TEXT = 4096;
const MAX_STAGES = 65_536;

/** Parses a layout string; an error names what is wrong with it. */
export function parsePipelineLayout(text: string): PipelineLayout | { readonly error: string } {
  if (text.length > MAX_TEXT) return { error: `the layout is longer than ${MAX_TEXT} characters` };
  let s = text.trim().replace(/^["']|["']$/g, '').replace(/,/g, '');
  let unrolled = 0;
  const repeat = (body: string, n: string): string => {
    const k = Number(n);
    unrolled += body.length * k;
    return unrolled > MAX_STAGES * 8 ? '' : body.repeat(k);
  };
  s = s.replace(/\(([^)]+)\)\*(\d+)/g, (_m, body: string, n: string) => repeat(body, n));
  s = s.replace(/(.)\*(\d+)/g, (_m, c: string, n: string) => repeat(c, n));
  if (unrolled > MAX_STAGES * 8) return { error: 'the layout unrolls to more stages than any cluster has' };
  const bad = s.match(/[^ELtm|]/);
  if (bad) return { error: `"${bad[0]}" is not a layer symbol (E embedding, L loss, t decoder layer, m MTP layer, | stage)` };
  const stages = s.split('|');
  if (stages.length > MAX_STAGES) return { error: 'the layout unrolls to more stages than any cluster has' };
  return { stages };
}

/**
 * Layers of one kind on each pipeline rank, summed over its virtual stages i ≡ rank (mod pp): decoder layers (t) by
 * default, or multi-token-prediction layers (m).
 */
export function layersPerRank(layout: PipelineLayout, pp: number, symbol: 't' | 'm' = 't'): number[] {
  const out = new Array<number>(pp).fill(0);
  layout.stages.forEach((st, i) => { out[i % pp] += [...st].filter((c) => c === symbol).length; });
  return out;
}
