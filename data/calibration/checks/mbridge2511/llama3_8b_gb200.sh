#!/bin/bash
# Megatron-Bridge performance summary, 25.11 NeMo container, Pre-Training, DGX-GB200 (docs/performance-summary-archive.md):
# LLAMA3_8B, 8 GPUs, FP8-CS, GBS 128, MBS 2, seq 8192, FSDP 0, TP 1 PP 1 CP 1; measured 31508 tokens/s/GPU.
# A check row (never fitted). Settings of the 25.11 performance scripts (Megatron-Bridge v0.2.2,
# scripts/performance/configs/llama3/: llama3_8b_gb200_config with LLAMA3_8B_GB200_FP8_CS_BASE_CONFIG): the same as the
# B200 row (llama3_8b_b200.sh: FP8 current scaling in every layer, gradients reduced in bf16, the distributed optimizer
# with overlapped grad reduce and param gather, TE cross-entropy fusion, no recomputation, a CUDA graph of the whole
# iteration not modelled apart) on two GB200 compute trays of 4 GPUs, which the rack's NVLink joins.
GPUS_PER_NODE=4
NUM_NODES=2
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8 \
    --ffn-hidden-size 14336 --swiglu --normalization RMSNorm --disable-bias-linear \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 128256 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 2 --global-batch-size 128 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --train-iters 50 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
