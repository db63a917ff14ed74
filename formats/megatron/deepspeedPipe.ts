/**
 * Pipeline stages of Megatron-DeepSpeed (`--deepspeed` with PP > 1 and without `--no-pipeline-parallel`): GPTModelPipe
 * hands DeepSpeed's PipelineModule a list of layer specs — a cast, the embedding, the transformer layers, the final
 * norm, the head (the embedding again when tied), a cast back — and a partition method, `type:transformer` unless the
 * BigScience fork's `--pp-partition-method` says otherwise (Megatron-DeepSpeed megatron/model/gpt_model.py
 * `GPTModelPipe`; DeepSpeed deepspeed/runtime/pipe/module.py `PipelineModule._partition_layers`).
 *
 * - `type:<names>`: weight 1 for each spec whose class name contains one of the names (case-insensitive), 0 otherwise;
 *   the parts balance that count.
 * - `parameters`: weight = trainable parameters of each spec on its rank.
 * - `uniform`: the spec list cut into equal numbers of specs, whatever they hold.
 *
 * Balancing is DeepSpeed's `partition_balanced` (deepspeed/runtime/utils.py): the contiguous split of the weights into
 * PP parts with the smallest spread (heaviest − lightest part), found by dynamic programming over (items, parts); among
 * equal spreads the latest split point wins. With fewer specs than parts it falls back to `partition_uniform`.
 */

import type { FactSink } from '../common/sink';

/** What the split needs from the launch line. */
export interface PipeSpecInput {
  readonly layers: number;
  readonly pp: number;
  readonly method: string;
  /** The head is the embedding's TiedLayerSpec (EmbeddingPipe) unless the embeddings are untied (LMHeadPipe). */
  readonly tied: boolean;
  readonly rmsnorm: boolean;
  /** Per-rank parameters of the embedding, one transformer layer, the final norm and an untied head (for `parameters`). */
  readonly params: { readonly embedding: number; readonly layer: number; readonly norm: number; readonly head: number };
}

/** One layer spec of GPTModelPipe's list: its class name (undefined for a plain function) and what it holds. */
interface Spec { readonly name?: string; readonly transformer: boolean; readonly params: number }

/** Above this much work (items² · parts) the split is not computed (a hostile layer count must not hang the reader). */
const MAX_WORK = 2e7;

/** GPTModelPipe's spec list for a model of `layers` transformer layers. */
function specList(o: PipeSpecInput): Spec[] {
  const specs: Spec[] = [{ transformer: false, params: 0 }, { name: 'EmbeddingPipe', transformer: false, params: o.params.embedding }];
  for (let i = 0; i < o.layers; i++) specs.push({ name: 'ParallelTransformerLayerPipe', transformer: true, params: o.params.layer });
  specs.push({ name: o.rmsnorm ? 'MixedFusedRMSNorm' : 'MixedFusedLayerNorm', transformer: false, params: o.params.norm });
  specs.push(o.tied ? { name: 'EmbeddingPipe', transformer: false, params: o.params.embedding } : { name: 'LMHeadPipe', transformer: false, params: o.params.head });
  specs.push({ transformer: false, params: 0 });
  return specs;
}

/** `partition_uniform`: part boundaries of n items in p parts, the first n mod p parts one item larger. */
export function partitionUniform(n: number, p: number): number[] {
  const out: number[] = [];
  if (n <= p) {
    for (let i = 0; i <= p; i++) out.push(Math.min(i, n));
    return out;
  }
  const chunk = Math.floor(n / p), extra = n - chunk * p;
  for (let i = 0; i <= p; i++) out.push(i * chunk + Math.min(i, extra));
  return out;
}

/**
 * `partition_balanced`: boundaries (p + 1 indices, 0 … n) of the contiguous split of `weights` into p parts with the
 * smallest spread between its heaviest and lightest part; ties keep the latest split point. Undefined when the work
 * exceeds MAX_WORK.
 */
