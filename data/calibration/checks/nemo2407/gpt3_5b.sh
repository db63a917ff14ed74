#!/bin/bash
# NeMo 24.07 performance summary (DGX-H100, FP8): GPT3-5B, 64 GPUs, GBS 2048, MBS 4, seq 2048,
# TP 1 PP 1 CP 1 VP 1; measured 22521 tokens/s/GPU. A check row (never fitted).
# Architecture: NeMo GPTConfig5B/20B (nemo/collections/llm/gpt/model/base.py): LayerNorm, GELU, biases, learned positions, tied head.
GPUS_PER_NODE=8
NUM_NODES=8
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 24 --hidden-size 4096 --num-attention-heads 32 \
    --ffn-hidden-size 16384 --position-embedding-type learned_absolute --vocab-size 50257 \
    --seq-length 2048 --max-position-embeddings 2048 \
    --micro-batch-size 4 --global-batch-size 2048 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --context-parallel-size 1 \
     \
     \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
