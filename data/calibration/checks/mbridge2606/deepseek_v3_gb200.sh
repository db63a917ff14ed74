#!/bin/bash
# Megatron-Bridge performance summary, 26.06 NeMo container, DGX-GB200 (docs/performance-summary-archive.md):
# DeepSeekV3, 256 GPUs, MXFP8, GBS 4096, MBS 1, seq 4096, TP 1 PP 4 CP 1 VP 4 EP 64; measured 4969 tokens/s/GPU.
# A check row (never fitted). Settings of the 26.06 performance scripts (Megatron-Bridge 63b08b397,
# scripts/performance/configs/deepseek/: deepseek_v3_pretrain_config_gb200 with DEEPSEEK_V3_PRETRAIN_CONFIG_GB200_FP8_MX_V2):
# MXFP8 (utils/precision.py "fp8_mx": e4m3, recipe mxfp8, fp8_param_gather), selective recomputation of the MLA up
# projections only (recompute_modules ["mla_up_proj"]), the flex dispatcher with the HybridEP backend, balanced routing
# (moe_router_force_load_balancing), the EP all-to-all overlap with delayed weight gradients, the whole
# forward-backward pass as one CUDA graph (cuda_graph_impl full_iteration), Transformer Engine's fused grouped MLP,
# gradients reduced in bf16, one multi-token-prediction layer, and the recipe's layout for PP 4 × VP 4
# (recipes/deepseek/deepseek_v3.py set_deepseek_v3_pipeline_model_parallel_layout: the embedding and 4 layers, 14
# stages of 4, then 1 layer with the MTP layer and the loss). 64 compute trays of 4 GPUs; an EP group of 64 shares one
# NVLink domain. Not written, as in the Qwen3 rows: the full-iteration graph's padding of each rank's expert buffers
# (set_full_iter_cg_configs, moe_expert_rank_capacity_factor 1.5), which sizes buffers; the router runs on the routed
# tokens. Model: DeepSeek-V3 config.json (61 layers, the first 3 dense with 18,432-wide MLPs, hidden 7,168, 128 heads,
# MLA with q rank 1,536, kv rank 512, 128 + 64 wide query/key heads and 128-wide values, 256 routed experts of 2,048
# and one shared, top 8 of 8 groups with 4 chosen, vocabulary 129,280).
GPUS_PER_NODE=4
NUM_NODES=64
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes $NUM_NODES pretrain_gpt.py \
    --use-mcore-models \
    --num-layers 61 --hidden-size 7168 --ffn-hidden-size 18432 --num-attention-heads 128 \
    --multi-latent-attention --q-lora-rank 1536 --kv-lora-rank 512 --qk-head-dim 128 --qk-pos-emb-head-dim 64 \
    --v-head-dim 128 --qk-layernorm \
    --swiglu --normalization RMSNorm --disable-bias-linear \
    --position-embedding-type rope --untie-embeddings-and-output-weights --vocab-size 129280 \
    --num-experts 256 --moe-layer-freq '([0]*3+[1]*58)' --moe-ffn-hidden-size 2048 \
    --moe-shared-expert-intermediate-size 2048 --moe-router-topk 8 --moe-router-num-groups 8 --moe-router-group-topk 4 \
    --moe-router-score-function sigmoid --moe-router-enable-expert-bias --moe-router-topk-scaling-factor 2.5 \
    --moe-router-force-load-balancing --expert-model-parallel-size 64 \
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-grouped-gemm \
    --overlap-moe-expert-parallel-comm --delay-wgrad-compute --cuda-graph-impl full_iteration \
    --mtp-num-layers 1 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 1 --global-batch-size 4096 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format e4m3 --fp8-recipe mxfp8 --fp8-param-gather --grad-reduce-in-bf16 \
    --recompute-granularity selective --recompute-modules mla_up_proj \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 4 \
    --pipeline-model-parallel-layout 'Et*4|(t*4|)*14tmL' \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
