"""The memory-bound traffic of one Hugging Face Llama decoder layer, counted as torch dispatches it.

transformers' own ``LlamaDecoderLayer`` (the code the HF Trainer, Accelerate, Axolotl, LLaMA-Factory and TRL run,
``attn_implementation="sdpa"``, no padding mask, so SDPA sees grouped-query heads as on a GPU) runs forward on T tokens
and backward from a random gradient of its output, in one of two precision regimes:

- ``amp``: fp32 weights under autocast to bf16 (the HF Trainer's ``bf16: true``): the residual stream, both RMSNorms
  and the residual adds stay fp32, the projections and the MLP activation run in bf16;
- ``bf16``: the whole layer in bf16 (DeepSpeed's bf16 engine, FSDP's mixed precision, ``torch_dtype: bfloat16``).

Every op that moves data counts one read of each tensor input and one write of each output (oracle.traffic
``Traffic``), and one kernel; matrix products are recorded apart, and the attention kernel (SDPA forward and backward)
is left out, as the step-time model times it on its own. Rotary tables are built before the layer (the model builds
them once per forward). CPU and CUDA run the same aten ops here: the layer's norm is written out in Python, and the
autograd formulas are the device-independent ones of tools/autograd/derivatives.yaml.

transformers' Qwen3 layer (its q and k RMSNorms over each head) runs the same way (``qwen3_amp``, ``qwen3_bf16``),
and torchtitan's Llama block of 2024 in bf16 (``titan2024``): the oracle's torchtitan attention and feed-forward
(oracle.titan) between two RMSNorms as torchtitan's own class wrote them then (norm_type "rmsnorm").

Usage: ``python -m oracle.layer_traffic hidden ffn heads kv_heads T`` prints JSON {"amp"|"bf16"|"qwen3_amp"|
"qwen3_bf16"|"titan2024": {"fwd": {"bytes", "kernels", "gemms"}, "bwd": {...}}, "torch": version, "transformers":
version}.
"""
import json
import sys

import torch
import transformers
from transformers import LlamaConfig, Qwen3Config
from transformers.models.llama.modeling_llama import LlamaDecoderLayer, LlamaRotaryEmbedding
from transformers.models.qwen3.modeling_qwen3 import Qwen3DecoderLayer, Qwen3RotaryEmbedding

from torch import nn

from . import titan
from .traffic import Traffic

ATTENTION = ("scaled_dot_product", "_flash_attention", "_efficient_attention")
FAMILIES = {
    "llama": (LlamaConfig, LlamaDecoderLayer, LlamaRotaryEmbedding),
    "qwen3": (Qwen3Config, Qwen3DecoderLayer, Qwen3RotaryEmbedding),
}


class LayerTraffic(Traffic):
    """Traffic without the attention kernel, counting the data-moving kernels as well."""

    def __init__(self):
        super().__init__()
        self.kernels = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.overloadpacket.__name__
        if any(a in name for a in ATTENTION):
            return func(*args, **(kwargs or {}))
        before, gemms = self.bytes, len(self.gemms)
        out = super().__torch_dispatch__(func, types, args, kwargs)
        if self.bytes != before or len(self.gemms) != gemms:
            self.kernels += 1
        return out


def measure(forward, autocast=False):
    """Counts the forward of ``forward()`` (under CPU autocast to bf16 when asked) and the backward from a random
    gradient of its output."""
    fwd, bwd = LayerTraffic(), LayerTraffic()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        with fwd:
            out = forward()
    y = out[0] if isinstance(out, tuple) else out
    grad = torch.randn_like(y)
    if bwd.log:
        print("-- backward", file=sys.stderr)
    with bwd:
        y.backward(grad)
    return {k: {"bytes": t.bytes, "kernels": t.kernels, "gemms": t.gemms} for k, t in (("fwd", fwd), ("bwd", bwd))}


def run(hidden, ffn, heads, kv_heads, tokens, regime, family="llama"):
    """transformers' decoder layer of ``family`` (Llama, or Qwen3 with its q/k RMSNorms) in ``regime``."""
    torch.manual_seed(0)
    make, layer_cls, rotary_cls = FAMILIES[family]
    config = make(hidden_size=hidden, intermediate_size=ffn, num_attention_heads=heads, num_key_value_heads=kv_heads,
                  head_dim=hidden // heads, num_hidden_layers=1, attention_dropout=0.0)
    config._attn_implementation = "sdpa"
    dtype = torch.float32 if regime == "amp" else torch.bfloat16
    layer = layer_cls(config, 0).to(dtype).train()
    x = torch.randn(1, tokens, hidden, dtype=dtype, requires_grad=True)
    positions = torch.arange(tokens).unsqueeze(0)
    with torch.no_grad():
        cos, sin = rotary_cls(config)(x, positions)
    return measure(lambda: layer(x, attention_mask=None, position_ids=positions, position_embeddings=(cos, sin)),
                   autocast=regime == "amp")


class UpcastRMSNorm(nn.Module):
    """torchtitan's ``RMSNorm`` of 2024 (torchtitan/models/norms.py, norm_type "rmsnorm", the default until 2025-04):
    ``x * rsqrt(mean(x²) + eps)`` on ``x.float()``, ``type_as(x)``, times the weight."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def run_titan(hidden, ffn, heads, kv_heads, tokens):
    """torchtitan's Llama block of 2024 in bf16 (FSDP2's bf16 parameters): the oracle's torchtitan attention and
    feed-forward (complex rotary in fp32, repeat_kv by expand and reshape, SDPA) between two upcasting RMSNorms."""
    torch.manual_seed(0)
    m = {"hiddenSize": hidden, "headDim": hidden // heads, "heads": heads, "kvHeads": kv_heads}
    block = titan.Block({**m, "ffnSize": ffn}, "flash", False)
    block.attention_norm, block.ffn_norm = UpcastRMSNorm(hidden), UpcastRMSNorm(hidden)
    block = block.to(torch.bfloat16).train()
    table = titan.rope_table(hidden // heads, tokens)
    x = torch.randn(1, tokens, hidden, dtype=torch.bfloat16, requires_grad=True)
    return measure(lambda: block(x, table))


def main(argv):
    hidden, ffn, heads, kv_heads, tokens = (int(x) for x in argv[:5])
    out = {r: run(hidden, ffn, heads, kv_heads, tokens, r) for r in ("amp", "bf16")}
    out.update({f"qwen3_{r}": run(hidden, ffn, heads, kv_heads, tokens, r, "qwen3") for r in ("amp", "bf16")})
    out["titan2024"] = run_titan(hidden, ffn, heads, kv_heads, tokens)
    out.update({"torch": torch.__version__, "transformers": transformers.__version__})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
