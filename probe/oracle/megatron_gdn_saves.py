"""What Megatron-LM's Gated DeltaNet mixer keeps for its backward, counted as torch keeps it.

The forward follows Megatron-LM's ``GatedDeltaNet.forward`` (megatron/core/ssm/gated_delta_net/gdn.py and common.py at
d98e8a64, written here in this probe's own terms): one fused in_proj makes q, k, v, the output gate z, beta and alpha in
[s, b, ·]; the projection is transposed to [b, s, ·] and split into views; flash-linear-attention's ``causal_conv1d``
convolves the q/k/v view; ``_prepare_input_for_gated_delta_rule`` (compiled: Megatron's ``jit_fuser`` is torch.compile)
l2-normalises q and k, repeats them to the value heads and computes the fp32 decay and beta (``_compute_gates``);
``chunk_gated_delta_rule`` runs; ``_apply_gated_norm`` (compiled) normalises the output with Transformer Engine's RMSNorm
and multiplies it by SiLU of the fp32 gate; out_proj takes the result.

The kernels need a GPU, so they are stand-ins that save what their sources save, as given (flash-linear-attention
0.5.1, the release Megatron-LM's pyproject pins): ``CausalConv1dFunction.forward`` ``save_for_backward(x, weight, bias,
…)`` with ``no_guard_contiguous=["x"]`` (the view itself); ``L2NormFunction.forward`` ``save_for_backward(y, rstd)``, rstd
fp32 per row; ``ChunkGatedDeltaRuleFunction.forward`` ``save_for_backward(q, q_rstd, k, k_rstd, v, g, beta_raw, beta,
A, …)`` with g the chunk-local cumulative sum in fp32 and A (B, T, HV, 64) in k's dtype; Transformer Engine's RMSNorm
saves its input and an fp32 reciprocal root per row. They run outside the compiled regions (Triton kernels and
Transformer Engine's extensions are opaque to the partitioner, which can only save their outputs). What is measured:
which tensors the compiled regions save (AOTAutograd's min-cut partitioner, ``aot_eager_decomp_partition``: Inductor's
partitioner without its code generation, so it runs on a CPU), and which storages the views keep alive.

Usage: ``python -m oracle.megatron_gdn_saves T key_heads value_heads key_dim value_dim`` prints JSON {"bytes": distinct
storages saved per token (parameters and the mixer's input excluded), "tensors": [[shape, dtype, bytes]…], "torch"}.
"""
import json
import sys

import torch
import torch.nn.functional as F

BT = 64  # flash-linear-attention's chunk length (chunk_fwd.py: A is T × HV × 64).


class ConvStandIn(torch.autograd.Function):
    """causal_conv1d with SiLU: saves x as passed (a view of the projection) and the weight."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        W = w.shape[-1]
        xt = F.pad(x.transpose(1, 2).float(), (W - 1, 0))
        y = F.conv1d(xt, w.float().unsqueeze(1), groups=w.shape[0]).transpose(1, 2)
        return F.silu(y).to(x.dtype)

    @staticmethod
    def backward(ctx, dy):
        x, w = ctx.saved_tensors
        return torch.zeros_like(x), torch.zeros_like(w)


class L2NormStandIn(torch.autograd.Function):
    """l2norm: saves its output and an fp32 reciprocal norm per row."""

    @staticmethod
    def forward(ctx, x):
        xf = x.float()
        rstd = torch.rsqrt((xf * xf).sum(-1) + 1e-6)
        y = (xf * rstd.unsqueeze(-1)).to(x.dtype)
        ctx.save_for_backward(y, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, rstd = ctx.saved_tensors
        return dy * 1


class RuleStandIn(torch.autograd.Function):
    """chunk_gated_delta_rule without in-kernel l2norm or gate: saves q, k, v, the cumulative decay (fp32), beta and A."""

    @staticmethod
    def forward(ctx, q, k, v, g, beta):
        B, T, HV = g.shape
        gc = g.float().cumsum(1)
        A = torch.zeros(B, T, HV, BT, dtype=k.dtype)
        ctx.save_for_backward(q, None, k, None, v, gc, beta, beta, A)
        return v * 1

    @staticmethod
    def backward(ctx, do):
        q, _, k, _, v, gc, beta, _, A = ctx.saved_tensors
        return torch.zeros_like(q), torch.zeros_like(k), do * 1, torch.zeros(gc.shape, dtype=torch.float32), torch.zeros_like(beta)


class TERMSNormStandIn(torch.autograd.Function):
    """Transformer Engine's RMSNorm: saves its input and an fp32 reciprocal root per row; the output in the input's dtype."""

    @staticmethod
    def forward(ctx, x, w):
        xf = x.float()
        rs = torch.rsqrt((xf * xf).mean(-1) + 1e-6)
        ctx.save_for_backward(x, w, rs)
        return (xf * rs.unsqueeze(-1) * w.float()).to(x.dtype)

    @staticmethod
    def backward(ctx, dy):
        x, w, rs = ctx.saved_tensors
        return dy * 1, torch.zeros_like(w)


def compute_gates(A_log, dt_bias, beta, alpha):
    """_compute_gates: the fp32 decay and beta's sigmoid."""
    g = -A_log.exp() * F.softplus(alpha.float() + dt_bias)
    return g, beta.sigmoid().contiguous()


