"""One configuration, one simulated rank per pipeline stage: build at full size without allocating, wrap as the
engine does, run a warm-up step (creates optimizer states) and one tracked step, report torch's peaks per category."""
import contextlib
import time

import torch
import torch.distributed as dist
from torch._subclasses.fake_tensor import FakeTensorMode

from . import checkpointing, ds_engine, hf, megatron, parallel, pipeline, titan
from .allocator_trace import AllocationTrace
from .attention import use_gpu_sdpa
from .plan import OracleError, check_plan
from .precision import Regime, forward_context, make_adamw, param_dtype
from .tracker import storage_bytes, tracked_step


def _init_pg(rank, world):
    from torch.testing._internal.distributed.fake_pg import FakeStore
    if dist.is_initialized():
        dist.destroy_process_group()
    dist.init_process_group("fake", rank=rank, world_size=world, store=FakeStore())


def regime_of(plan):
    """The precision regime: explicit, else from the engine and precision (docs/engine-memory.md)."""
    if plan.get("regime"):
        return plan["regime"]
    prec = plan["training"].get("precision", "bf16-mixed")
    if prec == "fp32":
        return "fp32"
    if prec == "bf16":
        return "bf16-true"
    return {"megatron": "megatron", "deepspeed": "deepspeed", "fsdp2": "fsdp2", "fsdp1": "fsdp2",
            "nanotron": "megatron"}.get(plan.get("engine"), "amp")


