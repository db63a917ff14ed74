#!/bin/bash
# Korthikanti et al. 2022 Table 5, 1T row, full recomputation: 94.42 s per iteration.
# Table 3 configuration: 160 heads, h 25600, 128 layers, TP 8, PP 64, interleave 1, 512 GPUs, global batch 512, micro batch 1 (A100 80GB, Selene, fp16).
# Written for ShardLens from what the source states; see data/calibration/measured-runs.json for the assumptions.

GPUS_PER_NODE=8
NUM_NODES=64

torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --num-layers 128 --hidden-size 25600 --num-attention-heads 160 \
    --seq-length 2048 --max-position-embeddings 2048 --vocab-size 51200 \
    --micro-batch-size 1 --global-batch-size 512 \
    --fp16 --attention-backend unfused \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 64 \
    --recompute-granularity full --recompute-method uniform \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
