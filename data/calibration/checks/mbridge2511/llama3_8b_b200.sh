#!/bin/bash
# Megatron-Bridge performance summary, 25.11 NeMo container, Pre-Training, DGX-B200 (docs/performance-summary-archive.md):
# LLAMA3_8B, 8 GPUs, FP8-CS, GBS 128, MBS 2, seq 8192, FSDP 0, TP 1 PP 1 CP 1; measured 30624 tokens/s/GPU.
# A check row (never fitted). Settings of the 25.11 performance scripts (Megatron-Bridge v0.2.2,
# scripts/performance/configs/llama3/: llama3_8b_b200_config with LLAMA3_8B_B200_FP8_CS_BASE_CONFIG): FP8 current
# scaling in every layer (utils/helpers.py get_precision_config "fp8_cs": tensorwise, fp8_param_gather,
# first_last_layers_bf16 False), gradients reduced in bf16 (set_llama3_common_configs), the distributed optimizer with
# overlapped grad reduce and param gather (recipes/llama/llama3.py _llama3_common), TE cross-entropy fusion
# (set_common_perf_overrides), no recomputation. Its CUDA graph of the whole iteration (cuda_graph_impl "local") is not
# modelled apart: kernel gaps are the fitted ones. Model: Llama 3 8B (32 layers, hidden 4096, 32 heads, 8 KV heads,
# FFN 14336).
GPUS_PER_NODE=8
NUM_NODES=1
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 32 --hidden-size 4096 --num-attention-heads 32 --group-query-attention --num-query-groups 8 \
    --ffn-hidden-size 14336 --swiglu --normalization RMSNorm --disable-bias-linear \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 128256 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 8192 --max-position-embeddings 8192 \
    --micro-batch-size 2 --global-batch-size 128 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 \
    --train-iters 50 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
