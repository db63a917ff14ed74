"""Attention kernels as GPUs run them, on fake CPU tensors.

``flash`` calls ``aten._scaled_dot_product_flash_attention`` (the CUDA FlashAttention-2 op: saves q, k, v, the
output and an fp32 log-sum-exp of b·heads·s), or the memory-efficient op where a GPU would (fp32, or v narrower than
q/k); their meta kernels run on fake tensors on any device. ``eager``
materialises the scores as Hugging Face's eager_attention_forward does (q·kᵀ, fp32 softmax cast back, ·v).
``use_gpu_sdpa`` routes ``F.scaled_dot_product_attention`` calls of library models (transformers) to the same op when
a GPU would pick FlashAttention (no mask, no dropout; grouped K/V heads passed as they are, inputs cast to the autocast
dtype as the dispatcher's autocast does); a CPU build would otherwise pick its own kernels.
"""
import contextlib
import math

import torch
import torch.nn.functional as F

_ORIGINAL_SDPA = F.scaled_dot_product_attention


def attend(q, k, v, kind="flash", causal=True, scale=None):
    """(b, heads, s, d) attention; k and v already repeated to the query heads."""
    if kind == "eager":
        scale = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
        scores = torch.matmul(q, k.transpose(2, 3)) * scale
        if causal:
            s, t = q.shape[-2], k.shape[-2]
            mask = torch.ones(s, t, dtype=torch.bool, device=q.device).triu(1)
            scores = scores.masked_fill(mask, float("-inf"))
        probs = torch.softmax(scores, dim=-1, dtype=torch.float32).to(q.dtype)
        return torch.matmul(probs, v)
    if q.dtype == torch.float32 or v.shape[-1] != q.shape[-1]:
        # FlashAttention has no fp32 kernel and needs one head width for q, k and v (torch sdp_utils
        # check_head_dim_size_flash; multi-head latent attention has 192-wide q/k and 128-wide v): GPUs fall back to
        # memory-efficient attention (same saved tensors; the output has v's width), which takes grouped K/V heads
        # only repeated to the query heads (torch sdp_utils: enable_gqa needs flash or math).
        if k.shape[-3] != q.shape[-3]:
            rep = q.shape[-3] // k.shape[-3]
            k, v = k.repeat_interleave(rep, dim=-3), v.repeat_interleave(rep, dim=-3)
        return torch.ops.aten._scaled_dot_product_efficient_attention(q, k, v, None, True, 0.0, causal, scale=scale)[0]
    return torch.ops.aten._scaled_dot_product_flash_attention(q, k, v, 0.0, causal, False, scale=scale)[0]


def _masked_efficient(query, key, value, attn_mask, scale):
    """A boolean mask on a GPU (transformers' sliding-window layers when the window is shorter than the sequence):
    FlashAttention takes no mask, so SDPA runs the memory-efficient kernel, which takes the mask as an additive bias
    in the query's dtype (aten convert_boolean_attn_mask makes a new tensor each call) and keeps it for the backward;
    transformers has already repeated K/V to the query heads (integrations/sdpa_attention.py use_gqa_in_sdpa: no
    native GQA with a mask on CUDA)."""
    bias = torch.zeros(attn_mask.shape, dtype=query.dtype, device=query.device).masked_fill(attn_mask.logical_not(), float("-inf"))
    bias = bias.expand(query.shape[0], query.shape[1], query.shape[2], key.shape[2])
    return torch.ops.aten._scaled_dot_product_efficient_attention(query, key, value, bias, True, 0.0, False, scale=scale)[0]


def _gpu_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    masked = attn_mask is not None and attn_mask.dtype == torch.bool and dropout_p == 0 and query.shape[-3] == key.shape[-3]
    import sys; print('SDPA', attn_mask is not None, getattr(attn_mask, 'dtype', None), tuple(query.shape), tuple(key.shape), masked, file=sys.stderr)
    if (attn_mask is not None and not masked) or dropout_p > 0:
        return _ORIGINAL_SDPA(query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal,
                              scale=scale, enable_gqa=enable_gqa)
    # Under torch.autocast, aten::scaled_dot_product_attention runs in the autocast dtype (autocast's lower-precision
    # op list): the fp32 inputs (e.g. after an fp32 rotary embedding) are cast before the kernel.
    device = query.device.type
    if torch.is_autocast_enabled(device):
        dtype = torch.get_autocast_dtype(device)
        query, key, value = (t.to(dtype) if t.is_floating_point() and t.dtype != dtype else t for t in (query, key, value))
    if masked:
        return _masked_efficient(query, key, value, attn_mask, scale)
    # FlashAttention takes fewer K/V heads than query heads natively (enable_gqa): nothing is repeated.
    return attend(query, key, value, "flash", causal=is_causal, scale=scale)


@contextlib.contextmanager
def use_gpu_sdpa():
    F.scaled_dot_product_attention = _gpu_sdpa
    try:
        yield
    finally:
        F.scaled_dot_product_attention = _ORIGINAL_SDPA