def prepare_before_norm(qkv, k_dim, v_dim, batch, seq, dk, dv):
    """_prepare_input_for_gated_delta_rule up to the l2norm (the Triton l2norm is opaque to the compiler)."""
    qk, value = torch.split(qkv, [2 * k_dim, v_dim], dim=-1)
    return qk.reshape(batch, seq, -1, dk).contiguous(), value.reshape(batch, seq, -1, dv).contiguous()


def prepare_after_norm(qk, rep, heads_k):
    """The rest: split q and k, repeat them to the value heads, make them contiguous."""
    q, k = torch.split(qk, [heads_k, heads_k], dim=2)
    if rep > 1:
        q = q.repeat_interleave(rep, dim=2)
        k = k.repeat_interleave(rep, dim=2)
    return q.contiguous(), k.contiguous()


def gate_tail(y, gate):
    """_apply_gated_norm after the norm: y · SiLU(gate in fp32), cast back."""
    gate = gate.reshape(-1, gate.shape[-1])
    return (y * F.silu(gate.float())).to(torch.bfloat16)


def measure(T, Hk, Hv, dk, dv, hidden=64, W=4):
    torch.manual_seed(0)
    bf = torch.bfloat16
    k_dim, v_dim, rep = Hk * dk, Hv * dv, Hv // Hk
    width = 2 * k_dim + 2 * v_dim + 2 * Hv
    in_w = torch.nn.Parameter(torch.randn(width, hidden, dtype=bf) * 0.05)
    conv_w = torch.nn.Parameter(torch.randn(2 * k_dim + v_dim, W, dtype=bf))
    A_log = torch.nn.Parameter(torch.randn(Hv, dtype=bf))
    dt_bias = torch.nn.Parameter(torch.randn(Hv, dtype=bf))
    norm_w = torch.nn.Parameter(torch.ones(dv, dtype=bf))
    out_w = torch.nn.Parameter(torch.randn(hidden, v_dim, dtype=bf) * 0.05)
    params = [in_w, conv_w, A_log, dt_bias, norm_w, out_w]
    backend = "aot_eager_decomp_partition"
    gates_c = torch.compile(compute_gates, backend=backend)
    before_c = torch.compile(prepare_before_norm, backend=backend)
    after_c = torch.compile(prepare_after_norm, backend=backend)
    tail_c = torch.compile(gate_tail, backend=backend)

    x = torch.randn(T, 1, hidden, dtype=bf, requires_grad=True)  # [s, b, h]: the mixer's input
    skip = {p.untyped_storage().data_ptr() for p in params} | {x.untyped_storage().data_ptr()}
    seen, tensors = set(), []

    def pack(t):
        st = t.untyped_storage()
        if st.data_ptr() not in seen and st.data_ptr() not in skip:
            seen.add(st.data_ptr())
            tensors.append([list(t.shape), str(t.dtype), st.nbytes()])
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        s, b = T, 1
        proj = F.linear(x, in_w)  # in_proj (its input, the block's, is excluded)
        proj = proj.transpose(0, 1)  # [b, s, ·]
        qkv, gate, beta, alpha = torch.split(proj, [2 * k_dim + v_dim, v_dim, Hv, Hv], dim=-1)
        gate = gate.reshape(b, s, -1, dv)
        qkv = ConvStandIn.apply(qkv, conv_w)
        qk, value = before_c(qkv, k_dim, v_dim, b, s, dk, dv)
        qk = L2NormStandIn.apply(qk)
        q, k = after_c(qk, rep, Hk)
        g, beta = gates_c(A_log, dt_bias, beta, alpha)
        gate = gate.contiguous()
        o = RuleStandIn.apply(q, k, value, g, beta)
        y = TERMSNormStandIn.apply(o.reshape(-1, dv), norm_w)
        y = tail_c(y, gate)
        y = y.reshape(b, s, -1).transpose(0, 1).contiguous()
        out = F.linear(y, out_w)  # out_proj saves its input
    out.float().sum().backward()
    return {"bytes": sum(n for _, _, n in tensors) / T, "tensors": tensors, "torch": torch.__version__}


if __name__ == "__main__":
    T, Hk, Hv, dk, dv = (int(a) for a in sys.argv[1:6])
    json.dump(measure(T, Hk, Hv, dk, dv), sys.stdout)
