#!/bin/bash
# Megatron-Bridge performance summary, 26.04.01 NeMo container, Pre-Training, DGX-B300 (docs/performance-summary-archive.md):
# Qwen3_30B_a3B, 8 GPUs, MXFP8, GBS 512, MBS 8, seq 4096, FSDP 0, TP 1 PP 1 CP 1 VP n/a EP 8; measured 30720 tokens/s/GPU.
# A check row (never fitted on by the joint fit). Settings of the performance scripts of the 26.04.01 summary's commit
# (Megatron-Bridge 17a381f95, scripts/performance/configs/qwen/: qwen3_30b_a3b_pretrain_config_b300 with
# QWEN3_30B_A3B_PRETRAIN_CONFIG_B300_FP8_MX_V1 (= _FP8_CS_V1)): MXFP8 (utils/precision.py "fp8_mx": e4m3, recipe mxfp8,
# fp8_param_gather), no recomputation, the flex dispatcher with the HybridEP backend, balanced routing and dropless
# experts (set_qwen3_common_configs: moe_router_force_load_balancing), no all-to-all overlap (moe_a2a_overlap False),
# per-layer Transformer Engine CUDA graphs of the router and the dispatch preprocessing only (cuda_graph_scope), so the rest of each
# MoE layer runs eagerly. One DGX B300 node of 8 GPUs. Model: Qwen3-30B-A3B config.json (48 layers, hidden 2048, 32 heads, 4 KV
# heads of 128, 128 experts of 768, top 8).
GPUS_PER_NODE=8
NUM_NODES=1
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 48 --hidden-size 2048 --num-attention-heads 32 --group-query-attention --num-query-groups 4 --kv-channels 128 \
    --ffn-hidden-size 6144 --swiglu --normalization RMSNorm --disable-bias-linear --qk-layernorm \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 151936 \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 768 --expert-model-parallel-size 8 \
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-grouped-gemm \
    --cuda-graph-impl transformer_engine --cuda-graph-scope moe_router moe_preprocess \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 8 --global-batch-size 512 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format e4m3 --fp8-recipe mxfp8 --fp8-param-gather --grad-reduce-in-bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
