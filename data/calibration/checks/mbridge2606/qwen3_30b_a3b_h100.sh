#!/bin/bash
# Megatron-Bridge performance summary, 26.06 NeMo container, DGX-H100 (docs/performance-summary-archive.md):
# Qwen3_30B_a3B, 16 GPUs, FP8, GBS 1024, MBS 1, seq 4096, TP 1 PP 1 CP 1 EP 16; measured 8826 tokens/s/GPU.
# A check row (never fitted). Settings of the 26.06 performance scripts (Megatron-Bridge 63b08b397,
# scripts/performance/configs/qwen/: QWEN3_30B_A3B_PRETRAIN_CONFIG_H100_FP8_CS_V1; the later recipe
# qwen3_30b_a3b_pretrain_16gpu_h100_fp8cs_config agrees but adds per-layer CUDA graphs): FP8 current scaling, no
# recomputation, no CUDA graphs, the flex dispatcher with the HybridEP backend and no all-to-all overlap, balanced routing
# (moe_router_force_load_balancing). Model: Qwen3-30B-A3B config.json (48 layers, hidden 2048, 32 heads, 4 KV heads of
# 128, 128 experts of 768, top 8).
GPUS_PER_NODE=8
NUM_NODES=2
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 48 --hidden-size 2048 --num-attention-heads 32 --group-query-attention --num-query-groups 4 --kv-channels 128 \
    --ffn-hidden-size 6144 --swiglu --normalization RMSNorm --disable-bias-linear --qk-layernorm \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 151936 \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 768 --expert-model-parallel-size 16 \
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-grouped-gemm \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 1024 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
