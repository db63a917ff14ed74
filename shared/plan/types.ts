/**
 * The inputs of every estimate: plain, immutable, typed objects.
 * Units: counts are integers, bytes are bytes, seconds are seconds, bandwidths are bytes per second.
 * Every other module in `shared/` reads these types; nothing here depends on an editor, Node or the DOM.
 */
import type { PlanInput } from './derive';
import type { PlanPath } from './paths';
import type { ClusterProfile } from '../hardware/profile';
import type { ModelSpec } from './modelSpec';
import type { LoraSpec } from './loraSpec';

export type { AttnBias, LinearAttentionSpec, MlaSpec, ModelSpec, MoeSpec, NormKind, PositionKind } from './modelSpec';
export type { LoraSpec } from './loraSpec';

export type Precision = 'fp32' | 'fp16-mixed' | 'bf16-mixed' | 'bf16' | 'fp8-mixed';
export type Dtype = 'fp32' | 'bf16' | 'fp16' | 'fp8' | 'int8' | 'nf4';
export type OptimizerKind = 'adamw' | 'adam' | 'sgd' | 'sgd-momentum' | 'adafactor' | 'adam-8bit' | 'lion' | 'muon';
export type RecomputeKind = 'none' | 'selective' | 'full';

/**
 * The engine that runs the training step. It decides how a precision is kept in memory (master weights, fp32 main
 * grads, autocast) and how communication overlaps with compute, so the same `--bf16` costs different bytes per engine.
 * megatron: Megatron-LM, NeMo, Megatron-Bridge (megatron-core); deepspeed: the DeepSpeed engine (also under the HF
 * Trainer, Accelerate or Lightning); fsdp1: torch FSDP with FlatParameter; fsdp2: torch `fully_shard` (torchtitan,
 * torchtune, Accelerate fsdp_version 2); ddp: torch DDP with autocast (HF Trainer, Accelerate, Lightning without
 * sharding); nanotron: nanotron's own engine.
 */
export type EngineId = 'megatron' | 'deepspeed' | 'fsdp1' | 'fsdp2' | 'ddp' | 'nanotron';

/** FP8 training details; present when the precision is 'fp8-mixed'. */
export interface Fp8Spec {
  /**
   * Scaling recipe: 'tensorwise' (one scale per tensor, current scaling: torchao default, TE "current"),
   * 'delayed' (TE delayed scaling with an amax history; Megatron `--fp8-recipe delayed`), 'rowwise' (torchao rowwise),
   * 'blockwise' (128×128 / 1×128 blocks, DeepSeek-V3, TE blockwise), 'mxfp8' (32-element MX blocks, Blackwell).
   */
  readonly recipe: 'tensorwise' | 'delayed' | 'rowwise' | 'blockwise' | 'mxfp8';
  /** Weights are kept or gathered in FP8 (Megatron `--fp8-param-gather`, torchao `enable_fsdp_float8_all_gather`). */
  readonly paramGather: boolean;
}

/**
 * How the engine keeps weights, gradients and optimizer states (docs/engine-memory.md): 'amp' torch.autocast (fp32
 * weights and gradients, no master copy: HF Trainer/Accelerate DDP, Lightning *-mixed); 'fsdp2' fp32 shards gathered in
 * the MixedPrecisionPolicy's param dtype; 'megatron' 16-bit weights, main_grad buffer, fp32 master; 'deepspeed' 16-bit
 * weights, fp32 master and gradient partitions; 'bf16-true' everything bf16 (torchtune, LitGPT); 'fp32' everything fp32.
 */
export type PrecisionRegime = 'amp' | 'fsdp2' | 'megatron' | 'deepspeed' | 'bf16-true' | 'fp32';
/**
 * How the engine recomputes when `recompute` is not 'none': 'megatron' (full: layer inputs; selective: core attention),
 * 'block' (torch checkpoint of every block: torchtitan full, FSDP/Accelerate activation_checkpointing),
 * 'torchtitan-op' (selective op: mm outputs saved except every second, SDPA saved), 'torchtitan-layer' (every
 * `recomputeEvery`-th block checkpointed), 'hf' (Hugging Face gradient_checkpointing: each decoder layer's input).
 */
