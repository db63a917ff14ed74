"""Activation-checkpointing policies as users write them.

- ``full``: every block wrapped with torch's checkpoint_wrapper (non-reentrant, no RNG state), as torchtitan's
  ``_apply_full_ac`` and Megatron's ``--recompute-granularity full --recompute-method uniform --recompute-num-layers 1``
  keep only each block's input.
- ``selective-layer`` (torchtitan ``selective_ac_option = "N"``): every N-th block wrapped (torchtitan
  ``_apply_layer_sac``: a running count, wrapped when count % N == 0).
- ``selective-op`` (torchtitan ``selective_ac_option = "op"``): selective checkpointing whose policy saves the outputs
  of mm, SDPA (flash/efficient), reduce_scatter and max, except every second mm, and recomputes the rest
  (torchtitan ``_save_list`` and ``_custom_policy`` in torchtitan/distributed/activation_checkpoint.py).
- ``hf``: Hugging Face ``gradient_checkpointing_enable()`` (non-reentrant in transformers 5: each decoder layer's
  input is kept).
- ``megatron-selective``: Megatron's default selective recomputation of core attention (handled by the Megatron
  emulation: the attention statistics are not kept).
"""
import math
from collections import defaultdict

import torch
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper

_SAVE = None


def _save_list():
    global _SAVE
    if _SAVE is None:
        ops = torch.ops
        _SAVE = {ops.aten.mm.default, ops.aten._scaled_dot_product_efficient_attention.default,
                 ops.aten._scaled_dot_product_flash_attention.default, ops.aten.max.default}
        rs = getattr(getattr(ops, "_c10d_functional", None), "reduce_scatter_tensor", None)
        if rs is not None:
            _SAVE.add(rs.default)
    return _SAVE


def _op_context():
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
    meta = defaultdict(int)
    save = _save_list()

    def policy(ctx, func, *args, **kwargs):
        key = "recompute" if ctx.is_recompute else "forward"
        if func == torch.ops.aten.mm.default:
            meta[key] += 1
        keep = func in save and not (func == torch.ops.aten.mm.default and meta[key] % 2 == 0)
        return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE
    return create_selective_checkpoint_contexts(policy)


def wrap_blocks(container, ac):
    """Applies a block-level policy to the blocks of a ModuleDict/ModuleList in place; returns how many were wrapped."""
    mode = (ac or {}).get("mode", "none")
    if mode in ("none", "hf", "megatron-selective"):
        return 0
    # Every N-th block; a fractional N (a torchtitan memory budget b as N = 1/(1 - b)) wraps block i when the
    # running count i crosses a multiple of N, floor(L/N) blocks in all (as ShardLens counts them).
    every = max(1.0, float((ac or {}).get("every", 1)))
    wrapped = 0
    count = 0
    for name, block in list(container.named_children()):
        count += 1
        if mode == "selective-layer" and math.floor(count / every) == math.floor((count - 1) / every):
            continue
        if mode == "selective-op":
            new = checkpoint_wrapper(block, context_fn=_op_context, preserve_rng_state=False)
        elif mode in ("full", "selective-layer"):
            new = checkpoint_wrapper(block, preserve_rng_state=False)
        else:
            raise ValueError(f"unknown activation-checkpointing mode '{mode}'")
        container.register_module(name, new)
        wrapped += 1
    return wrapped
