/**
 * Liger-Kernel's kernels a plan runs in place of transformers' (TrainingSpec.ligerKernels), as the comma list of Liger's
 * own argument names (liger_kernel/transformers/monkey_patch.py `apply_liger_kernel_to_llama(rope, rms_norm, swiglu, …)`;
 * `swiglu` stands for the gated activation kernel of the model, GeGLU in Gemma's).
 */
import type { TrainingSpec } from './types';

export type LigerKernel = 'rms_norm' | 'rope' | 'swiglu';

/** Liger's kernels in the order the list keeps them. */
export const LIGER_KERNELS: readonly LigerKernel[] = ['rms_norm', 'rope', 'swiglu'];

/** The list text of a set of kernels (undefined when empty). */
export function ligerKernelsText(set: ReadonlySet<LigerKernel>): string | undefined {
  const list = LIGER_KERNELS.filter((k) => set.has(k));
  return list.length ? list.join(',') : undefined;
}

/** Whether a plan runs one of Liger's kernels. */
export function usesLigerKernel(t: Pick<TrainingSpec, 'ligerKernels'>, kernel: LigerKernel): boolean {
  return t.ligerKernels !== undefined && t.ligerKernels.split(',').includes(kernel);
}
