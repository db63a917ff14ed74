/**
 * Megatron-LM flags that decide how the layers split over pipeline stages (formats/megatron/args.ts reads them after
 * the key table): the embedding and loss counted as layers, Megatron-DeepSpeed's PipelineModule partition and
 * --pipeline-model-parallel-layout.
 */
import type { PlanPath } from '../../shared/plan/paths';
import type { FlagArg } from '../common/shell/commandLine';
import type { FactSink } from '../common/sink';
import { countedStageLayers } from '../../shared/plan/derived';
import { layersPerRank, parsePipelineLayout } from './layout';
import { gptPipeSplit } from './deepspeedPipe';
import { here, locOfArg } from './argLoc';

/**
 * --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split count the embedding and the loss as
 * one layer each (shared/plan/derived.ts countedStageLayers). Explicit --decoder-first/last-pipeline-num-layers win.
 */
export function accountForSplit(s: FactSink, seen: Map<string, FlagArg>): void {
  const emb = seen.get('--account-for-embedding-in-pipeline-split');
  const loss = seen.get('--account-for-loss-in-pipeline-split');
  if (!emb && !loss) return;
  const L = s.num('model.layers');
  const pp = s.num('parallel.pp') ?? 1;
  if (pp < 2) return;
  if (!L) {
    // The model is known later (a preset, a recipe's Hugging Face model): the split is made then (shared/plan/derive.ts).
    const later = 'Megatron: the embedding and the loss count as one layer each in the pipeline split';
    if (emb && !s.has('parallel.firstStageLayers')) s.derived('parallel.firstStageLess', 1, later, locOfArg(emb));
    if (loss && !s.has('parallel.lastStageLayers')) s.derived('parallel.lastStageLess', 1, later, locOfArg(loss));
    return;
  }
  const split = countedStageLayers(L, pp, emb ? 1 : 0, loss ? 1 : 0);
  const flag = (emb ?? loss) as FlagArg;
  if (!split) {
    s.diag('megatron-account-split', 'warning', `With the embedding/loss counted as layers, ${L} layers do not split evenly over ${pp} stages.`, flag.flagRange, ['parallel.pp', 'model.layers']);
    return;
  }
  const why = 'Megatron: (layers + embedding + loss) / PP per stage, less the embedding on the first and the loss on the last';
  if (emb && split.first !== undefined && !s.has('parallel.firstStageLayers')) s.derived('parallel.firstStageLayers', split.first, why, locOfArg(emb));
  if (loss && split.last !== undefined && !s.has('parallel.lastStageLayers')) s.derived('parallel.lastStageLayers', split.last, why, locOfArg(loss));
}

/** A Megatron-DeepSpeed launch: `--deepspeed` (DeepSpeed runs only with it; a JSON path alone is not enough) or `--zero-stage`. */
export function deepspeedLaunch(seen: Map<string, FlagArg>): boolean {
  return seen.has('--deepspeed') || seen.has('--zero-stage');
}

/**
 * What Megatron-DeepSpeed (`--deepspeed` or `--zero-stage`) does differently from Megatron-LM:
 * - core attention is the unfused path (fused scale-mask-softmax) unless a `--use-flash-attn*` flag is given
 *   (megatron/model/transformer.py `ParallelAttention`: `use_flash_attn` from the flags);
 * - the BigScience fork's `--pad-vocab-size-to N` is the padded vocabulary itself (no further rounding);
 * - with PP > 1 the DeepSpeed pipeline engine splits GPTModelPipe's layer specs by its partition method
 *   (formats/megatron/deepspeedPipe.ts), not Megatron's even split.
 */
