#!/bin/bash
# Megatron-Bridge performance summary, 26.04.01 NeMo container, Pre-Training, DGX-H100 (docs/performance-summary-archive.md):
# Qwen3_235B_a22B, 256 GPUs, FP8, GBS 8192, MBS 1, seq 4096, TP 2 PP 8 CP 1 VP 4 EP 32; measured 1712 tokens/s/GPU.
# A check row (never fitted). Settings of the recipe qwen3_235b_a22b_pretrain_256gpu_h100_fp8cs_config
# (src/megatron/bridge/perf_recipes/qwen/h100/qwen3_moe.py): FP8 current scaling, no recomputation, sequence parallelism,
# the alltoall dispatcher with the EP all-to-all overlapped across micro-batches (overlap_moe_expert_parallel_comm,
# delay_wgrad_compute; the delayed weight gradients are not modelled apart), balanced routing, and the embedding and loss
# counted in the pipeline split (recipes/qwen/h100/qwen3_moe.py: (94 + 2) / 32 = 3 layers per virtual stage).
# Model: Qwen3-235B-A22B config.json (94 layers, hidden 4096, 64 heads of 128, 4 KV heads, 128 experts of 1536, top 8).
GPUS_PER_NODE=8
NUM_NODES=32
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 94 --hidden-size 4096 --num-attention-heads 64 --group-query-attention --num-query-groups 4 --kv-channels 128 \
    --ffn-hidden-size 12288 --swiglu --normalization RMSNorm --disable-bias-linear --qk-layernorm \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 151936 \
    --num-experts 128 --moe-router-topk 8 --moe-ffn-hidden-size 1536 --expert-model-parallel-size 32 \
    --moe-token-dispatcher-type alltoall --moe-grouped-gemm --overlap-moe-expert-parallel-comm --delay-wgrad-compute \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 8192 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format hybrid --fp8-recipe tensorwise --fp8-param-gather --grad-reduce-in-bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 8 --sequence-parallel \
    --num-virtual-stages-per-pipeline-rank 4 --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
