#!/bin/bash
# Megatron-Bridge performance summary, 26.06 NeMo container, DGX-GB200 (docs/performance-summary-archive.md):
# Qwen3_235B_a22B, 256 GPUs, MXFP8, GBS 8192, MBS 1, seq 4096, TP 1 PP 8 CP 1 VP 3 EP 32; measured 7376 tokens/s/GPU.
# A check row (never fitted). Settings of the 26.06 performance scripts (Megatron-Bridge 63b08b397,
# scripts/performance/configs/qwen/: qwen3_235b_a22b_pretrain_config_gb200 with QWEN3_235B_A22B_PRETRAIN_CONFIG_GB200_FP8_MX_V2):
# MXFP8 (utils/precision.py "fp8_mx": e4m3, recipe mxfp8, fp8_param_gather), no recomputation, the flex dispatcher with
# the HybridEP backend, balanced routing (moe_router_force_load_balancing), the EP all-to-all overlap with delayed
# weight gradients (utils/overrides.py _set_moe_a2a_overlap_overrides), the whole forward-backward pass as one CUDA graph
# (cuda_graph_impl full_iteration), Transformer Engine's fused grouped MLP and FP8 attention (fp8_dot_product_attention),
# and the embedding and loss counted in the pipeline split (recipes/qwen/qwen3_moe.py qwen3_235b_a22b_pretrain_config:
# (94 + 2) / 24 = 4 layers per virtual stage). 64 compute trays of 4 GPUs; an EP group of 32 shares one NVLink domain.
# Model: Qwen3-235B-A22B config.json (94 layers, hidden 4096, 64 heads of 128, 4 KV heads, 128 experts of 1536, top 8).
GPUS_PER_NODE=4
NUM_NODES=64
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 94 --hidden-size 4096 --num-attention-heads 64 --group-query-attention --num-query-groups 4 --kv-channels 128 \
    --ffn-hidden-size 12288 --swiglu --normalization RMSNorm --disable-bias-linear --qk-layernorm \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 151936 \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 1536 --expert-model-parallel-size 32 \
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-grouped-gemm \
    --overlap-moe-expert-parallel-comm --delay-wgrad-compute --cuda-graph-impl full_iteration \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 8192 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format e4m3 --fp8-recipe mxfp8 --fp8-param-gather --fp8-dot-product-attention --grad-reduce-in-bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 8 \
    --num-virtual-stages-per-pipeline-rank 3 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
