"""A GPT decoder as megatron-core builds it with Transformer Engine modules (megatron/core/models/gpt/gpt_model.py,
``get_gpt_layer_with_transformer_engine_spec``), at one tensor-parallel rank.

TE kernels do not run on a CPU, so each fused module is an autograd Function that allocates its outputs and saves
for backward exactly what the TE/Megatron source saves (values are irrelevant on fake tensors):
- ``TELayerNormColumnParallelLinear`` (transformer_engine/pytorch/module/layernorm_linear.py, ``prepare_for_saving(
  inputmat, …, ln_out, mu, rsigma)``): the norm input, the norm output (local part under sequence parallelism, gathered
  again in backward) and fp32 rsigma; the gathered GEMM input is freed after the GEMM.
- ``TERowParallelLinear`` (module/linear.py): its input; the output is reduce-scattered under sequence parallelism.
- core attention (TE fused/flash): q, k, v, the output and the fp32 softmax statistics (b·heads·s).
- ``SwiGLUFunction`` (megatron/core/fusions/fused_bias_swiglu.py): saves its input (the fc1 output, 2·ffn wide).
- ``_VocabParallelCrossEntropy`` (megatron/core/tensor_parallel/cross_entropy.py): ``logits.float()``, computed in
  place into the softmax, which is saved; the gradient is returned in the logits' dtype.
Weight gradients go straight into ``main_grad`` (``gradient_accumulation_fusion``, wgrad_gemm_accum_fp32): no weight
``.grad`` is allocated; norm weights and the embedding get a ``.grad`` that Megatron's hook adds to ``main_grad``.
Layout [s, b, h] as in Megatron. Dropout p > 0 keeps 1-byte masks (``bias_dropout_add``); p = 0 allocates none.
"""
import torch
from torch import nn

F32 = torch.float32


def _gather(x, t):
    """All-gather along the sequence (dim 0) to t parts: only the output allocation matters on fake tensors."""
    return x if t == 1 else x.new_empty((x.shape[0] * t,) + tuple(x.shape[1:]))


def _scatter(x, t):
    """Reduce-scatter along the sequence (dim 0)."""
    return x if t == 1 else x.new_empty((x.shape[0] // t,) + tuple(x.shape[1:]))


class _ScatterToSequenceParallel(torch.autograd.Function):
    """The embedding output reduce-scattered to the sequence-parallel region
    (tensor_parallel.mappings.scatter_to_sequence_parallel_region); its backward all-gathers the gradient."""

    @staticmethod
    def forward(ctx, x, t):
        ctx.t = t
        return _scatter(x, t) if t > 1 else x.clone()

    @staticmethod
    def backward(ctx, g):
        return _gather(g, ctx.t), None


class _LnLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, ln_w, w, sp):
        ln_out = torch.empty_like(x)
        rsigma = x.new_empty(x.shape[:-1], dtype=F32)
        total = _gather(ln_out, sp)
        out = total.new_empty(tuple(total.shape[:-1]) + (w.shape[0],))
        del total
        ctx.sp = sp
        ctx.save_for_backward(x, ln_out, rsigma, ln_w, w)
        return out

    @staticmethod
    def backward(ctx, g):
        x, ln_out, rsigma, ln_w, w = ctx.saved_tensors
        total = _gather(ln_out, ctx.sp)  # for the wgrad GEMM, accumulated into main_grad
        dgrad = g.new_empty(tuple(g.shape[:-1]) + (w.shape[1],))
        del total
        dgrad = _scatter(dgrad, ctx.sp)
        return torch.empty_like(x), torch.empty_like(ln_w), None, None


class _RowLinear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, sp):
        out = _scatter(x.new_empty(tuple(x.shape[:-1]) + (w.shape[0],)), sp)
        ctx.sp = sp
        ctx.save_for_backward(x, w)
        return out

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        total = _gather(g, ctx.sp)
        dgrad = total.new_empty(tuple(total.shape[:-1]) + (w.shape[1],))
        del total
        return dgrad, None, None


class _SwiGLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, y):
        ctx.save_for_backward(y)
        return y.new_empty(tuple(y.shape[:-1]) + (y.shape[-1] // 2,))

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return torch.empty_like(y)


class _Attention(torch.autograd.Function):
    """Fused attention on (s, b, heads, d): saves q, k, v (k, v at the KV heads), the output and fp32 statistics."""

    @staticmethod
    def forward(ctx, q, k, v):
        s, b, a, d = q.shape
        out = q.new_empty((s, b, a * d))
        stats = q.new_empty((b, a, s), dtype=F32)
        ctx.save_for_backward(q, k, v, out, stats)
        return out

    @staticmethod
    def backward(ctx, g):
        q, k, v, out, stats = ctx.saved_tensors
        return torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)


class _Rope(torch.autograd.Function):
    """Fused RoPE (apply_rotary_pos_emb with the fused kernel): a new output, nothing saved but the frequencies."""

    @staticmethod
    def forward(ctx, x):
        return torch.empty_like(x)

    @staticmethod
    def backward(ctx, g):
        return torch.empty_like(g)


class _VocabParallelCE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, target):
        softmax = logits.float()  # fp32 copy; max, exp and division happen in place
        loss = softmax.new_empty(target.shape)
        mask = target.new_empty(target.shape, dtype=torch.bool)
        masked = target.clone().view(-1)
        ctx.save_for_backward(softmax, mask, masked)
        return loss

    @staticmethod
    def backward(ctx, g):
        softmax, mask, masked = ctx.saved_tensors
        return softmax, None  # the gradient is formed in place in the softmax; autograd casts it to the logits' dtype


