#!/bin/bash
# Narayanan et al. 2021 Table 1, 1.7B row: 24 heads, h 2304, 24 layers, TP 1, PP 1, 32 GPUs, global batch 512.
# Published 137 TFLOP/s per GPU (A100 80GB, Selene, fp16, full recomputation, interleaved schedule where PP > 1).
# Written for ShardLens from what the source states; see data/calibration/measured-runs.json for the assumptions.

GPUS_PER_NODE=8
NUM_NODES=4

torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --num-layers 24 --hidden-size 2304 --num-attention-heads 24 \
    --seq-length 2048 --max-position-embeddings 2048 --vocab-size 51200 \
    --micro-batch-size 1 --global-batch-size 512 \
    --fp16 --attention-backend unfused \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --recompute-granularity full --recompute-method uniform \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