export function partitionBalanced(weights: readonly number[], p: number): number[] | undefined {
  const n = weights.length;
  if (n <= p) return partitionUniform(n, p);
  if (n * n * p > MAX_WORK) return undefined;
  const prefix = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i] + weights[i];
  const W = p + 1;
  const hi = new Float64Array((n + 1) * W).fill(Infinity);
  const lo = new Float64Array((n + 1) * W).fill(Infinity);
  const cost = new Float64Array((n + 1) * W).fill(Infinity);
  const at = new Int32Array((n + 1) * W);
  hi[0] = 0;
  cost[0] = 0;
  for (let i = 1; i <= n; i++) {
    for (let j = 1; j <= Math.min(i, p); j++) {
      const cell = i * W + j;
      for (let k = 0; k < i; k++) {
        const part = prefix[i] - prefix[k];
        const prev = k * W + j - 1;
        const mx = Math.max(hi[prev], part), mn = Math.min(lo[prev], part);
        if (cost[cell] >= mx - mn) {
          cost[cell] = mx - mn;
          hi[cell] = mx;
          lo[cell] = mn;
          at[cell] = k;
        }
      }
    }
  }
  const bounds = [n];
  for (let j = p; j >= 1; j--) bounds.push(at[bounds[bounds.length - 1] * W + j]);
  return bounds.reverse();
}

/** The names of a `type:` method when they are plain words joined by `|` (anything else is not evaluated). */
function typeNames(method: string): string[] | undefined {
  const names = method.slice('type:'.length).split('|');
  return names.every((x) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(x)) ? names.map((x) => x.toLowerCase()) : undefined;
}

/**
 * Transformer layers of each pipeline stage as DeepSpeed splits GPTModelPipe, or why the split is not known (a method
 * ShardLens does not evaluate, a model too large to split here).
 */
export function deepspeedStageLayers(o: PipeSpecInput): { readonly layers: number[] } | { readonly error: string } {
  const method = o.method.trim().replace(/^["']|["']$/g, '');
  // GPTModelPipe's list has the layers and five more specs; a runaway layer count is refused before anything is built.
  const n = o.layers + 5;
  if (!(Number.isInteger(o.layers) && o.layers >= 0 && Number.isInteger(o.pp) && o.pp >= 1) || n * n * o.pp > MAX_WORK) {
    return { error: 'the model is too large to split here' };
  }
  const specs = specList(o);
  let bounds: number[] | undefined;
  if (method.toLowerCase() === 'uniform') bounds = partitionUniform(specs.length, o.pp);
  else if (method.toLowerCase() === 'parameters') bounds = partitionBalanced(specs.map((x) => x.params), o.pp);
  else if (method.toLowerCase().startsWith('type:')) {
    const names = typeNames(method);
    if (!names) return { error: `the partition method "${method}" is not a list of class names` };
    bounds = partitionBalanced(specs.map((x) => (x.name && names.some((n) => x.name!.toLowerCase().includes(n)) ? 1 : 0)), o.pp);
  } else return { error: `the partition method "${method}" is not one DeepSpeed knows (uniform, parameters, type:<names>)` };
  if (!bounds) return { error: 'the model is too large to split here' };
  const layers: number[] = [];
  for (let s = 0; s < o.pp; s++) {
    let n = 0;
    for (let i = bounds[s]; i < bounds[s + 1]; i++) if (specs[i].transformer) n++;
    layers.push(n);
  }
  return { layers };
}

/**
 * The split of a GPT model pipe (Megatron-DeepSpeed's GPTModelPipe, GPT-NeoX's GPT2ModelPipe: the same specs around the
 * layers) by `method`, from the model facts a reader has stated: the per-rank parameters of each spec, for the
 * `parameters` method (norms and biases are below its resolution), from the widths, heads and vocabulary.
 */
export function gptPipeSplit(s: FactSink, method: string, layers: number, pp: number): ReturnType<typeof deepspeedStageLayers> {
  const h = s.num('model.hiddenSize') ?? 0, tp = s.num('parallel.tp') ?? 1, V = s.num('model.vocabSize') ?? 0;
  const heads = s.num('model.heads') ?? 0, d = s.num('model.headDim') ?? (heads > 0 ? h / heads : 0), g = s.num('model.kvHeads') ?? heads;
  const f = s.num('model.ffnSize') ?? 4 * h, gated = s.value('model.gatedMlp') === true;
  const layer = (h * (heads * d + 2 * g * d) + heads * d * h + (gated ? 3 : 2) * h * f) / tp;
  return deepspeedStageLayers({
    layers, pp, method, tied: s.value('model.tiedEmbeddings') !== false, rmsnorm: s.value('model.norm') === 'rmsnorm',
    params: { embedding: (V * h) / tp, layer, norm: 2 * h, head: (V * h) / tp },
  });
}
