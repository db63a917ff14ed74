"""Precision regimes: how each engine keeps weights, gradients and optimizer states (docs/engine-memory.md).

- ``amp`` (torch.autocast, as HF Trainer/Accelerate DDP and Lightning ``*-mixed`` use it): fp32 weights and
  gradients, no master copy; matmuls run in bf16 under autocast.
- ``fsdp2``: fp32 sharded parameters, gathered in ``param_dtype`` and reduced in ``reduce_dtype``
  (``MixedPrecisionPolicy``; applied in parallel.py).
- ``megatron``: bf16 weights, a contiguous ``main_grad`` buffer (fp32, bf16 with ``--grad-reduce-in-bf16``) of every
  parameter, fp32 master weights and Adam states (sharded over DP with ``--use-distributed-optimizer``). Buckets are
  views into the buffer (megatron/core/distributed/param_and_grad_buffer.py); the optimizer gives each master shard
  ``main_grad.float()`` as its gradient (a copy only when main_grad is bf16; megatron/core/optimizer/optimizer.py).
- ``deepspeed``: bf16 weights; DeepSpeed's own engine keeps the rest (probe/oracle/ds_engine.py).
- ``bf16-true`` (torchtune, LitGPT ``bf16-true``): everything bf16, optimizer states included.
- ``fp32``: everything fp32.
"""
import contextlib
import math

import torch

BF16, F32 = torch.bfloat16, torch.float32
REGIMES = ("amp", "fsdp2", "megatron", "deepspeed", "bf16-true", "fp32")


def param_dtype(regime):
    """dtype the module's parameters are stored in."""
    return BF16 if regime in ("megatron", "deepspeed", "bf16-true") else F32


def forward_context(regime):
    """torch.autocast for the amp regime; nothing otherwise."""
    if regime == "amp":
        return torch.autocast("cpu", dtype=BF16)
    return contextlib.nullcontext()


def make_adamw(params, kind, impl):
    """torch.optim for the plan's optimizer with the engine's implementation (fused, foreach or for-loop)."""
    kw = {"lr": 1e-4}
    if kind in ("adamw", "adam"):
        kw.update(fused=impl == "fused", foreach=impl == "foreach")
        return (torch.optim.AdamW if kind == "adamw" else torch.optim.Adam)(params, **kw)
    if kind in ("sgd", "sgd-momentum"):
        return torch.optim.SGD(params, momentum=0.9 if kind == "sgd-momentum" else 0.0,
                               foreach=impl == "foreach", **kw)
    raise ValueError(f"optimizer '{kind}' is not reproduced by the oracle (adamw, adam, sgd, sgd-momentum are)")


class FlatMasterOptimizer(torch.optim.Optimizer):
    """fp32 master shards + Adam of Megatron's (distributed) optimizer, one flat tensor per gradient buffer (one per
    model chunk, each sharded over DP on its own, distrib_optimizer.py ``_build_model_gbuf_range``).

    ``grad_sources[i]()`` returns this rank's gradient shard of buffer i as the engine holds it (a view of main_grad);
    the step turns each into fp32 as the engine does, then runs fused Adam.
    """

    def __init__(self, numels, grad_sources, kind, impl="fused"):
        self.masters = [torch.nn.Parameter(torch.zeros(n, dtype=F32)) for n in numels]
        self.grad_sources = grad_sources
        self.inner = make_adamw(self.masters, kind, impl)
        super().__init__(self.masters, {"lr": 1e-4})

    def step(self, closure=None):
        for master, source in zip(self.masters, self.grad_sources):
            g = source()
            master.grad = g if g.dtype == F32 else g.float()
        self.inner.step()
        for master in self.masters:
            master.grad = None

    def zero_grad(self, set_to_none=True):
        return None


class Regime:
    """Prepares a module for a regime and builds its optimizer; lists the engine's own buffers for the tracker."""

    def __init__(self, regime, training, dp_shard):
        if regime not in REGIMES:
            raise ValueError(f"unknown precision regime '{regime}'")
        self.name, self.training, self.dp = regime, training, max(1, dp_shard)
        self.files = []  # (tensor, category) the tracker must know before the step
        self.hooks = []
        self.grad_buffers = []  # Megatron: one main_grad buffer per model chunk (one DDP wrapper each)

    def prepare(self, module):
        """Megatron's gradient buffer and hooks (parameters are cast on the meta device before)."""
        params = [p for p in module.parameters() if p.requires_grad]
        if self.name == "megatron":
            self._megatron_buffers(params)
        return module

    def _megatron_buffers(self, params):
        grad_dtype = BF16 if self.training.get("gradReduceInBf16") else F32
        total = sum(p.numel() for p in params)
        buffer = torch.zeros(total, dtype=grad_dtype)
        self.grad_buffers.append(buffer)
        self.files.append((buffer, "gradients"))
        offset = 0
        for p in params:
            p.main_grad = buffer[offset: offset + p.numel()].view_as(p)
            offset += p.numel()
            # Megatron's param hook: add .grad (norms, embedding) to main_grad and drop it.
            self.hooks.append(p.register_post_accumulate_grad_hook(_add_to_main_grad))

    def optimizer(self, module):
        kind = self.training.get("optimizer", "adamw")
        impl = self.training.get("optimizerImpl", "fused")
        params = [p for p in module.parameters() if p.requires_grad]
        if self.name == "megatron":
            distributed = self.training.get("distributedOptimizer", False)
            shards = [math.ceil(b.numel() / self.dp) if distributed else b.numel() for b in self.grad_buffers]
            sources = [lambda b=b, n=n: b[:n] for b, n in zip(self.grad_buffers, shards)]
            opt = FlatMasterOptimizer(shards, sources, kind, impl)
        else:
            return make_adamw(params, kind, impl)
        for master in opt.masters:
            self.files.append((master, "optimizer"))
        return opt

    def zero_grad(self, module, opt):
        """Megatron zeroes main_grad in place; the others drop .grad (set_to_none, the torch default)."""
        for buffer in self.grad_buffers:
            buffer.zero_()
        for p in module.parameters():
            p.grad = None


def _add_to_main_grad(p):
    if p.grad is None:  # weights whose gradient the fused wgrad GEMM wrote into main_grad
        return
    p.main_grad.add_(p.grad)
    p.grad = None
