#!/bin/bash
# NeMo long-sequence performance (docs/source/performance/performance_long_sequence.md, LLAMA2-7B (FP8) - H100,
# NeMo 24.03.01 container, DGX-H100): 256K tokens, 256 GPUs, batch 16, TP 4 PP 1 DP 8 CP 8;
# measured 549 model TFLOP/s/GPU = 1215 tokens/s/GPU (bench: docs/time-model.md, check set). A check row (never fitted).
# Architecture: Llama 2 7B (Touvron et al. 2023): RMSNorm, SwiGLU FFN 11008, no biases, RoPE, untied head, 32,000 tokens.
GPUS_PER_NODE=8
NUM_NODES=32
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 \
    --ffn-hidden-size 11008 --swiglu --normalization RMSNorm --disable-bias-linear \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 32000 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 262144 --max-position-embeddings 262144 \
    --micro-batch-size 1 --global-batch-size 16 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --grad-reduce-in-bf16 \
    --fp8-format hybrid \
    --tensor-model-parallel-size 4 --pipeline-model-parallel-size 1 --context-parallel-size 8 --sequence-parallel --tp-comm-overlap \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
