"""What torch.compile's partitioner saves for backward: the bytes a torchtitan SwiGLU FeedForward saves, eager and
compiled with AOTAutograd's min-cut partitioner (``aot_eager_decomp_partition``: the partitioner Inductor uses, without
Inductor's code generation, so it runs on a CPU build). Real (small) tensors; saved tensors are counted through
``torch.autograd.graph.saved_tensors_hooks``, parameters excluded.

Usage: ``python -m oracle.compiled_saves T h f`` prints JSON {"eager": bytes, "compiled": bytes, "shapes": {...}}.
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch import nn


class FeedForward(nn.Module):
    """torchtitan/models/llama3/model/model.py FeedForward: w2(silu(w1(x)) * w3(x)), no biases."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def saved_bytes(fn, x, params):
    """Distinct storages saved for backward by one forward of ``fn`` (parameters excluded), and their shapes."""
    seen, shapes = set(), []

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in seen and st.data_ptr() not in params:
            seen.add(st.data_ptr())
            shapes.append([list(t.shape), st.nbytes()])
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(x)
    out.sum().backward()
    return sum(n for _, n in shapes), shapes


def measure(tokens, dim, hidden):
    torch.manual_seed(0)
    mod = FeedForward(dim, hidden).to(torch.bfloat16)
    params = {p.untyped_storage().data_ptr() for p in mod.parameters()}
    x = torch.randn(1, tokens, dim, dtype=torch.bfloat16, requires_grad=True)
    eager, eager_shapes = saved_bytes(mod, x, params)
    compiled_mod = torch.compile(mod, backend="aot_eager_decomp_partition", fullgraph=True)
    compiled, compiled_shapes = saved_bytes(compiled_mod, x, params)
    return {"eager": eager, "compiled": compiled, "shapes": {"eager": eager_shapes, "compiled": compiled_shapes},
            "torch": torch.__version__}


if __name__ == "__main__":
    t, h, f = (int(a) for a in sys.argv[1:4])
    json.dump(measure(t, h, f), sys.stdout)