def _dropout(x, p):
    """bias_dropout_add / embedding dropout: a 1-byte mask is saved when p > 0; p = 0 is a plain add."""
    if p <= 0:
        return x
    return torch.nn.functional.dropout(x, p, True)


class Layer(nn.Module):
    def __init__(self, m, tp, sp, dropout):
        super().__init__()
        h, d, a, kv, f = m["hiddenSize"], m["headDim"], m["heads"], m["kvHeads"], m["ffnSize"]
        self.tp, self.sp, self.dropout = tp, (tp if sp else 1), dropout
        self.a, self.kv, self.d = a // tp, max(1, kv // tp), d
        self.ln1 = nn.Parameter(torch.empty(h))
        self.linear_qkv = nn.Parameter(torch.empty((self.a + 2 * self.kv) * d, h))
        self.linear_proj = nn.Parameter(torch.empty(h, self.a * d))
        self.ln2 = nn.Parameter(torch.empty(h))
        self.linear_fc1 = nn.Parameter(torch.empty((2 if m.get("gatedMlp", True) else 1) * f // tp, h))
        self.linear_fc2 = nn.Parameter(torch.empty(h, f // tp))

    def _attention(self, x):
        """megatron-core's Attention.forward: q, k, v are views of the QKV GEMM output (torch.split in
        get_query_key_value_tensors); RoPE replaces q and k, v's view keeps the GEMM output alive until the output
        projection has run and the module returns."""
        s_local, b, _ = x.shape
        qkv = _LnLinear.apply(x, self.ln1, self.linear_qkv, self.sp)
        s = qkv.shape[0]
        q = qkv[..., : self.a * self.d].reshape(s, b, self.a, self.d)
        k = qkv[..., self.a * self.d: (self.a + self.kv) * self.d].reshape(s, b, self.kv, self.d)
        v = qkv[..., (self.a + self.kv) * self.d:].reshape(s, b, self.kv, self.d)
        attn = _Attention.apply(_Rope.apply(q), _Rope.apply(k), v.contiguous())
        return _RowLinear.apply(attn, self.linear_proj, self.sp)

    def forward(self, x):
        h = _dropout(self._attention(x), self.dropout) + x
        y = _LnLinear.apply(h, self.ln2, self.linear_fc1, self.sp)
        y = _SwiGLU.apply(y) if self.linear_fc1.shape[0] == 2 * self.linear_fc2.shape[1] else torch.nn.functional.gelu(y)
        return _dropout(_RowLinear.apply(y, self.linear_fc2, self.sp), self.dropout) + h


class GPT(nn.Module):
    """Embedding (first stage) → layers → final norm + output layer (last stage), at one TP rank."""

    def __init__(self, m, tp=1, sp=False, layers=None, first=True, last=True, dropout=0.0):
        super().__init__()
        h, v = m["hiddenSize"], m["vocabSize"]
        self.tp, self.sp, self.dropout = tp, (tp if sp and tp > 1 else 1), dropout
        ids = range(m["layers"]) if layers is None else layers
        self.embedding = nn.Embedding(v // tp, h) if first else None
        self.layers = nn.ModuleDict({str(i): Layer(m, tp, sp and tp > 1, dropout) for i in ids})
        self.final_norm = nn.Parameter(torch.empty(h)) if last else None
        self.output_layer = nn.Parameter(torch.empty(v // tp, h)) if last else None

    def forward(self, tokens):
        if self.embedding is not None:
            x = self.embedding(tokens.transpose(0, 1))  # [s, b, h] (the TP all-reduce keeps the shape)
            x = _dropout(_ScatterToSequenceParallel.apply(x, self.sp) if self.sp > 1 else x, self.dropout)
        else:
            x = tokens
        for layer in self.layers.values():
            x = layer(x)
        if self.output_layer is None:
            return x
        return _LnLinear.apply(x, self.final_norm, self.output_layer, self.sp)


def loss_fn(logits, labels):
    """compute_language_model_loss: labels to [s, b], vocab-parallel cross entropy, mean."""
    return _VocabParallelCE.apply(logits, labels.transpose(0, 1).contiguous()).mean()
