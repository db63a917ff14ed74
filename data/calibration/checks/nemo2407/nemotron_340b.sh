#!/bin/bash
# NeMo 24.07 performance summary (DGX-H100, FP8): Nemotron-340B, 128 GPUs, GBS 32, MBS 1, seq 4096,
# TP 8 PP 8 CP 1 VP 12; measured 322 tokens/s/GPU. A check row (never fitted).
# Gradients reduced in bf16: NeMo-Framework-Launcher launcher_scripts/conf/training/nemotron/nemotron_340b.yaml
# optim grad_sync_dtype bf16 (commit 10120dba), written as --grad-reduce-in-bf16.
# Architecture: NeMo Nemotron3Config8B/22B, Nemotron4Config340B (nemo/collections/llm/gpt/model/nemotron.py): LayerNorm (1p), squared ReLU, no biases, RoPE, untied head.
GPUS_PER_NODE=8
NUM_NODES=16
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 96 --hidden-size 18432 --num-attention-heads 96 \
    --ffn-hidden-size 73728 --squared-relu --normalization LayerNorm --apply-layernorm-1p --disable-bias-linear --position-embedding-type rope --untie-embeddings-and-output-weights --group-query-attention --num-query-groups 8 --vocab-size 256000 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 32 \
    --bf16 --grad-reduce-in-bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 8 --context-parallel-size 1 \
    --sequence-parallel --tp-comm-overlap \
    --num-layers-per-virtual-pipeline-stage 1 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
