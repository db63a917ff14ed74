"""The memory-bound traffic around a Gated DeltaNet layer's kernels, counted as torch dispatches it.

transformers' own ``Qwen3NextGatedDeltaNet`` and ``Qwen3_5GatedDeltaNet`` (the token mixers of Qwen3-Next's and Qwen3.5's
linear-attention layers) run forward on T tokens and backward from a random gradient of its output, in bf16.
On a GPU it calls causal-conv1d's ``causal_conv1d_fn`` and flash-linear-attention's ``chunk_gated_delta_rule``; here both
are stand-ins that keep the kernels' contracts and move no data of their own, so what is counted is the code around
them (the projections' splits and copies, the q/k/v concatenation, the gates, FLA's ``input_guard`` copies, the gated
RMSNorm) — except the convolution, a memory-bound kernel counted as it moves data: it reads its input and writes its
output forward, and reads both its input and the output gradient and writes the input gradient backward
(causal_conv1d_interface.py ``CausalConv1dFn``). The chunked rule's own time is FLA's published kernel time.

Usage: ``python -m oracle.gdn_traffic hidden key_heads value_heads key_dim value_dim T`` prints JSON
{"qwen3_next"|"qwen3_5": {"fwd": {"bytes", "kernels", "gemms"}, "bwd": {...}}, "torch": version, "transformers":
version}, each mixer in bf16.
"""
import json
import sys

import torch
import transformers
from transformers import Qwen3NextConfig
from transformers.models.qwen3_5 import modeling_qwen3_5 as qwen3_5
from transformers.models.qwen3_5.configuration_qwen3_5 import Qwen3_5TextConfig
from transformers.models.qwen3_next import modeling_qwen3_next as qwen3_next

# Each family's module, config and mixer: Qwen3-Next projects q, k, v and z in one interleaved in_proj_qkvz (and b, a in
# in_proj_ba); Qwen3.5 in four linears, in_proj_qkv, in_proj_z, in_proj_b and in_proj_a.
FAMILIES = {
    "qwen3_next": (qwen3_next, Qwen3NextConfig, "Qwen3NextGatedDeltaNet"),
    "qwen3_5": (qwen3_5, Qwen3_5TextConfig, "Qwen3_5GatedDeltaNet"),
}

from .layer_traffic import LayerTraffic


class MixerTraffic(LayerTraffic):
    """Layer traffic where ``split_with_sizes`` makes views, as ``split`` does (torch.split with a list of sizes)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func.overloadpacket.__name__ == "split_with_sizes":
            return func(*args, **(kwargs or {}))
        return super().__torch_dispatch__(func, types, args, kwargs)


def measure(forward):
    """Counts the forward of ``forward()`` and the backward from a random gradient of its output."""
    fwd, bwd = MixerTraffic(), MixerTraffic()
    with fwd:
        y = forward()
    grad = torch.randn_like(y)
    with bwd:
        y.backward(grad)
    return {k: {"bytes": t.bytes, "kernels": t.kernels, "gemms": t.gemms} for k, t in (("fwd", fwd), ("bwd", bwd))}


class ConvStandIn(torch.autograd.Function):
    """causal-conv1d with SiLU: reads x and writes the output; backward reads x and the output gradient and writes dx."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clone()

    @staticmethod
    def backward(ctx, dout):
        (x,) = ctx.saved_tensors
        return torch.add(dout, x)


def conv_stand_in(x, weight, bias=None, activation=None, **_):
    return ConvStandIn.apply(x)


class RuleStandIn(torch.autograd.Function):
    """FLA's chunked gated delta rule on contiguous inputs: its output and gradients, with no traffic counted."""

    @staticmethod
    def forward(ctx, q, k, v, g, beta):
        ctx.shapes = [t.shape for t in (q, k, v, g, beta)]
        ctx.dtypes = [t.dtype for t in (q, k, v, g, beta)]
        return v.new_empty(v.shape)

    @staticmethod
    def backward(ctx, do):
        return tuple(do.new_empty(s, dtype=d) for s, d in zip(ctx.shapes, ctx.dtypes))


def rule_stand_in(q, k, v, g=None, beta=None, initial_state=None, output_final_state=False, use_qk_l2norm_in_kernel=False, **_):
    # fla-core's input_guard makes every tensor argument contiguous before the kernels run.
    q, k, v, g, beta = (t.contiguous() for t in (q, k, v, g, beta))
    return RuleStandIn.apply(q, k, v, g, beta), None


def run(family, hidden, key_heads, value_heads, key_dim, value_dim, tokens):
    """One Gated DeltaNet mixer of ``family`` in bf16 with the kernels stood in for."""
    torch.manual_seed(0)
    module, make, name = FAMILIES[family]
    module.causal_conv1d_fn = conv_stand_in
    module.torch_chunk_gated_delta_rule = rule_stand_in
    config = make(hidden_size=hidden, linear_num_key_heads=key_heads, linear_num_value_heads=value_heads,
                  linear_key_head_dim=key_dim, linear_value_head_dim=value_dim, num_hidden_layers=1,
                  layer_types=["linear_attention"])
    layer = getattr(module, name)(config, 0).to(torch.bfloat16).train()
    x = torch.randn(1, tokens, hidden, dtype=torch.bfloat16, requires_grad=True)
    return measure(lambda: layer(x))


def main(argv):
    hidden, key_heads, value_heads, key_dim, value_dim, tokens = (int(a) for a in argv[:6])
    out = {f: run(f, hidden, key_heads, value_heads, key_dim, value_dim, tokens) for f in FAMILIES}
    out.update({"torch": torch.__version__, "transformers": transformers.__version__})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
