#!/bin/bash
# Megatron-Bridge performance summary, 26.06 NeMo container, DGX-H100 (docs/performance-summary-archive.md):
# LLAMA3.1_405B, 1024 GPUs, FP8, GBS 1536, MBS 1, seq 8192, TP 8 PP 8 CP 2 VP 8; measured 326 tokens/s/GPU.
# A check row (never fitted). recipe src/megatron/bridge/perf_recipes/llama/h100/llama31.py llama31_405b_pretrain_1024gpu_h100_fp8cs_config: FP8 current scaling
# (bf16_with_fp8_current_scaling_mixed: fp8_recipe tensorwise, fp8_param_gather), grad_reduce_in_fp32 False and the TE
# cross-entropy fusion (perf_recipes/_common.py _perf_precision, _benchmark_common), the embedding and loss counted in the
# pipeline split (recipes/llama/h100/llama3.py account_for_*_in_pipeline_split).
GPUS_PER_NODE=8
NUM_NODES=128
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
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 8 --context-parallel-size 2 \
    --sequence-parallel --tp-comm-overlap \
    --num-virtual-stages-per-pipeline-rank 8 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
