"""The layout's engine wrappers on a fake process group: device mesh, DTensor tensor/sequence parallelism (torchtitan's
plan), FSDP2 ``fully_shard`` (per block + root, ``MixedPrecisionPolicy``), HSDP, context parallelism and DDP buckets.

Mesh dimensions follow torchtitan (torchtitan/distributed/parallel_dims.py): pp, dp_replicate, dp_shard, cp, tp; FSDP
shards over dp_shard × cp (the flattened "dp_shard_cp" dimension), HSDP replicates over dp_replicate.
"""
import torch
from torch.distributed.device_mesh import init_device_mesh

from .precision import BF16, F32


def build_mesh(par):
    dims = [("pp", par.get("pp", 1)), ("dp_replicate", par.get("dpReplicate", 1)), ("dp_shard", par.get("dpShard", 1)),
            ("cp", par.get("cp", 1)), ("tp", par.get("tp", 1))]
    shape = tuple(n for _, n in dims)
    names = tuple(name for name, _ in dims)
    return init_device_mesh("cpu", shape, mesh_dim_names=names)


def fsdp_mesh(mesh, par):
    """The mesh FSDP shards over: (dp_replicate, dp_shard·cp) for HSDP, else dp_shard·cp."""
    mesh["dp_shard", "cp"]._flatten("dp_shard_cp")
    if par.get("dpReplicate", 1) > 1:
        return mesh["dp_replicate", "dp_shard_cp"]
    return mesh["dp_shard_cp"]


def apply_titan_tp(model, tp_mesh, loss_parallel=True):
    """torchtitan's apply_tp (torchtitan/models/llama3/infra/parallelize.py): sequence-parallel norms, colwise
    q/k/v and w1/w3, rowwise wo and w2 to Shard(1), embedding rowwise to Shard(1), output colwise (vocab-sharded
    logits with loss parallel)."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)
    top = {}
    if model.tok_embeddings is not None:
        top["tok_embeddings"] = RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1))
    if model.norm is not None:
        top["norm"] = SequenceParallel()
        top["output"] = ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1) if loss_parallel else Replicate(),
                                        use_local_output=not loss_parallel)
    if top:
        parallelize_module(model, tp_mesh, top)
    for block in model.layers.values():
        if not hasattr(block.feed_forward, "w1"):
            raise ValueError("tensor parallelism of MoE layers is not reproduced by the oracle")
        plan = {
            "attention_norm": SequenceParallel(),
            "attention": PrepareModuleInput(input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None)),
            "attention.wq": ColwiseParallel(), "attention.wk": ColwiseParallel(), "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
            "ffn_norm": SequenceParallel(),
            "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "feed_forward.w1": ColwiseParallel(), "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
            "feed_forward.w3": ColwiseParallel(),
        }
        parallelize_module(block, tp_mesh, plan)


def apply_fsdp(model, mesh, regime, training, reshard_after_forward, blocks):
    """fully_shard on every block, then on the root (torchtitan apply_fsdp, Accelerate TRANSFORMER_BASED_WRAP).

    The mixed-precision policy follows the regime: fsdp2 gathers ``param_dtype`` and reduces in ``reduce_dtype``;
    bf16-true and DeepSpeed-like bf16 storage gather what they store.
    """
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    if regime == "fsdp2":
        pd = BF16 if training.get("paramDtype", "bf16") == "bf16" else F32
        rd = F32 if training.get("reduceDtype", "fp32") == "fp32" else BF16
        mp = MixedPrecisionPolicy(param_dtype=pd, reduce_dtype=rd)
    else:
        mp = MixedPrecisionPolicy()
    for block in blocks:
        fully_shard(block, mesh=mesh, mp_policy=mp, reshard_after_forward=reshard_after_forward)
    fully_shard(model, mesh=mesh, mp_policy=mp, reshard_after_forward=reshard_after_forward)


def ddp_buckets(module, grad_dtype=F32):
    """DDP's Reducer (C++, not runnable on fake tensors) keeps one bucket copy of every gradient when
    ``gradient_as_bucket_view=False`` (the torch and Accelerate default): Ψ elements in the gradient dtype."""
    total = sum(p.numel() for p in module.parameters() if p.requires_grad)
    return torch.zeros(total, dtype=grad_dtype)
