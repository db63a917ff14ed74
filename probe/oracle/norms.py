"""RMSNorm as a GPU runs ``torch.nn.RMSNorm``: CUDA builds of torch dispatch ``F.rms_norm`` to the fused
``aten::_fused_rms_norm`` kernel (aten/src/ATen/native/cuda/layer_norm_kernel.cu; its autograd formula in
tools/autograd/derivatives.yaml saves the input, the weight and the fp32 ``rstd`` of b·s elements), while a CPU build
decomposes it into eager ops that keep fp32 copies of the input and of the normalised output. The oracle measures what
the GPU keeps: an autograd Function that allocates the fused kernel's outputs and saves what it saves (values are
irrelevant on fake tensors). Models with a hand-written norm (transformers' LlamaRMSNorm) keep their eager ops.
"""
import torch
from torch import nn

F32 = torch.float32


class _FusedRMSNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight):
        out = torch.empty_like(x)
        # rstd: one fp32 value per token, shape (…, 1).
        rstd = torch.empty_like(x[..., :1], dtype=F32)
        ctx.save_for_backward(x, weight, rstd)
        return out

    @staticmethod
    def backward(ctx, g):
        x, weight, _rstd = ctx.saved_tensors
        return torch.empty_like(x), torch.empty_like(weight)


class FusedRMSNorm(nn.RMSNorm):
    """nn.RMSNorm whose forward saves what the CUDA kernel saves."""

    def forward(self, x):
        return _FusedRMSNorm.apply(x, self.weight)