export type RecomputePolicy = 'megatron' | 'block' | 'torchtitan-op' | 'torchtitan-layer' | 'hf';
/**
 * Megatron-core's selective recomputation submodules (TransformerConfig.recompute_modules, megatron/core/transformer/
 * transformer_config.py): core attention, the MoE activation, the input and pre-MLP norms, MLA's up projections, the
 * dense MLP, the MoE layer, its shared experts, a Gated DeltaNet layer's output norm.
 */
export type MegatronRecomputeModule = 'core_attn' | 'moe_act' | 'layernorm' | 'mla_up_proj' | 'mlp' | 'moe' | 'shared_experts' | 'gdn_norm_out';
/** The code that builds the model, which decides what is saved for backward: megatron-core + TE, torchtitan, transformers. */
export type ModelImpl = 'megatron' | 'torchtitan' | 'hf';
/** torch.optim implementation: fused (no temporaries), foreach (multi-tensor temporaries), for-loop. */
export type OptimizerImpl = 'fused' | 'foreach' | 'for-loop';
/**
 * Cross-entropy as the engine computes it: fp32 logits copy (default), Megatron's native fusion, TE's in-place kernel,
 * the loss compiled with torch.compile (torchtitan `compile.components` with "loss"), or chunk by chunk, compiled or
 * eager (torchtune's CEWithChunkedOutputLoss and LinearCrossEntropyLoss, 8 chunks).
 */
export type LossFusion = 'none' | 'native' | 'te' | 'compiled' | 'chunked' | 'chunked-eager' | 'liger' | 'cce';

