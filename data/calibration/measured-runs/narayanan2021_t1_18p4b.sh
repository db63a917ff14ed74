#!/bin/bash
# Narayanan et al. 2021 Table 1, 18.4B row: 48 heads, h 6144, 40 layers, TP 8, PP 1, 256 GPUs, global batch 1024.
# Published 135 TFLOP/s per GPU (A100 80GB, Selene, fp16, full recomputation, interleaved schedule where PP > 1).
# Written for ShardLens from what the source states; see data/calibration/measured-runs.json for the assumptions.

GPUS_PER_NODE=8
NUM_NODES=32

torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --num-layers 40 --hidden-size 6144 --num-attention-heads 48 \
    --seq-length 2048 --max-position-embeddings 2048 --vocab-size 51200 \
    --micro-batch-size 1 --global-batch-size 1024 \
    --fp16 --attention-backend unfused \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 1 \
    --recompute-granularity full --recompute-method uniform \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
