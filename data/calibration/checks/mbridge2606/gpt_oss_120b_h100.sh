#!/bin/bash
# Megatron-Bridge performance summary, 26.06 NeMo container, DGX-H100 (docs/performance-summary-archive.md):
# GPT OSS 120B, 64 GPUs, BF16, GBS 1280, MBS 1, seq 4096, FSDP 0, TP 1 PP 4 CP 1 EP 8; measured 5824 tokens/s/GPU.
# A check row (never fitted). Settings of the recipe gpt_oss_120b_pretrain_64gpu_h100_bf16_config
# (src/megatron/bridge/perf_recipes/gpt_oss/h100/gpt_oss.py over recipes/gpt_oss/h100/gpt_oss.py): BF16 with gradients
# reduced in bf16 (_perf_precision), no sequence parallelism, selective recomputation of the norms and the MoE
# activation, the all-to-all dispatcher with grouped GEMMs and permute fusion, balanced routing
# (moe_router_force_load_balancing), the distributed optimizer with overlapped grad reduce and param gather
# (recipes/common.py _pretrain_common), TE cross-entropy fusion (_benchmark_common). Model: openai/gpt-oss-120b
# config.json (36 layers, hidden 2880, 64 heads of 64, 8 KV heads, 128 experts of 2880, top 4, biases, untied,
# vocabulary 201,088; sliding window 128 on every other layer from the first, as the bridge's provider sets
# window_size (128, 0) and window_attn_skip_freq 2). Its attention sinks (gpt_oss_bridge.py: softmax_type learnable) are
# timed as plain fused attention (warning attention-sink-timing).
GPUS_PER_NODE=8
NUM_NODES=8
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 36 --hidden-size 2880 --num-attention-heads 64 --group-query-attention --num-query-groups 8 --kv-channels 64 \
    --ffn-hidden-size 2880 --swiglu --normalization RMSNorm \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 201088 \
    --window-size '(128,0)' --window-attn-skip-freq 2 --softmax-type learnable \
    --num-experts 128 --moe-router-topk 4 --moe-ffn-hidden-size 2880 --expert-model-parallel-size 8 \
    --moe-token-dispatcher-type alltoall --moe-grouped-gemm --moe-permute-fusion \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 4096 --max-position-embeddings 131072 \
    --micro-batch-size 1 --global-batch-size 1280 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --grad-reduce-in-bf16 \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --recompute-granularity selective --recompute-modules layernorm moe_act \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 \
    --train-iters 50 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
