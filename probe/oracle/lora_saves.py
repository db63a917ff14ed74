"""What LoRA changes in the tensors a Llama block saves for backward: a torchtitan-style block (two RMSNorms, q/k/v/o,
SDPA, SwiGLU) whose linears are either trained or frozen with low-rank adapters, y = W·x + B·A·dropout(x). Real
(small) bf16 tensors on a CPU; saved tensors are counted through ``torch.autograd.graph.saved_tensors_hooks``, distinct
storages only, parameters excluded. Each variant's bytes are printed; their differences isolate the linears' and the
adapters' saves (the norms', SDPA's and SwiGLU's own saves are the same in every variant).

Variants: "full" (every weight trained), "frozen" (every weight frozen, no adapter), "all_p0" (adapters on all seven
projections, no dropout), "qv_drop" (q and v adapted, one dropout each, p 0.1), "qv_fused" (q and v adapted through one
dropout shared by the q/k/v adapters, as a fused qkv projection does).

Usage: ``python -m oracle.lora_saves T h f r`` prints JSON {variant: bytes, "torch": version}.
"""
import json
import sys

import torch
import torch.nn.functional as F

HEADS, KV_HEADS = 4, 2


def saved_bytes(fn, x, params):
    """Distinct storages saved for backward by one forward of ``fn``, parameters excluded."""
    seen = {}

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in params:
            seen[st.data_ptr()] = st.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(x)
    out.float().sum().backward()
    return sum(seen.values())


def measure(tokens, dim, hidden, rank, variant):
    torch.manual_seed(0)
    bf = torch.bfloat16
    hd = dim // HEADS
    shapes = {"q": (dim, dim), "k": (KV_HEADS * hd, dim), "v": (KV_HEADS * hd, dim), "o": (dim, dim),
              "gate": (hidden, dim), "up": (hidden, dim), "down": (dim, hidden)}
    trained = variant == "full"
    w = {n: torch.randn(*s, dtype=bf, requires_grad=trained) for n, s in shapes.items()}
    targets = {"all_p0": set(shapes), "qv_drop": {"q", "v"}, "qv_fused": {"q", "v"}}.get(variant, set())
    p = 0.1 if variant in ("qv_drop", "qv_fused") else 0.0
    a = {n: torch.randn(rank, shapes[n][1], dtype=bf, requires_grad=True) for n in targets}
    b = {n: torch.randn(shapes[n][0], rank, dtype=bf, requires_grad=True) for n in targets}
    params = {t.untyped_storage().data_ptr() for t in [*w.values(), *a.values(), *b.values()]}

    def lin(x, n, dropped=None):
        y = F.linear(x, w[n])
        if n in targets:
            xd = dropped if dropped is not None else (F.dropout(x, p) if p > 0 else x)
            y = y + F.linear(F.linear(xd, a[n]), b[n])
        return y

    def block(x):
        h1 = F.rms_norm(x, (dim,))
        # A fused qkv projection runs one dropout for its q/k/v adapters.
        shared = F.dropout(h1, p) if variant == "qv_fused" else None
        q = lin(h1, "q", shared).view(1, tokens, HEADS, hd).transpose(1, 2)
        k = lin(h1, "k", shared).view(1, tokens, KV_HEADS, hd).transpose(1, 2)
        v = lin(h1, "v", shared).view(1, tokens, KV_HEADS, hd).transpose(1, 2)
        att = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x2 = x + lin(att.transpose(1, 2).reshape(1, tokens, dim), "o")
        h2 = F.rms_norm(x2, (dim,))
        return x2 + lin(F.silu(lin(h2, "gate")) * lin(h2, "up"), "down")

    x = torch.randn(1, tokens, dim, dtype=bf, requires_grad=True)
    return saved_bytes(block, x, params)


if __name__ == "__main__":
    t, h, f, r = (int(v) for v in sys.argv[1:5])
    out = {v: measure(t, h, f, r, v) for v in ("full", "frozen", "all_p0", "qv_drop", "qv_fused")}
    out["torch"] = torch.__version__
    json.dump(out, sys.stdout)
