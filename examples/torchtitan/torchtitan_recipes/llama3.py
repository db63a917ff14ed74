"""Llama 3 recipes for one 8-GPU node, in torchtitan's Python configuration style (torchtitan >= 2026-02).

Launch one with:  NGPU=8 MODULE=torchtitan_recipes.llama3 CONFIG=llama3_8b_fsdp ./run_train.sh
ShardLens reads every function below without running it: a code lens row per configuration.
"""
from torchtitan.components.optimizer import default_adamw
from torchtitan.config import CompileConfig, ParallelismConfig, TrainingConfig
from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC
from torchtitan.models.llama3 import model_registry
from torchtitan.trainer import Trainer

SEQ_LEN = 8192


def llama3_8b_fsdp() -> Trainer.Config:
    """Llama 3.1 8B: FSDP over the node's 8 GPUs, one 8K sequence per micro-batch."""
    return Trainer.Config(
        model_spec=model_registry("8B"),
        optimizer=default_adamw(lr=3e-4),
        training=TrainingConfig(
            num_tokens_per_microbatch_per_dp_rank=SEQ_LEN,
            max_context_length=SEQ_LEN,
            steps=1_000,
        ),
        parallelism=ParallelismConfig(data_parallel_shard_degree=-1),
        activation_checkpoint=SelectiveAC.Config(),
        compile=CompileConfig(enable=True, components=["model", "loss"]),
    )


def llama3_8b_tp2_32k() -> Trainer.Config:
    """The same model on 32K sequences: TP 2 inside FSDP 4, full recomputation."""
    config = llama3_8b_fsdp()
    config.training.max_context_length = 4 * SEQ_LEN
    config.training.num_tokens_per_microbatch_per_dp_rank = 4 * SEQ_LEN
    config.parallelism.tensor_parallel_degree = 2
    config.activation_checkpoint = FullAC.Config()
    return config


def llama3_70b_fsdp() -> Trainer.Config:
    """Llama 3.1 70B on FSDP alone: 70 B parameters' fp32 states and Adam moments over 8 GPUs do not fit in 80 GB."""
    config = llama3_8b_fsdp()
    config.model_spec = model_registry("70B")
    config.activation_checkpoint = FullAC.Config()
    return config