export interface TrainingSpec {
  /** Sequences per GPU per forward/backward (b). */
  readonly microBatch: number;
  /** Sequences per optimizer step across all data-parallel ranks (B). */
  readonly globalBatch: number;
  /** Micro-batches per optimizer step per data-parallel rank (m). */
  readonly gradAccum: number;
  /** Tokens per sequence (s). */
  readonly seqLen: number;
  readonly precision: Precision;
  /** Dtype gradients are produced and reduced in. */
  readonly gradDtype: Dtype;
  /** An fp32 gradient accumulation buffer exists (Megatron `main_grad`, nanotron `accumulate_grad_in_fp32`). */
  readonly fp32GradAccum: boolean;
  readonly optimizer: OptimizerKind;
  readonly recompute: RecomputeKind;
  /** With full recomputation: how many layers per stage are recomputed (undefined = all). */
  readonly recomputeLayers?: number;
  /**
   * With Megatron's selective recomputation: the submodules it recomputes (`--recompute-modules`; undefined = its
   * default, core attention). Read by Megatron-core's layers only.
   */
  readonly recomputeModules?: readonly MegatronRecomputeModule[];
  readonly flashAttention: boolean;
  /** torch.compile (or TE/Apex fused kernels chosen by the engine) fuses memory-bound kernels and saves fewer activations. */
  readonly compile: boolean;
  /** FP8 details when `precision` is 'fp8-mixed'; undefined means the engine's default recipe. */
  readonly fp8?: Fp8Spec;
  /** Precision regime; undefined = derived from the engine and precision (shared/memory/engine.ts). */
  readonly regime?: PrecisionRegime;
  /** Recomputation policy; undefined = the engine's (shared/memory/engine.ts). */
  readonly recomputePolicy?: RecomputePolicy;
  /** torchtitan selective per-layer: every N-th block is checkpointed (selective_ac_option = "N"). */
  readonly recomputeEvery?: number;
  /** Model implementation; undefined = the engine's. */
  readonly modelImpl?: ModelImpl;
  /** Optimizer implementation; undefined = the engine's default. */
  readonly optimizerImpl?: OptimizerImpl;
  /**
   * The optimizer steps each parameter inside the backward as soon as its gradient is final and frees that gradient
   * (torchtune `optimizer_in_bwd`: torch `register_post_accumulate_grad_hook`); undefined = one step after the backward.
   */
  readonly optimizerInBackward?: boolean;
  /**
   * false: the data-parallel gradients are reduced only in the step's last micro-batch, the others running under
   * `no_sync` (the Hugging Face Trainer and Accelerate's `accumulate`), so FSDP accumulates unsharded gradients until
   * then; undefined = reduced in every micro-batch (torchtitan, torchtune).
   */
  readonly syncEveryMicroBatch?: boolean;
  /**
   * The optimizer states live in paged (CUDA unified) memory that the driver moves to CPU memory when the GPU runs short
   * (bitsandbytes' paged optimizers, Dettmers et al. 2023 §2); undefined = ordinary GPU memory.
   */
  readonly pagedOptimizer?: boolean;
  /**
   * The training loop keeps the previous micro-batch's model output, and through its `grad_fn` that micro-batch's
   * autograd graph, until the next forward returns (LitGPT's `logits = model(...)`, litgpt/finetune/*.py): that
   * output, and what the graph's nodes hold outside their saved tensors (bitsandbytes' `ctx.tensors`), live through the
   * next forward; undefined = the loop drops them after the backward.
   */
  readonly previousOutputHeld?: boolean;
  /**
   * Saved activations go to pinned CPU memory in the forward and come back in the backward (torchtune
   * `enable_activation_offloading`, torchtune/training/_activation_offloading.py OffloadActivations, with activation
   * checkpointing): the GPU keeps the forward stash of the last few; undefined = saved activations stay on the GPU.
   */
  readonly activationOffload?: boolean;
  /**
   * The model's RMSNorms upcast explicitly and save their fp32 input and unscaled output in eager mode (torchtune
   * torchtune/modules/rms_norm.py `x.float()`); undefined = the engine's norm (torchtitan's fused RMSNorm).
   */
  readonly normUpcast?: boolean;
  /**
   * Liger-Kernel's kernels that replace transformers' in a model it patches, as the comma list of Liger's own argument
   * names in this order: `rms_norm`, `rope`, `swiglu` (shared/plan/liger.ts); undefined = transformers' own.
   */
  readonly ligerKernels?: string;
  /**
   * Mean tokens per sample where packed samples attend only within themselves (`packing` varlen), from the setting
   * `shardlens.sampleTokens` (the dataset decides it, not the file); undefined = unknown (attention timed over whole
   * sequences, an upper bound).
   */
  readonly sampleTokens?: number;
  /** Megatron --cross-entropy-loss-fusion (with --cross-entropy-fusion-impl); undefined = none. */
  readonly lossFusion?: LossFusion;
  /**
   * How much of a training step replays as CUDA graphs (Megatron `--cuda-graph-impl`): per-layer graphs of some modules
   * (`local`, `transformer_engine`) or the whole forward-backward pass (`full_iteration`); undefined = none.
   */
  readonly cudaGraph?: CudaGraphImpl;
  /**
   * transformers' experts implementation (`experts_implementation`, integrations/moe.py): grouped GEMMs (`grouped_mm`,
   * transformers 5's default), a Python loop over the experts (`eager`) or batched matmuls over gathered weights
   * (`batched_mm`); undefined = the default.
   */
  readonly expertsImpl?: ExpertsImpl;
  /**
   * Several samples packed into each sequence with attention kept within each sample (FlashAttention's variable-length
   * kernel, Transformer Engine's THD layout, block-causal masks); undefined = one sample per sequence, or packing whose
   * samples attend across each other.
   */
  readonly packing?: SamplePacking;
}

/**
 * Megatron-LM's CUDA graph implementations (megatron/core/transformer/transformer_config.py `cuda_graph_impl`): none,
 * per-layer graphs of MCore's own (`local`) or of Transformer Engine's make_graphed_callables (`transformer_engine`),
 * or one graph for the whole forward-backward pass of an iteration, the optimizer step excluded (`full_iteration`).
 */
