"""Counts what torch dispatches: every op that moves data adds one read of each tensor input and one write of each output
(an expanded dimension read once); matrix products are recorded as their (M, N, K) instead; views (complex and
conjugate views included), metadata ops and zero-element tensors count nothing.
``SHARDLENS_TRAFFIC_LOG=1`` prints each counted op to stderr. Shared by the adapter and layer traffic probes.
"""
import os
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

# Grouped products (MoE experts) are recorded by their stacked shape: (Σ M, N, K) or, for a weight gradient, (M, N, Σ K).
MATMULS = {"mm", "addmm", "bmm", "baddbmm", "_grouped_mm"}
# Ops that make views or read metadata: no kernel moves data.
NO_DATA = {"t", "transpose", "view", "_unsafe_view", "reshape", "expand", "permute", "detach", "alias", "unsqueeze",
           "squeeze", "as_strided", "slice", "select", "split", "_reshape_alias", "lift_fresh", "lift_fresh_copy",
           "empty", "empty_like", "empty_strided", "zeros_like", "ones_like", "new_empty", "new_empty_strided",
           "new_zeros", "is_same_size", "_has_compatible_shallow_copy_type", "sym_size", "sym_stride", "numel", "dim",
           "_to_copy_noop", "view_as_complex", "view_as_real", "_conj"}


def nbytes(t):
    """Bytes a kernel touches reading or writing ``t``: an expanded (stride-0) dimension is read once, as its storage
    holds it (``repeat_kv``'s expand, then copy, reads the k/v heads once each)."""
    if not isinstance(t, torch.Tensor):
        return 0
    n = 1
    for size, stride in zip(t.shape, t.stride()):
        n *= size if stride != 0 else 1
    return n * t.element_size()


class Traffic(TorchDispatchMode):
    """Sums data bytes and matrix-product shapes of the ops dispatched while active."""

    def __init__(self):
        super().__init__()
        self.bytes = 0
        self.gemms = []
        self.log = os.environ.get("SHARDLENS_TRAFFIC_LOG") == "1"

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if name in NO_DATA:
            return out
        if name in MATMULS:
            a, b = (args[1], args[2]) if name in ("addmm", "baddbmm") else (args[0], args[1])
            self.gemms.append([int(a.shape[-2]), int(b.shape[-1]), int(a.shape[-1])])
            return out
        ins = [t for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        outs = [t for t in tree_leaves(out) if isinstance(t, torch.Tensor)]
        # An in-place op reads its input and writes it again: both count, as for any op.
        moved = sum(nbytes(t) for t in ins) + sum(nbytes(t) for t in outs)
        self.bytes += moved
        if self.log:
            print(f"{name} {[tuple(t.shape) for t in ins]} -> {[tuple(t.shape) for t in outs]} {moved}", file=sys.stderr)
        return out
