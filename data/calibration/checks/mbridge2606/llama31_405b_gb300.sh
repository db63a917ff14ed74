#!/bin/bash
# Megatron-Bridge performance summary, 26.06 NeMo container, Pre-Training, DGX-GB300 (docs/performance-summary.md at
# 63b08b397): LLAMA3.1_405B, 256 GPUs, FP8, GBS 1536, MBS 1, seq 8192, TP 4 PP 8 CP 1 VP 4; measured 1048 tokens/s/GPU.
# A check row (never fitted). Settings of the 26.06 performance scripts (scripts/performance/configs/llama/:
# llama31_405b_pretrain_config_gb300 with LLAMA31_405B_PRETRAIN_CONFIG_GB300_FP8_CS_V2, which clears the V1 Megatron
# FSDP and offloading): FP8 current scaling (fp8_cs), gradients reduced in bf16 (set_llama31_common_configs),
# userbuffers TP overlap (userbuffers_fp8_b200_h16384_tp4_cp2_mbs1_seqlen8192), the embedding and loss counted in the
# pipeline split (128 of 126 + 2 layers, four per virtual stage), the distributed optimizer with overlapped grad reduce
# and param gather, no CUDA graphs. 64 compute trays of 4 GPUs.
# Model: Llama 3.1 405B (126 layers, hidden 16384, 128 heads, 8 KV heads, FFN 53248).
GPUS_PER_NODE=4
NUM_NODES=64
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 126 --hidden-size 16384 --num-attention-heads 128 --group-query-attention --num-query-groups 8 \
    --ffn-hidden-size 53248 --swiglu --normalization RMSNorm --disable-bias-linear \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 128256 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 1 --global-batch-size 1536 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 4 --pipeline-model-parallel-size 8 \
    --sequence-parallel --tp-comm-overlap \
    --num-virtual-stages-per-pipeline-rank 4 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --train-iters 50 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