export type CudaGraphImpl = 'none' | 'local' | 'transformer_engine' | 'full_iteration';
/** transformers' experts implementations that change how a MoE layer runs (TrainingSpec.expertsImpl). */
export type ExpertsImpl = 'grouped_mm' | 'eager' | 'batched_mm';
/** Packed samples whose attention stays within each sample (see TrainingSpec.packing). */
export type SamplePacking = 'varlen';

export type PipelineSchedule = 'gpipe' | '1f1b' | 'interleaved' | 'zb-h1';
export type ShardingStyle = 'ddp' | 'deepspeed' | 'fsdp' | 'fsdp2' | 'megatron-distopt';
export type FsdpStrategy = 'FULL_SHARD' | 'SHARD_GRAD_OP' | 'HYBRID_SHARD' | '_HYBRID_SHARD_ZERO2' | 'NO_SHARD';
export type OffloadTarget = 'none' | 'cpu' | 'nvme';
export type ParallelAxis = 'tp' | 'cp' | 'ep' | 'pp' | 'dp';

export interface ShardingSpec {
  /** Which framework's sharding this is, for labels and framework-specific buffers. */
  readonly style: ShardingStyle;
  /**
   * ZeRO stage equivalent: 0 replicated, 1 optimizer states (and master weights), 2 + gradients, 3 + parameters.
   * FSDP FULL_SHARD = 3, SHARD_GRAD_OP = 2, NO_SHARD = 0, Megatron distributed optimizer = 1.
   */
  readonly stage: 0 | 1 | 2 | 3;
  /** FSDP strategy name when style is fsdp/fsdp2. */
  readonly fsdpStrategy?: FsdpStrategy;
  /** Ranks the sharded states are split over (HSDP: the shard group; else the DP size). */
  readonly shardGroupSize: number;
  /** FSDP/ZeRO-3 frees gathered parameters after forward (true) or keeps them until backward (Llama 3, FSDP2 `reshard_after_forward=False`). */
  readonly reshardAfterForward: boolean;
  readonly offloadOptimizer: OffloadTarget;
  readonly offloadParams: OffloadTarget;
  /** DeepSpeed `reduce_bucket_size` / DDP bucket, in elements. */
  readonly reduceBucketElems: number;
  /** DeepSpeed `allgather_bucket_size` (ZeRO-1/2), in elements. */
  readonly allgatherBucketElems: number;
  /** DeepSpeed `stage3_prefetch_bucket_size`, in elements. */
  readonly prefetchBucketElems: number;
  /** DeepSpeed `stage3_max_live_parameters`, in elements. */
  readonly maxLiveParams: number;
  /** Gradient reduction overlaps with backward (DDP buckets, DeepSpeed `overlap_comm`, Megatron `--overlap-grad-reduce`). */
  readonly overlapComm: boolean;
  /** DeepSpeed `contiguous_gradients` (default true): gradients are copied into the reduction bucket and partition buffers. */
  readonly contiguousGradients?: boolean;
  /**
   * DeepSpeed builds FusedAdam from the JSON's `optimizer` block (type Adam or AdamW without `torch_adam`); without
   * ZeRO its 16-bit wrapper is then FP16_Optimizer, which flattens the fp32 gradients at the step. Absent: the client's
   * optimizer (the HF Trainer's torch AdamW), wrapped by FP16_UnfusedOptimizer.
   */
  readonly dsFusedAdam?: boolean;
  /**
   * DeepSpeed ZeRO++ at stage 3 (Wang et al. 2023): the weights' all-gathers in int8 (qwZ, `zero_quantized_weights`),
   * a secondary partition over `hpzPartition` ranks of a node that the backward gathers from (hpZ,
   * `zero_hpz_partition_size`), the gradients reduced in int4 (qgZ, `zero_quantized_gradients`).
   */
  readonly quantizedWeights?: boolean;
  readonly hpzPartition?: number;
  readonly quantizedGradients?: boolean;
}