class Built:
    """The model (or pipeline stage modules), optimizer, regime and step function of one rank."""

    def __init__(self, plan, stage, mesh, notes):
        self.plan, self.stage, self.mesh, self.notes = plan, stage, mesh, notes
        m, t, par = plan["model"], plan["training"], plan["parallel"]
        self.impl, self.regime_name = plan["impl"], regime_of(plan)
        self.regime = Regime(self.regime_name, t, par.get("dpShard", 1) * par.get("cp", 1))
        self.pp, self.vpp = par.get("pp", 1), par.get("vpp", 1) if par.get("pp", 1) > 1 else 1
        chunks = pipeline.chunks_of_rank(m["layers"], self.pp, self.vpp, stage)
        self.modules = [self._build_chunk(ids, first, last) for ids, first, last in chunks]
        self._shard()
        fake = FakeTensorMode(allow_non_fake_inputs=True)
        self.fake = fake
        with fake:
            for mod in self.modules:
                mod.to_empty(device="cpu")
                # to_empty gives every parameter its own storage: tie the head to the embedding again as
                # transformers does after loading (PreTrainedModel.tie_weights).
                if self.impl == "hf" and hasattr(mod, "tie_weights"):
                    mod.tie_weights()
                self.regime.prepare(mod) if self.regime_name == "megatron" else None
            self.ds = None
            if self.regime_name == "deepspeed":
                # DeepSpeed's own engine wraps the module with the plan's torch optimizer (probe/oracle/ds_engine.py).
                self.optimizer = make_adamw([p for p in self.modules[0].parameters() if p.requires_grad],
                                            t.get("optimizer", "adamw"), t.get("optimizerImpl", "fused"))
                self.ds = ds_engine.Engine(plan, self.modules[0], self.optimizer, notes)
            else:
                self.optimizer = self.regime.optimizer(_Joined(self.modules))
            self.ddp = None
            if par.get("sharding") == "ddp":
                self.ddp = parallel.ddp_buckets(_Joined(self.modules))
                notes.append("DDP: the Reducer's bucket copy of the gradients (gradient_as_bucket_view=False) is "
                             "allocated as one flat tensor; its all-reduce is not run")
        self.step = pipeline.make_step(self) if self.pp > 1 else self._ds_step if self.ds else self._plain_step

    def _build_chunk(self, ids, first, last):
        m, t, par, ac = self.plan["model"], self.plan["training"], self.plan["parallel"], self.plan.get("ac") or {}
        attention = self.plan.get("attention", "flash")
        if self.impl == "torchtitan":
            with torch.device("meta"):
                mod = titan.Transformer(m, attention, ids, first, last, t["seqLen"])
            if par.get("tp", 1) > 1:
                parallel.apply_titan_tp(mod, self.mesh["tp"], loss_parallel=last)
            checkpointing.wrap_blocks(mod.layers, ac)
        elif self.impl == "megatron":
            with torch.device("meta"):
                mod = megatron.GPT(m, par.get("tp", 1), par.get("sp", False), ids, first, last, t.get("dropout", 0.0))
            checkpointing.wrap_blocks(mod.layers, ac)
        else:
            mod = hf.build(self.plan["hfConfig"], m["layers"], attention)
            if ac.get("mode") in ("hf", "full"):
                mod.gradient_checkpointing_enable()
        if param_dtype(self.regime_name) != torch.float32:
            mod.to(param_dtype(self.regime_name))
        return mod

    def _shard(self):
        par = self.plan["parallel"]
        if par.get("sharding") != "fsdp2":
            return
        mesh = parallel.fsdp_mesh(self.mesh, par)
        reshard = par.get("reshardAfterForward", self.pp == 1)
        for mod in self.modules:
            blocks = list(mod.layers.values()) if hasattr(mod, "layers") and isinstance(mod.layers, torch.nn.ModuleDict) \
                else list(hf.blocks_of(mod))
            parallel.apply_fsdp(mod, mesh, self.regime_name, self.plan["training"], reshard, blocks)

    def loss(self, pred, labels):
        if self.impl == "megatron":
            return megatron.loss_fn(pred, labels)
        return titan.loss_fn(pred, labels)

    def _plain_step(self):
        t = self.plan["training"]
        b, s, v = t["microBatch"], t["seqLen"], self.plan["model"]["vocabSize"]
        mod = self.modules[0]
        micro = max(1, min(int(t.get("gradAccum", 1)), 2))
        # The HF Trainer and Accelerate run every micro-batch but the last under no_sync: FSDP2 then keeps each
        # gradient unsharded until the last one (set_requires_gradient_sync).
        no_sync = not t.get("syncEveryMicroBatch", True) and hasattr(mod, "set_requires_gradient_sync")
        for i in range(micro):
            if no_sync:
                mod.set_requires_gradient_sync(i == micro - 1)
            tokens = torch.randint(0, v, (b, s))
            # Autocast covers the forward and the loss only (Accelerate wraps model.forward, Lightning the
            # training_step); the backward runs outside it, so the autocast weight-cast cache is gone by then.
            with _cp_context(self, tokens), _loss_parallel(self):
                with forward_context(self.regime_name):
                    if self.impl == "hf":
                        loss = hf.loss_of(mod, tokens)
                    else:
                        loss = self.loss(mod(tokens), tokens)
                loss.backward()
            del loss
        self.optimizer.step()
        self.regime.zero_grad(mod, self.optimizer)

    def _ds_step(self):
        t = self.plan["training"]
        b, s, v = t["microBatch"], t["seqLen"], self.plan["model"]["vocabSize"]

        def forward(engine):
            tokens = torch.randint(0, v, (b, s))
            if self.impl == "hf":
                return engine(input_ids=tokens, labels=tokens).loss
            return self.loss(engine(tokens), tokens)
        self.ds.step(forward)

    def externals(self):
        # The flat-master optimizers of the Megatron and DeepSpeed regimes keep their Adam states in an inner
        # torch optimizer: track it too, or its states would be missed.
        inner = getattr(self.optimizer, "inner", None)
        return [*self.modules, self.optimizer, *([inner] if inner is not None else [])]

    def files(self):
        out = list(self.regime.files) + (self.ds.files() if self.ds else []) + pipeline.recv_buffers(self)
        if self.ddp is not None:
            out.append((self.ddp, "other"))
        return out


class _Joined(torch.nn.Module):
    """Several stage chunks seen as one module (for the optimizer and DDP buckets)."""

    def __init__(self, modules):
        super().__init__()
        self.parts = torch.nn.ModuleList(modules)


