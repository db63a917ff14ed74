#!/bin/bash
# Hugging Face Trainer launch with DeepSpeed: the "auto" values in ds_config_zero3.json are filled from these flags.
deepspeed --num_gpus 8 run_clm.py \
    --deepspeed ds_config_zero3.json \
    --model_name_or_path meta-llama/Llama-3.1-8B \
    --dataset_name wikitext --dataset_config_name wikitext-103-raw-v1 \
    --per_device_train_batch_size 4 \
    --gradient_accumulation_steps 2 \
    --block_size 4096 \
    --bf16 \
    --gradient_checkpointing \
    --do_train --output_dir /tmp/clm
