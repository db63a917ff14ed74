/**
 * A LoRA fine-tune's adapters and frozen base (Hu et al. 2021; QLoRA, Dettmers et al. 2023): what the memory, traffic
 * and time models read of it. Plain, immutable, typed objects; re-exported by ./types.
 */
import type { Dtype } from './types';

/** The adapters of a LoRA fine-tune and the base they train beside. */
export interface LoraSpec {
  readonly rank: number;
  /** Projection names adapted: q, k, v, o, gate, up, down. */
  readonly targets: readonly ('q' | 'k' | 'v' | 'o' | 'gate' | 'up' | 'down')[];
  /** Dtype the frozen base weights are stored in (QLoRA: nf4). */
  readonly baseDtype: Dtype;
  /** Dropout probability on each adapter's input (PEFT, LitGPT, torchtune `lora_dropout`); 0 or absent: none. */
  readonly dropout?: number;
  /** The q, k and v adapters share one input dropout (LitGPT's fused LoRAQKVLinear) instead of one each (PEFT, torchtune). */
  readonly fusedQkv?: boolean;
  /** The frozen 4-bit base linears save their inputs for the backward (bitsandbytes MatMul4Bit); torchao's NF4 linear does not. */
  readonly baseSavesInputs?: boolean;
  /**
   * The output head is quantized too (Lightning's BitsandbytesPrecision replaces every `torch.nn.Linear` built in its
   * init context, LitGPT's head included); undefined = the head stays 16-bit (transformers `get_keys_to_not_convert`).
   */
  readonly headQuantized?: boolean;
  /**
   * Each 4-bit matmul dequantizes its weight in the dtype it was quantized from and casts that copy to the compute
   * dtype (Lightning quantizes from fp16, bitsandbytes.py `_Linear4bit.quantize`, and LitGPT computes in bf16): two
   * whole-weight copies for a moment instead of one; undefined = one.
   */
  readonly dequantCast?: boolean;
  /**
   * Modules trained in full beside the adapters: the input embedding and/or the output head (PEFT `modules_to_save`,
   * as Axolotl `lora_modules_to_save`, LLaMA-Factory `additional_target`, TRL `lora_modules_to_save` and ms-swift
   * `--modules_to_save` set it; DeepSpeed-Chat without `--only_optimize_lora`). They get gradients and optimizer states.
   */
  readonly fullModules?: readonly ('embed' | 'head')[];
  /**
   * The trained modules are copies beside their frozen originals (PEFT's ModulesToSaveWrapper deep-copies the module
   * and freezes the original, peft/utils/other.py), so the weights are held twice; false: the module itself trains.
   */
  readonly fullModulesCopied?: boolean;
  /**
   * DoRA (Liu et al. 2024, arXiv:2402.09353) through PEFT's `use_dora`: a trained magnitude per output of every adapted
   * projection, and a forward that keeps the base and adapter outputs for the magnitude's gradient (peft/tuners/lora/
   * dora.py DoraLinearLayer.forward).
   */
  readonly dora?: boolean;
}