def _cp_context(built, tokens):
    """torchtitan's context-parallel context: the tokens and RoPE tables sharded along the sequence (load-balanced),
    SDPA dispatched to ring attention with the all-gather rotation (torchtitan's default rotate method)."""
    import contextlib
    if built.plan["parallel"].get("cp", 1) <= 1 or built.impl != "torchtitan":
        return contextlib.nullcontext()
    from torch.distributed.tensor.experimental import context_parallel
    from torch.distributed.tensor.experimental._attention import set_rotate_method
    set_rotate_method("allgather")
    tables = [mod.freqs_cis for mod in built.modules]
    return context_parallel(built.mesh["cp"], buffers=[tokens, *tables], buffer_seq_dims=[1] + [0] * len(tables),
                            no_restore_buffers={tokens})


def _loss_parallel(built):
    import contextlib
    if built.impl == "torchtitan" and built.plan["parallel"].get("tp", 1) > 1:
        from torch.distributed.tensor.parallel import loss_parallel
        return loss_parallel()
    return contextlib.nullcontext()


def _build(plan, stage, world, rank, notes):
    _init_pg(rank, world)
    mesh = parallel.build_mesh(plan["parallel"])
    try:
        return Built(plan, stage, mesh, notes)
    except OracleError:
        raise
    except (NotImplementedError, ValueError, RuntimeError, AssertionError, TypeError) as exc:
        raise OracleError("unsupported-layout", f"torch could not build this layout on fake tensors: "
                          f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}") from exc


def measure_stage(plan, stage, world):
    notes = []
    par = plan["parallel"]
    rank = stage * (world // par.get("pp", 1))
    t0 = time.perf_counter()
    deepspeed = regime_of(plan) == "deepspeed"
    if deepspeed:
        _check_deepspeed(plan)
    with contextlib.ExitStack() as scope:
        if deepspeed:
            scope.enter_context(ds_engine.shims(world))
        built = _build(plan, stage, world, rank, notes)
        alloc = plan.get("allocator") or {}
        trace = AllocationTrace(built.modules, alloc.get("conf", ""), alloc.get("capacityBytes"))
        instrument = built.ds.instrument if built.ds else None
        fsdp_root = None if par.get("sharding") != "fsdp2" else _Joined(built.modules)
        try:
            with built.fake, use_gpu_sdpa(), trace.capturing():
                # Warm-up (optimizer states appear), seen only by the allocation trace; then the tracked step.
                tracked_step(built.step, built.externals(), files=built.files(), instrument=instrument, trace=trace)
                trace.mark_step()
                result = tracked_step(built.step, built.externals(), files=built.files(), fsdp_root=fsdp_root,
                                      instrument=instrument, trace=trace)
                static = {
                    "parameters": storage_bytes(p for mod in built.modules for p in mod.parameters()),
                    "optimizerStates": storage_bytes(v for st in _states(built.optimizer) for v in st.values() if torch.is_tensor(v)),
                }
                for tensor, cat in built.files():
                    key = {"gradients": "mainGrad", "optimizer": "masterWeights", "other": "engineBuffers",
                           "parameters": "engineParameters"}[cat]
                    static[key] = static.get(key, 0) + storage_bytes([tensor])
        finally:
            if built.ds:
                built.ds.close()
    result.update(stage=stage, rank=rank, static=static, notes=notes, allocator=trace.summary(),
                  seconds=round(time.perf_counter() - t0, 3))
    return result


def _check_deepspeed(plan):
    why = ds_engine.problem()
    if why:
        raise OracleError("unsupported-layout", why)
    par = plan["parallel"]
    if par.get("pp", 1) > 1 or par.get("tp", 1) > 1 or par.get("cp", 1) > 1:
        raise OracleError("unsupported-layout", "DeepSpeed's engine is reproduced with ZeRO data parallelism only "
                          "(its pipeline engine, AutoTP and Ulysses are not run)")


def _states(opt):
    inner = getattr(opt, "inner", opt)
    return list(inner.state.values())


def measure(plan):
    world = check_plan(plan)
    pp = plan["parallel"].get("pp", 1)
    stages = plan.get("stages") or list(range(pp))
    return [measure_stage(plan, s, world) for s in stages]
