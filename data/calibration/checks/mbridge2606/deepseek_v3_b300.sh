#!/bin/bash
# Megatron-Bridge performance summary, 26.06 NeMo container, DGX-B300 (docs/performance-summary-archive.md):
# DeepSeekV3, 256 GPUs, MXFP8, GBS 4096, MBS 2, seq 4096, TP 1 PP 8 CP 1 VP n/a EP 8; measured 3541 tokens/s/GPU.
# A check row (never fitted). Settings of the 26.06 performance scripts (Megatron-Bridge 63b08b397,
# scripts/performance/configs/deepseek/: deepseek_v3_pretrain_config_b300 with DEEPSEEK_V3_PRETRAIN_CONFIG_B300_FP8_MX_V2,
# which is the B300 V2 preset for every precision): MXFP8 (utils/precision.py "fp8_mx": e4m3, recipe mxfp8,
# fp8_param_gather), selective recomputation of the MLA up projections only (recompute_modules ["mla_up_proj"]), the
# flex dispatcher with the HybridEP backend and no EP overlap (moe_a2a_overlap False), balanced routing
# (moe_router_force_load_balancing), Transformer Engine CUDA graphs of the attention, the router and the dispatch
# preprocessing per layer (cuda_graph_impl transformer_engine, scope attn, moe_router, moe_preprocess; the rest of each
# MoE layer runs eagerly), gradients reduced in bf16, one multi-token-prediction layer, and the recipe's layout for
# PP 8 (recipes/deepseek/deepseek_v3.py set_deepseek_v3_pipeline_model_parallel_layout: the embedding and 8 layers,
# 6 stages of 8, then 5 layers with the MTP layer and the loss). 32 DGX B300 nodes of 8 GPUs; an EP group of 8 is one
# node. Model: DeepSeek-V3 config.json (61 layers, the first 3 dense with 18,432-wide MLPs, hidden 7,168, 128 heads,
# MLA with q rank 1,536, kv rank 512, 128 + 64 wide query/key heads and 128-wide values, 256 routed experts of 2,048
# and one shared, top 8 of 8 groups with 4 chosen, vocabulary 129,280).
GPUS_PER_NODE=8
NUM_NODES=32
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
    --moe-router-force-load-balancing --expert-model-parallel-size 8 \
    --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep --moe-grouped-gemm \
    --cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router moe_preprocess \
    --mtp-num-layers 1 \
    --hidden-dropout 0.0 --attention-dropout 0.0 \
    --seq-length 4096 --max-position-embeddings 4096 \
    --micro-batch-size 2 --global-batch-size 4096 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --fp8-format e4m3 --fp8-recipe mxfp8 --fp8-param-gather --grad-reduce-in-bf16 \
    --recompute-granularity selective --recompute-modules mla_up_proj \
    --cross-entropy-loss-fusion --cross-entropy-fusion-impl te \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 8 \
    --pipeline-model-parallel-layout 'Et*8|(t*8|)*6t*5mL' \
    --train-iters 100 --lr 1e-4 --data-path /data/tokens_text_document --tokenizer-type NullTokenizer