export function megatronDeepSpeed(s: FactSink, seen: Map<string, FlagArg>): void {
  if (!deepspeedLaunch(seen)) return;
  const flash = ['--use-flash-attn', '--use-flash-attn-v1', '--use-flash-attn-v2', '--use-flash-attn-triton', '--attention-backend'].some((f) => seen.has(f));
  if (!flash) s.default('training.flashAttention', false, 'Megatron-DeepSpeed: unfused core attention with the fused scale-mask-softmax kernel (no --use-flash-attn)');
  // deepspeed.initialize wraps the model: DeepSpeed's optimizer wrappers keep the weights, gradients and master copies.
  s.default('training.regime', 'deepspeed', 'Megatron-DeepSpeed: DeepSpeed\'s engine and optimizer wrappers hold the weights and optimizer states');
  // Gradients accumulate in DeepSpeed's data_types.grad_accum_dtype, the model's dtype unless the JSON says otherwise.
  s.default('training.fp32GradAccum', false, 'DeepSpeed: gradients accumulate in the model dtype (data_types.grad_accum_dtype unset)');
  const half = ({ 'bf16-mixed': 'bf16', 'fp16-mixed': 'fp16' } as Record<string, string>)[String(s.value('training.precision'))];
  if (half) s.default('training.gradDtype', half, 'DeepSpeed: gradients in the model dtype and reduced in it (communication_data_type unset)');
  const pad = seen.get('--pad-vocab-size-to');
  if (pad && s.has('model.vocabSize')) s.derived('model.vocabPadMultiple', 1, 'BigScience Megatron-DeepSpeed: --pad-vocab-size-to is the padded vocabulary', locOfArg(pad));
  const L = s.num('model.layers'), pp = s.num('parallel.pp') ?? 1;
  const zero = seen.get('--zero-stage'), stage = s.num('parallel.sharding.stage') ?? 0;
  if (pp > 1 && !seen.has('--no-pipeline-parallel') && stage >= 2) {
    // deepspeed/runtime/pipe/engine.py PipelineEngine.__init__ asserts the ZeRO stage is below 2.
    s.diag('deepspeed-pipeline-zero', 'error', `DeepSpeed's pipeline engine refuses ZeRO stage ${stage} ("ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"): use --zero-stage 0 or 1 with PP ${pp}, or --no-pipeline-parallel.`,
      zero ? here(zero, zero.valueRange ?? zero.flagRange) : undefined, ['parallel.sharding.stage', 'parallel.pp']);
  }
  if (!L || pp < 2 || seen.has('--no-pipeline-parallel') || s.has('parallel.stageLayers')) return;
  const m = seen.get('--pp-partition-method');
  if (m?.unresolved) return;
  const method = m?.value ?? 'type:transformer';
  const split = gptPipeSplit(s, method, L, pp);
  const at = m ? here(m, m.valueRange ?? m.flagRange) : undefined;
  if ('error' in split) {
    s.diag('megatron-deepspeed-partition', 'info', `DeepSpeed's pipeline split is not known: ${split.error}; layers are spread evenly over the stages.`, at, ['parallel.stageLayers']);
    return;
  }
  if (split.layers.some((x) => x === 0)) {
    s.diag('megatron-deepspeed-partition', 'warning', `DeepSpeed's ${method} split leaves a pipeline stage without transformer layers (${split.layers.join(', ')}).`, at, ['parallel.pp', 'parallel.stageLayers']);
  }
  if (split.layers.every((x) => x === split.layers[0])) return;
  s.derived('parallel.stageLayers', split.layers, `DeepSpeed PipelineModule partition_method ${method} over GPTModelPipe's layer specs (Megatron-DeepSpeed)`, m ? locOfArg(m) : undefined);
}

/**
 * --pipeline-model-parallel-layout places every layer (formats/megatron/layout.ts): the decoder layers of each pipeline
 * rank become the stage split and the stage count over PP the virtual stages. Megatron rejects it together with the
 * uneven-split flags and with a virtual stage count that disagrees (megatron/training/arguments.py); the layout wins here.
 * Returns the MTP layers (m) each rank holds, for multiTokenPrediction, once the stages divide over the ranks.
 */
export function pipelineLayout(s: FactSink, seen: Map<string, FlagArg>): number[] | undefined {
  const a = seen.get('--pipeline-model-parallel-layout');
  if (!a || a.value === undefined || a.unresolved) return undefined;
  const at = here(a, a.valueRange ?? a.flagRange);
  const warn = (msg: string, paths: PlanPath[]) => s.diag('megatron-pipeline-layout', 'warning', `--pipeline-model-parallel-layout: ${msg}.`, at, paths);
  const parsed = parsePipelineLayout(a.value);
  if ('error' in parsed) { warn(parsed.error, ['parallel.stageLayers']); return undefined; }
  const pp = s.num('parallel.pp') ?? 1;
  const n = parsed.stages.length;
  if (n % pp !== 0) { warn(`its ${n} stages are not a multiple of the ${pp} pipeline ranks`, ['parallel.pp', 'parallel.stageLayers']); return undefined; }
  const mtp = layersPerRank(parsed, pp, 'm');
  const perRank = layersPerRank(parsed, pp);
  const total = perRank.reduce((x, y) => x + y, 0);
  const L = s.num('model.layers');
  if (L !== undefined && total !== L) { warn(`it places ${total} decoder layers, the model has ${L}`, ['model.layers', 'parallel.stageLayers']); return mtp; }
  const vpp = n / pp;
  const given = s.num('parallel.vpp');
  if (given !== undefined && given !== vpp && vpp > 1) warn(`its ${n} stages make ${vpp} virtual stages per rank, not ${given}`, ['parallel.vpp']);
  const loc = locOfArg(a);
  if (pp > 1) s.explicit('parallel.stageLayers', perRank, loc);
  if (vpp > 1) s.explicit('parallel.vpp', vpp, loc);
  for (const p of ['parallel.firstStageLayers', 'parallel.lastStageLayers'] as const) delete s.facts[p];
  return mtp;
}
