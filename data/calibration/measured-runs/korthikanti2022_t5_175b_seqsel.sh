#!/bin/bash
# Korthikanti et al. 2022 Table 5, 175B row, sequence parallel + selective recomputation: 13.75 s per iteration.
# Table 3 configuration: 96 heads, h 12288, 96 layers, TP 8, PP 8, interleave 3, 64 GPUs, global batch 64, micro batch 1 (A100 80GB, Selene, fp16).
# Written for ShardLens from what the source states; see data/calibration/measured-runs.json for the assumptions.

GPUS_PER_NODE=8
NUM_NODES=8

torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --num-layers 96 --hidden-size 12288 --num-attention-heads 96 \
    --seq-length 2048 --max-position-embeddings 2048 --vocab-size 51200 \
    --micro-batch-size 1 --global-batch-size 64 \
    --fp16 --attention-backend unfused \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 8 \
    --num-layers-per-virtual-pipeline-stage 4 \
    --sequence-parallel --recompute-granularity selective \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
