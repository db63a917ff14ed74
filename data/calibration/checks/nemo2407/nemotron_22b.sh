#!/bin/bash
# NeMo 24.07 performance summary (DGX-H100, FP8): Nemotron-22B, 64 GPUs, GBS 256, MBS 2, seq 4096,
# TP 2 PP 4 CP 1 VP 10; measured 4256 tokens/s/GPU. A check row (never fitted).
# Architecture: NeMo Nemotron3Config8B/22B, Nemotron4Config340B (nemo/collections/llm/gpt/model/nemotron.py): LayerNorm (1p), squared ReLU, no biases, RoPE, untied head.
GPUS_PER_NODE=8
NUM_NODES=8
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 40 --hidden-size 6144 --num-attention-heads 48 \
    --ffn-hidden-size 24576 --squared-relu --normalization LayerNorm --apply-layernorm-1p --disable-bias-linear --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 256000 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 2 --global-batch-size 256 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 --context-parallel-size 1 \
    --sequence-parallel --tp-comm-overlap \
    --num-layers-per-virtual-pipeline-stage 1 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