export interface ParallelSpec {
  /** Data-parallel degree (replicas × shards). */
  readonly dp: number;
  /** Tensor-parallel degree. */
  readonly tp: number;
  /** Megatron sequence parallelism (shards LayerNorm/dropout activations over TP). */
  readonly sp: boolean;
  /** Pipeline-parallel degree. */
  readonly pp: number;
  /** Virtual pipeline chunks per stage (interleaved schedule); 1 otherwise. */
  readonly vpp: number;
  readonly schedule: PipelineSchedule;
  /** Explicit layers per pipeline stage (uneven split); undefined = even split. */
  readonly stageLayers?: readonly number[];
  /** Context-parallel degree. */
  readonly cp: number;
  /** Expert-parallel degree. */
  readonly ep: number;
  /** Expert tensor-parallel degree (Megatron `--expert-tensor-parallel-size`). */
  readonly etp: number;
  readonly sharding: ShardingSpec;
  /** Order of axes from innermost (fastest, within a node) to outermost. Default tp, cp, ep, pp, dp. */
  readonly order: readonly ParallelAxis[];
  /** TP communication overlapped with compute (Megatron `--tp-comm-overlap`). */
  readonly tpCommOverlap: boolean;
  /**
   * How MoE tokens reach their experts' ranks (shared/comm/dispatch.ts): NCCL all-to-all (torchtitan, DeepSpeed-MoE,
   * Megatron `alltoall`), Megatron's `allgather` dispatcher, or DeepEP / HybridEP kernels (Megatron `flex`). Absent:
   * all-to-all.
   */
  readonly epDispatcher?: EpDispatcher;
  /**
   * MoE dispatch and combine of one micro-batch overlapped with the compute of another (Megatron
   * `--overlap-moe-expert-parallel-comm`: forward and backward of two micro-batches run merged in the 1F1B steady
   * state). Absent: exposed.
   */
  readonly epCommOverlap?: boolean;
}

/** MoE token dispatchers with their own communication pattern. */
export type EpDispatcher = 'alltoall' | 'allgather' | 'deepep' | 'hybridep';
export const EP_DISPATCHERS: readonly EpDispatcher[] = ['alltoall', 'allgather', 'deepep', 'hybridep'];

/** One GPU model from the catalog (data/gpus.json). */
export interface GpuSpec {
  readonly id: string;
  readonly name: string;
  readonly memoryBytes: number;
  /** Dense peak FLOP/s per dtype (no sparsity). */
  readonly peakFlops: Readonly<Partial<Record<'fp32' | 'tf32' | 'bf16' | 'fp16' | 'fp8', number>>>;
  /** HBM bandwidth, bytes/s. */
  readonly hbmBandwidth: number;
  /** Intra-node (NVLink / xGMI / PCIe) bus bandwidth per GPU, bytes/s. */
  readonly intraNodeBandwidth: number;
  /** Inter-node (network) bandwidth per GPU, bytes/s. */
  readonly interNodeBandwidth: number;
  /** Host link (PCIe) bandwidth per GPU, bytes/s, for offload. */
  readonly hostBandwidth: number;
  /** Latency of one collective step intra-node and inter-node, seconds. */
  readonly intraNodeLatency: number;
  readonly interNodeLatency: number;
  /** Fraction of the dense bf16 peak that the best large GEMM reaches (MAMF, data/gpus.json; a GEMM efficiency, not MFU). */
  readonly achievableFlopsFraction: number;
  /** The same for fp8 GEMMs (undefined: the bf16 fraction). */
  readonly fp8GemmFraction?: number;
  /** Architecture family selecting kernel curves (data/time/kernels.json): hopper, ampere, blackwell, cdna3, … */
  readonly arch?: string;
  /** Streaming multiprocessors (compute units) for GEMM wave quantization. */
  readonly sms?: number;
  /** Sustained clock under the power limit relative to the datasheet boost clock (1 = datasheet). */
  readonly clockFraction?: number;
  /** Board power limit, watts. */
  readonly powerWatts?: number;
  /**
   * Measured kernel speed relative to the model's rates (a cluster calibration, `shardlens.calibration`): every GEMM,
   * attention and memory-bound kernel takes 1/kernelSpeed of its modelled time. Undefined = 1 (the catalog's rates).
   */
  readonly kernelSpeed?: number;
  /**
   * The node's NVSwitch reduces in the switch (NVLink SHARP: HGX H100/H200/B200): NCCL's all-reduce then outruns its
   * all-gather and reduce-scatter (data/collectives.json kindEfficiency). Undefined = no.
   */
  readonly nvlinkSharp?: boolean;
  /**
   * GPUs one NVLink fabric joins when it spans several hosts (GB200 NVL72: the rack's NVLink switch trays), as many as a
   * job's rank groups can count on; collectives inside it run over NVLink, not the network. Undefined = the node.
   */
  readonly nvlinkDomain?: number;
  /** GPUs of one host (the default `cluster.gpusPerNode` on this system: 4 on a GB200 compute tray). Undefined = 8. */
  readonly gpusPerNode?: number;
}

