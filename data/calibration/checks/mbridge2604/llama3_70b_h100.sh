#!/bin/bash
# Megatron-Bridge performance summary, 26.04.01 NeMo container, Pre-Training, DGX-H100 (docs/performance-summary-archive.md):
# LLAMA3_70B, 64 GPUs, FP8, GBS 256, MBS 1, seq 8192, TP 4 PP 8 CP 1 VP 5; measured 1664 tokens/s/GPU.
# A check row (never fitted). Settings of the recipe llama3_70b_pretrain_64gpu_h100_fp8cs_config
# (src/megatron/bridge/perf_recipes/llama/h100/llama3.py): FP8 current scaling (fp8_recipe tensorwise, fp8_param_gather,
# grad_reduce_in_fp32 False, TE cross-entropy fusion: perf_recipes/_common.py), sequence parallelism with userbuffers TP
# overlap, and its pipeline layout "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL" (40 virtual stages: 10 layers on every rank but
# 11 on rank 3 and 9 on rank 7). Model: Llama 3 70B (80 layers, hidden 8192, 64 heads, 8 KV heads, FFN 28672).
GPUS_PER_NODE=8
NUM_NODES=8
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 8 \
    --ffn-hidden-size 28672 --swiglu --normalization RMSNorm --disable-bias-linear \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 128256 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 1 --global-batch-size 256 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 \
    --sequence-parallel --tp-comm-overlap \
    --pipeline-model-parallel-layout "Et*2|(t*2|)*34,t*3|(t*2|)*3,tL" \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
