/**
 * DeepSpeed's pipeline engine as the step-time model needs it (Megatron-DeepSpeed with --deepspeed and PP > 1,
 * GPT-NeoX; which plans run it: shared/memory/engine.ts `deepspeedPipeline`): how many transfers a stage waits for,
 * and how it moves activations under tensor parallelism.
 */
import type { Plan } from '../plan/types';
import { deepspeedPipeline } from '../memory/engine';
import { posInt } from './shape';

export { deepspeedPipeline };

/**
 * Transfers a stage of DeepSpeed's pipeline engine waits for in each pass of a micro-batch: the receive from and the
 * send to each neighbouring stage, 2 for middle stages and 1 for the first and the last (receive and send of the same
 * transfer are counted on both stages, which wait for it together).
 */
export function deepspeedPipelineTransfers(stage: number, p: number): number {
  if (p <= 1) return 0;
  return (stage > 0 ? 1 : 0) + (stage < p - 1 ? 1 : 0);
}

/**
 * Under tensor parallelism DeepSpeed's pipeline engine partitions what it sends (`pipe_partitioned` and
 * `grad_partitioned`, both true by default; deepspeed/runtime/pipe/engine.py `_exec_forward_pass` /
 * `_exec_backward_pass` with PartitionedTensor over the slice-parallel group): each TP rank sends 1/t of the activation
 * or gradient, and the receiving stage all-gathers the whole tensor over its TP group before using it.
 */
export function deepspeedPipePartitioned(plan: Plan): boolean {
  return deepspeedPipeline(plan) && posInt(plan.parallel.tp) > 1;
}
