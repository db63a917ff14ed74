/**
 * What a pipeline stage holds of its in-flight micro-batches: how many (each engine's schedule, shared/memory/pipeline.ts
 * inFlightChunkPasses, over the virtual stages), and how much of each one's saved tensors stays on the GPU.
 */
import type { MemoryContext } from './context';
import { inFlightChunkPasses } from './pipeline';

/** Saved tensors torchtune's activation offloading keeps on the GPU in the forward (OffloadActivations max_fwd_stash_size, 5). */
export const ACTIVATION_STASH = 5;

/** Micro-batches whose activations a stage holds at its peak (fractional for interleaved schedules). */
export function stageInFlight(c: MemoryContext, stage: number): number {
  return inFlightChunkPasses(c.ppEngine, c.schedule, c.pp, c.vpp, c.m, stage) / (c.pp > 1 ? c.vpp : 1);
}

/**
 * The saved bytes of one in-flight micro-batch a stage of `layers` layers keeps on the GPU (`layerAct` saved in all):
 * with activation offloading and full recomputation (torchtune OffloadActivations) each layer's checkpointed input goes
 * to CPU memory, and the forward stash keeps the last ACTIVATION_STASH of them on the GPU until their copies finish.
 */
export function keptLayerActivations(c: MemoryContext, layers: number, layerAct: number): number {
  return c.actOffload && c.recompute === 'full' && layers > ACTIVATION_STASH ? (layerAct * ACTIVATION_STASH) / layers : layerAct;
}
