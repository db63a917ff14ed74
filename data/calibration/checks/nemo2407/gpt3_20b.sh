#!/bin/bash
# NeMo 24.07 performance summary (DGX-H100, FP8): GPT3-20B, 64 GPUs, GBS 256, MBS 2, seq 2048,
# TP 2 PP 1 CP 1 VP 1; measured 5851 tokens/s/GPU. A check row (never fitted).
# Architecture: NeMo GPTConfig5B/20B (nemo/collections/llm/gpt/model/base.py): LayerNorm, GELU, biases, learned positions, tied head.
# Gradients reduced in bf16 (--grad-reduce-in-bf16): NVIDIA's H100 FP8 example for this model sets it
# (NeMo-Framework-Launcher examples/training/gpt/h100/20b_fp8_1node.sh: +training.model.optim.grad_sync_dtype=bf16), and
# with fp32 main grads TP 2 leaves 10 B parameters per GPU, 94 GiB: the published run would not fit in 80 GB.
GPUS_PER_NODE=8
NUM_NODES=8
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 44 --hidden-size 6144 --num-attention-heads 48 \
    --ffn-hidden-size 24576 --position-embedding-type learned_absolute --vocab-size 50257 \
    --seq-length 2048 --max-position-embeddings 2048 \
    --micro-batch-size 2 --global-batch-size 256 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --grad-reduce-in-bf16 \
    --fp8-format hybrid \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 1 --context-parallel-size 1 \
    --sequence-parallel --tp-comm-overlap \
     \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
