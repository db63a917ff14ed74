#!/bin/bash
# Megatron-Bridge performance summary, 26.06 NeMo container, DGX-GB200 (docs/performance-summary-archive.md):
# GPT OSS 120B, 64 GPUs, MXFP8, GBS 1280, MBS 4, seq 4096, TP 1 PP 1 CP 1 EP 64; measured 28947 tokens/s/GPU.
# A check row (never fitted). Settings of the 26.06 performance scripts (Megatron-Bridge 63b08b397,
# scripts/performance/configs/gpt_oss/: GPT_OSS_120B_PRETRAIN_CONFIG_GB200_FP8_MX_V2): MXFP8 (utils/precision.py
# "fp8_mx": e4m3, recipe mxfp8, fp8_param_gather), no recomputation, the flex dispatcher with the HybridEP backend and
# permute fusion, balanced routing, the EP all-to-all overlap with delayed weight gradients, the whole forward-backward
# pass as one CUDA graph (cuda_graph_impl full_iteration), Transformer Engine's fused grouped MLP and FP8 attention,
# the distributed optimizer with overlapped grad reduce and param gather, TE cross-entropy fusion. 16 compute trays of
# 4 GPUs in one NVLink domain. Model: openai/gpt-oss-120b config.json (36 layers, hidden 2880, 64 heads of 64, 8 KV
# heads, 128 experts of 2880, top 4, biases, untied, vocabulary 201,088; sliding window 128 on every other layer from
# the first, window_size (128, 0) and window_attn_skip_freq 2). Its attention sinks (gpt_oss_bridge.py: softmax_type
# learnable) are timed as plain fused attention (warning attention-sink-timing).
GPUS_PER_NODE=4
NUM_NODES=16
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 36 --hidden-size 2880 --num-attention-heads 64 --group-query-attention --num-query-groups 8 --kv-channels 64 \
    --ffn-hidden-size 2880 --swiglu --normalization RMSNorm \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 201088 \
    --window-size '(128,0)' --window-attn-skip-freq 2 --softmax-type learnable \
    --num-experts 128 --moe-router-topk 4 --moe-ffn-hidden-size 2880 --expert-model-parallel-size 64 \
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-grouped-gemm --moe-permute-fusion \
    --overlap-moe-expert-parallel-comm --delay-wgrad-compute --cuda-graph-impl full_iteration \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 4096 --max-position-embeddings 131072 \
    --micro-batch-size 4 --global-batch-size 1280 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --grad-reduce-in-bf16 \
    --fp8-format e4m3 --fp8-recipe mxfp8 --fp8-param-gather --fp8-dot-product-attention \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --train-iters 50 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
