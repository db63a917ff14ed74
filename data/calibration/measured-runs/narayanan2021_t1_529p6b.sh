#!/bin/bash
# Narayanan et al. 2021 Table 1, 529.6B row: 128 heads, h 20480, 105 layers, TP 8, PP 35, 2520 GPUs, global batch 2520.
# Published 163 TFLOP/s per GPU (A100 80GB, Selene, fp16, full recomputation, interleaved schedule where PP > 1).
# Written for ShardLens from what the source states; see data/calibration/measured-runs.json for the assumptions.

GPUS_PER_NODE=8
NUM_NODES=315

torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --num-layers 105 --hidden-size 20480 --num-attention-heads 128 \
    --seq-length 2048 --max-position-embeddings 2048 --vocab-size 51200 \
    --micro-batch-size 1 --global-batch-size 2520 \
    --fp16 --attention-backend unfused \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 35 \
    --num-layers-per-virtual-pipeline-stage 1 \
    --recompute-granularity full --recompute-method uniform \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
