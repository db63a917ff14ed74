/** Label, formula text and citation of every memory term, as hovers and `--json` show them. */

export interface TermInfo { readonly label: string; readonly formula: string; readonly citation: string }

export const TERM_INFO = {
  parameters: { label: 'Parameters', formula: 'Ψ_rank · b_param / N_shard (0 on GPU with parameter offload)', citation: 'Rajbhandari et al. 2020 (ZeRO) §5.3; Megatron theoretical_memory_usage.py sharding map' },
  gradients: { label: 'Gradients', formula: 'Ψ_train · b_grad / N_shard', citation: 'Rajbhandari et al. 2020 (ZeRO) §5.2' },
  optimizerStates: { label: 'Optimizer states', formula: 'Ψ_train · b_opt / N_shard (Adam 8, SGD-momentum 4, Lion 4, 8-bit Adam 2, Adafactor ≈ 8/h)', citation: 'Rajbhandari et al. 2020 (ZeRO) §5.1; Kingma & Ba 2015; Dettmers et al. 2022; Chen et al. 2023; Shazeer & Stern 2018' },
  masterWeights: { label: 'fp32 master weights', formula: 'Ψ_train · 4 / N_shard', citation: 'Micikevicius et al. 2018 (mixed precision); ZeRO K = 12' },
  gradAccumBuffer: { label: 'fp32 gradient buffer', formula: '4 · Ψ_train / N_shard', citation: 'Megatron main_grad / nanotron accumulate_grad_in_fp32; Ultra-Scale Playbook' },
  fp8WeightCache: { label: 'FP8 weight caches', formula: '2 · Ψ_linear / N_shard (fp8 weight + transpose)', citation: 'NVIDIA TransformerEngine Float8Tensor transpose cache' },
  activations: { label: 'Activations', formula: 'at the stage\'s peak moment (docs/engine-memory.md#moments): m_inflight · L_stage · what one block saves — Megatron-core: sbh(4B+2)/(SP ? t : 1) + B·sb(2ad + 2KV·d + (gated ? 3 : 2)f)/t + (flash ? 4asb : (2B+1)as²b)/t; torchtitan and transformers: their eager graphs tensor by tensor (docs/engine-memory.md#what-a-block-saves) — (full recompute: each block\'s input + one block\'s working set)', citation: 'Korthikanti et al. 2022, Table 2 and §4.2.3; shared/memory/blocks.ts' },
  embeddingActivations: { label: 'Embedding activations', formula: 'm_inflight · (8sb + sbh/(SP ? t : 1))', citation: 'Korthikanti et al. 2022 §4.2.3; Megatron theoretical_memory_usage.py' },
  logits: { label: 'Output layer and loss', formula: 'at the stage\'s peak moment: output-layer inputs 2B·sbh/(SP ? t : 1) + the loss\'s live copies of the n = b·s·V/t logits (upcast: 10n forward, 12n backward; Megatron 6n; fused 4n)', citation: 'Korthikanti et al. 2022 §4.2.3; docs/engine-memory.md#the-loss' },
  gatheredParameters: { label: 'Gathered ZeRO-3/FSDP parameters', formula: 'FSDP: (reshard ? 2Ψ_unit : Ψ_stage)·b_param + Ψ_unit·b_grad; DeepSpeed: min(max_live, Ψ_unit + prefetch)·b_param + Ψ_unit·b_grad', citation: 'Zhao et al. 2023 (PyTorch FSDP) §3.2; DeepSpeed memory.rst largest_layer_memory' },
  commBuffers: { label: 'Communication buckets', formula: 'DDP Ψ_stage·b_grad (bucket copies of all gradients); DeepSpeed: its reduction buckets (reduce_bucket_size elements, two with overlap_comm; ZeRO-3 one); torch pipelining: + 2m·b·s·h·B receive buffers per stage', citation: 'PyTorch DDP docs (gradient_as_bucket_view); DeepSpeed 0.19.8 stage_1_and_2.py / stage3.py (docs/engine-memory.md#deepspeed); docs/engine-memory.md#pipeline' },
  engineCopies: { label: 'DeepSpeed transient copies', formula: 'at the peak moment: a reduction\'s flat copy b_grad·min(max(B, X), B + min(P, X)), the step\'s fp64 norm copies 8·min(P, L) or its fp32 cast 4P (+ 2P flatten)', citation: 'DeepSpeed 0.19.8 runtime/zero/stage_1_and_2.py (average_tensor, get_grad_norm_direct, step), stage3.py; docs/engine-memory.md#deepspeed' },
  cudaContext: { label: 'CUDA context and workspaces', formula: 'C_ctx', citation: 'docs/formulas.md#runtime-overheads (1–2 GB per GPU)' },
  fragmentation: {
    label: 'Caching allocator (reserved − allocated)',
    formula: 'PyTorch\'s caching allocator at the moment of the peak reserved memory: FSDP2\'s all-gather stream pool (max(B_root, B_unit) + B_unit)·(1 + 1/N) and reduce-scatter stream pool (the sharded gradients, before the backward), less what is live in them; the 16-bit logits\' block b·n at an upcast or loss-parallel loss\'s backward (too small for its fp32 requests). Assumed: other blocks are reused (best fit), block rounding is negligible, expandable_segments does not change these terms, the device has room (no cache release). With shardlens.overhead.fragmentation = f > 0: f · allocated tensors instead',
    citation: 'PyTorch c10/cuda/CUDACachingAllocator.cpp (per-stream pools, best fit); torch fully_shard _fsdp_collectives.py (all-gather and reduce-scatter streams); docs/engine-memory.md#the-caching-allocator',
  },
} as const satisfies Readonly<Record<string, TermInfo>>;
