#!/bin/bash
# Qwen3-30B-A3B (128 experts, top 8) pretraining with Megatron-LM on two 8-GPU nodes, experts spread over all 16 GPUs
# (the layout of Megatron-Bridge's 16 x H100 Qwen3-30B-A3B recipe). The dispatcher decides what crosses the nodes:
# DISPATCHER=alltoall bash pretrain_qwen3_30b_a3b_moe.sh sends every token copy through NCCL; flex with HybridEP sends
# a token once per remote node.

GPUS_PER_NODE=${GPUS_PER_NODE:-8}
NUM_NODES=${NUM_NODES:-2}
MASTER_ADDR=${MASTER_ADDR:-localhost}
MASTER_PORT=${MASTER_PORT:-6000}

EP=${EP:-16}
MBS=${MBS:-1}
GBS=${GBS:-1024}
SEQ_LEN=4096
DISPATCHER=${DISPATCHER:-flex}

DISTRIBUTED_ARGS=(
    --nproc_per_node $GPUS_PER_NODE
    --nnodes $NUM_NODES
    --master_addr $MASTER_ADDR
    --master_port $MASTER_PORT
)

MODEL_ARGS=(
    --use-mcore-models
    --num-layers 48
    --hidden-size 2048
    --num-attention-heads 32
    --group-query-attention
    --num-query-groups 4
    --kv-channels 128
    --qk-layernorm
    --seq-length $SEQ_LEN
    --max-position-embeddings $SEQ_LEN
    --position-embedding-type rope
    --rotary-base 1000000
    --swiglu
    --normalization RMSNorm
    --disable-bias-linear
    --untie-embeddings-and-output-weights
    --vocab-size 151936
)

MOE_ARGS=(
    --num-experts 128
    --moe-router-topk 8
    --moe-ffn-hidden-size 768
    --moe-grouped-gemm
    --moe-permute-fusion
    --moe-token-dispatcher-type $DISPATCHER
    --moe-flex-dispatcher-backend hybridep
    --moe-aux-loss-coeff 1e-3
)

TRAINING_ARGS=(
    --micro-batch-size $MBS
    --global-batch-size $GBS
    --train-iters 25000
    --lr 3e-4
    --min-lr 3e-5
    --lr-decay-style cosine
    --weight-decay 0.1
    --clip-grad 1.0
    --bf16
    --use-distributed-optimizer
    --overlap-grad-reduce
    --overlap-param-gather
)

MODEL_PARALLEL_ARGS=(
    --tensor-model-parallel-size 1
    --pipeline-model-parallel-size 1
    --expert-model-parallel-size $EP
)

torchrun ${DISTRIBUTED_ARGS[@]} pretrain_gpt.py \
    ${MODEL_ARGS[@]} \
    ${MOE_ARGS[@]} \
    ${TRAINING_ARGS[@]} \
    ${MODEL_PARALLEL_ARGS[@]} \
    --data-path /data/qwen3/tokens_text_document \
    --tokenizer-type HuggingFaceTokenizer \
    --tokenizer-model Qwen/Qwen3-30B-A3B
