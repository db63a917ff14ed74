/**
 * The search space each config format can express, so the planner only proposes layouts "Apply layout" can write.
 * Hugging Face trainers (DeepSpeed JSON under the HF Trainer, Accelerate, Axolotl, LLaMA-Factory) have no
 * pipeline parallelism and only whole-layer gradient checkpointing; Megatron-LM and torchtitan have every axis.
 */
import type { FormatId } from '../plan/facts';
import type { ShardingStyle } from '../plan/types';
import type { SearchSpace } from './types';

const HF_RECOMPUTE = ['none', 'full'] as const;

export function spaceForFormat(format: FormatId, style?: ShardingStyle): SearchSpace {
  switch (format) {
    // Megatron-DeepSpeed scripts (DeepSpeed ZeRO): 1F1B pipelines without virtual stages, whole-layer checkpointing.
    case 'megatron-script':
      return style === 'deepspeed' ? { vpp: [1], recompute: [...HF_RECOMPUTE] } : {};
    case 'deepspeed':
    case 'llamafactory':
      return { tp: [1], pp: [1], cp: [1], ep: [1], recompute: [...HF_RECOMPUTE] };
    case 'accelerate':
    case 'axolotl':
      return { pp: [1], ep: [1], recompute: [...HF_RECOMPUTE] };
    // torchtitan: FSDP2 only (without it torchtitan trains in fp32 under TP or PP, or under autocast, which its layouts
    // are not planned as; FSDP has no ZeRO-1), and the stages torchtitan itself builds.
    case 'torchtitan':
      return { zero: [2, 3], stageRule: 'torchtitan' };
    default:
      return {};
  }
}
