#!/bin/bash
# Korthikanti et al. 2022 Table 5, 22B row, full recomputation: 1.42 s per iteration.
# Table 3 configuration: 64 heads, h 6144, 48 layers, TP 8, PP 1, interleave 1, 8 GPUs, global batch 4, micro batch 4 (A100 80GB, Selene, fp16).
# Written for ShardLens from what the source states; see data/calibration/measured-runs.json for the assumptions.

GPUS_PER_NODE=8
NUM_NODES=1

torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --num-layers 48 --hidden-size 6144 --num-attention-heads 64 \
    --seq-length 2048 --max-position-embeddings 2048 --vocab-size 51200 \
    --micro-batch-size 4 --global-batch-size 4 \
    --fp16 --attention-backend unfused \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 1 \
    --recompute-granularity full --recompute-method uniform \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
