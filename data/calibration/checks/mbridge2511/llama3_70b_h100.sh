#!/bin/bash
# Megatron-Bridge performance summary, 25.11 NeMo container, Pre-Training, DGX-H100 (docs/performance-summary-archive.md):
# LLAMA3_70B, 64 GPUs, FP8-CS, GBS 128, MBS 1, seq 8192, FSDP 0, TP 4 PP 8 CP 1 VP 5; measured 1602 tokens/s/GPU.
# A check row (never fitted). Settings of the 25.11 performance scripts (Megatron-Bridge v0.2.2,
# scripts/performance/configs/llama3/: llama3_70b_h100_config with LLAMA3_70B_H100_FP8_CS_BASE_CONFIG, whose CP 1
# replaces the recipe's 2): FP8 current scaling in every layer (fp8_cs: tensorwise, fp8_param_gather), gradients
# reduced in bf16, sequence parallelism with userbuffers TP overlap (userbuffers_fp8_h100_h8192_tp4_mbs1_seqlen8192),
# 80 layers split evenly (two per virtual stage, no pipeline layout in that release), the distributed optimizer with
# overlapped grad reduce and param gather, TE cross-entropy fusion. Model: Llama 3 70B (80 layers, hidden 8192,
# 64 heads, 8 KV heads, FFN 28672).
GPUS_PER_NODE=8
NUM_NODES=8
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 8 \
    --ffn-hidden-size 28672 --swiglu --normalization RMSNorm --disable-bias-linear \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 128256 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 1 --global-batch-size 128 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 \
    --sequence-parallel --tp-comm-overlap \
    --num-virtual-stages-per-pipeline-rank 5 \
    --train-iters 50 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
