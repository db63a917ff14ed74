/**
 * The validation headline: what a run checked, and nothing more. The local TensorFlow.js run checks ShardLens's sharding
 * arithmetic on a scaled-down model; it never validates the full model's memory verdict, so its headline says so and
 * points at the runs that do (the exact probe, the PyTorch probe). Pure.
 */

/** The part of a validation result the headline reads. */
export interface HeadlineInput {
  readonly source: 'tfjs' | 'torch' | 'oracle';
  /** The exact probe's verdict: the model it built and whether every category matched the estimate. */
  readonly oracle?: { readonly model: string; readonly layers: number; readonly ok: boolean };
  readonly checks?: readonly { readonly passed: boolean | null }[];
  readonly scaledLayers?: number;
  readonly backend: string;
}

/**
 * "Sharding arithmetic verified on a 2-layer scaled model: 91/91", "Sharding arithmetic on a 2-layer scaled model:
 * 3 of 91 checks failed", "Exact probe of Llama-3.1-8B (32 layers, torch on fake tensors): every category matches the
 * estimate", or "PyTorch probe: measured bytes per rank (cuda over nccl)".
 */
export function validationHeadline(r: HeadlineInput): string {
  if (r.source === 'torch') return `PyTorch probe: measured bytes per rank (${r.backend})`;
  if (r.source === 'oracle') {
    const o = r.oracle;
    if (!o) return 'Exact probe (torch on fake tensors): no result';
    return `Exact probe of ${o.model} (${o.layers} layers, torch on fake tensors): ${o.ok ? 'every category matches the estimate' : 'differs from the estimate'}`;
  }
  const asserted = (r.checks ?? []).filter((c) => c.passed !== null);
  const passed = asserted.filter((c) => c.passed === true).length;
  const model = r.scaledLayers !== undefined ? `a ${r.scaledLayers}-layer scaled model` : 'a scaled model';
  if (!asserted.length) return `Sharding arithmetic on ${model}: no checks ran`;
  if (passed === asserted.length) return `Sharding arithmetic verified on ${model}: ${passed}/${asserted.length}`;
  return `Sharding arithmetic on ${model}: ${asserted.length - passed} of ${asserted.length} checks failed`;
}

/** What the local run does not show, and how to validate the real model instead (`exactProbe`: `shardlens probe --fake` exists). */
export function scaledRunScope(exactProbe: boolean): string {
  const how = exactProbe ? 'run the exact probe (shardlens probe --fake) or Run on PyTorch' : 'Run on PyTorch (the torchrun probe)';
  return 'This run checks how ShardLens shards parameters, gradients, optimizer states and traffic, on a model small enough for this machine. '
    + `It does not measure the full model: to validate the real model\u2019s memory, ${how}.`;
}