export interface ClusterSpec {
  readonly gpu: GpuSpec;
  readonly gpusPerNode: number;
  readonly nodes: number;
  /** Measured kernel and collective curves of this cluster (`shardlens profile`); the catalog's curves otherwise. */
  readonly profile?: ClusterProfile;
}

/** Runtime overheads outside the tensors the model owns. */
export interface OverheadSpec {
  /** CUDA context, cuBLAS/cuDNN workspaces, NCCL communicators: bytes per GPU. */
  readonly cudaContextBytes: number;
  /**
   * 0: reserved memory follows PyTorch's caching allocator (shared/memory/allocator.ts); above 0 a flat override,
   * reserved / allocated − 1 (e.g. 0.1).
   */
  readonly allocatorFragmentation: number;
}

/** Everything an estimate needs. */
export interface Plan {
  /** The engine that runs the step (see EngineId). */
  readonly engine: EngineId;
  readonly model: ModelSpec;
  readonly training: TrainingSpec;
  readonly parallel: ParallelSpec;
  readonly cluster: ClusterSpec;
  readonly overhead: OverheadSpec;
  readonly lora?: LoraSpec;
  /** Where each input came from, keyed by dotted path (e.g. "training.microBatch", "parallel.sharding.stage"). */
  readonly sources: Readonly<Partial<Record<PlanPath, InputSource>>>;
  /**
   * The stated inputs the plan was derived from (derivePlan): a what-if overrides some of them and derives again
   * (`rederive`). Absent on plans assembled by hand.
   */
  readonly stated?: PlanInput;
}

/** A zero-based position in a text document (same shape as LSP's Position). */
export interface TextPosition { readonly line: number; readonly character: number }
/** A range in a text document (same shape as LSP's Range). */
export interface TextRange { readonly start: TextPosition; readonly end: TextPosition }

export type SourceKind = 'explicit' | 'referenced' | 'default' | 'derived' | 'preset' | 'setting' | 'assumed';

/** Where one input came from. */
export interface InputSource {
  /**
   * explicit: set in the edited file; referenced: set in a file it references; default: a framework default;
   * derived: computed from other inputs; preset: from a bundled model/GPU preset; setting: from editor settings;
   * assumed: nothing said it and ShardLens assumed a value the user should confirm.
   */
  readonly kind: SourceKind;
  /** Human-readable origin, e.g. "ds_config.json: train_micro_batch_size_per_gpu" or "DeepSpeed default". */
  readonly detail: string;
  /** Document the value came from (URI or path), when it came from a file. */
  readonly uri?: string;
  /** Range of the value in that document. */
  readonly range?: TextRange;
}

export type Severity = 'error' | 'warning' | 'info';

/** A typed problem with the inputs; never an exception. */
export interface Problem {
  /** Stable machine code, e.g. "tp-divides-heads". */
  readonly code: string;
  readonly severity: Severity;
  readonly message: string;
  /** Dotted input paths involved, so editors can place the diagnostic at the right range. */
  readonly paths: readonly PlanPath[];
}
