"""DeepSpeed's own engine on fake tensors: ``deepspeed.initialize`` wraps the model with a torch optimizer (ZeRO-1/2:
DeepSpeedZeroOptimizer, or BF16_Optimizer for ZeRO-1 with bf16 weights and fp32 gradient accumulation; ZeRO-3:
DeepSpeedZeroOptimizer_Stage3), and ``engine.backward`` / ``engine.step`` run its hooks, buckets, reductions and
optimizer step as on a GPU, with the CPU accelerator (``DS_ACCELERATOR=cpu``) on torch's fake process group.

What is not DeepSpeed's own (every shim is scoped to the DeepSpeed run and undone after it):
- ``Module._apply`` (``module.to``/``.bfloat16()``, which the engine calls) assigns ``param.data`` for fake parameters,
  as torch does for real ones; torch swaps fake tensors instead, which fails (FakeTensorMode holds weak references).
- Data-dependent scalars (``.item()``: overflow flags, gradient norms, rank-agreement checks) read 0: no overflow,
  no clipping. ``assert_ints_same_as_other_ranks`` (a cross-rank consistency check of ZeRO-3) is skipped.
- The CPU accelerator's shared-memory all-reduce (a C++ extension built at first use) is not built: collectives go
  to the fake process group, which moves no data.
- The torch optimizer is torch's AdamW (fused): DeepSpeed's FusedAdam needs CUDA; its states are the same. When the
  plan's JSON has an optimizer block (DeepSpeed builds FusedAdam), the block is taken out (DeepSpeed refuses two
  optimizers) and, for ``deepspeed.initialize`` only, the engine's FusedAdam class name points at the torch AdamW's
  class, so DeepSpeed picks the wrapper it picks for FusedAdam (without ZeRO: FP16_Optimizer, engine.py
  ``_configure_fp16_optimizer``).
"""
import contextlib
import importlib
import os
import sys

import torch

from .plan import OracleError

# The oracle runs DeepSpeed's CPU accelerator on fake CPU tensors, whatever devices the machine has.
os.environ["DS_ACCELERATOR"] = "cpu"

# Categories of the engine's buffers (probe/oracle/tracker.py files them as they appear):
# parameters: 16-bit flat groups (ZeRO-1/2), ZeRO-3 partitions and gathered parameters;
# gradients: autograd's gradients until the engine takes them, the gradient partitions (ZeRO-2 `grads_in_partition`,
#   the fp32 `averaged_gradients` partition with fp32 accumulation, ZeRO-3 `grad_partitions_flat_buffer`, the
#   BF16_Optimizer's fp32 gradient buffer);
# optimizer: fp32 master partitions (and whole fp32 masters without ZeRO) and Adam states; other: the reduction buckets (`ipg_buckets`);
# temporaries: everything else made after the forward (reduction copies, the step's fp64 norm copies, its fp32
#   gradient partition: the wrapper's step is no torch optimizer step, so torch would call them activations).


def problem():
    """Why the engine cannot run here, or None."""
    try:
        import deepspeed  # noqa: F401
    except Exception as exc:  # ImportError, or a build-time failure inside DeepSpeed's import
        return (f"DeepSpeed is not importable ({type(exc).__name__}: {str(exc).splitlines()[0][:200]}); "
                "install the pinned probe/requirements.txt (bash scripts/setup-python.sh)")
    return None


def ds_config(plan, micro):
    """The DeepSpeed JSON the plan states (oraclePlan.ts writes its ZeRO keys), with the batch keys of this run."""
    t = plan["training"]
    cfg = dict(plan.get("deepspeed") or {})
    zero = dict(cfg.get("zero_optimization") or {})
    zero.setdefault("stage", t.get("zeroStage", 1))
    cfg["zero_optimization"] = zero
    prec = t.get("precision", "bf16-mixed")
    if prec == "fp16-mixed":
        cfg["fp16"] = {"enabled": True}
    elif prec != "fp32":
        cfg["bf16"] = {"enabled": True}
    cfg.update(train_micro_batch_size_per_gpu=t["microBatch"], gradient_accumulation_steps=micro,
               steps_per_print=1 << 30, wall_clock_breakdown=False)
    cfg.setdefault("gradient_clipping", 1.0)
    return cfg


@contextlib.contextmanager
def shims(world):
    """The scoped shims of the module docstring, and the environment DeepSpeed's launcher sets."""
    from torch._subclasses import fake_impls
    from torch._subclasses.fake_tensor import FakeTensor
    # DeepSpeed reads the rank from the process group; it only checks that the launcher's variables exist.
    env = {"LOCAL_RANK": "0", "RANK": "0", "WORLD_SIZE": str(world), "LOCAL_SIZE": str(min(world, 8)),
           "MASTER_ADDR": "localhost", "MASTER_PORT": "29500"}
    saved_env = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    import deepspeed  # noqa: F401  (after DS_ACCELERATOR)
    patches = []

    def patch(obj, name, value):
        patches.append((obj, name, getattr(obj, name)))
        setattr(obj, name, value)

    original_apply = torch.nn.Module._apply

    def apply(self, fn, recurse=True):
        if not any(isinstance(p, FakeTensor) for p in self.parameters(recurse=False)):
            return original_apply(self, fn, recurse)
        if recurse:
            for child in self.children():
                child._apply(fn)
        with torch.no_grad():
            for p in self.parameters(recurse=False):
                q = fn(p)
                if q is not p:
                    p.data = q
            for key, b in self._buffers.items():
                if b is not None:
                    self._buffers[key] = fn(b)
        return self

    def scalar(fake_mode, func, arg, *rest, **kw):
        return False if arg.dtype == torch.bool else 0.0 if arg.dtype.is_floating_point else 0

    patch(torch.nn.Module, "_apply", apply)
    for op in (torch.ops.aten.item.default, torch.ops.aten._local_scalar_dense.default):
        patches.append((fake_impls.op_implementations_dict, op, fake_impls.op_implementations_dict[op]))
        fake_impls.op_implementations_dict[op] = scalar
    patch(sys.modules["deepspeed.comm.torch"], "build_shm_op", lambda: None)
    for name in ("partitioned_param_coordinator", "stage3", "partition_parameters"):
        mod = importlib.import_module(f"deepspeed.runtime.zero.{name}")
        if hasattr(mod, "assert_ints_same_as_other_ranks"):
            patch(mod, "assert_ints_same_as_other_ranks", lambda ints: None)
    try:
        yield
    finally:
        for obj, name, value in reversed(patches):
            if isinstance(obj, dict):
                obj[name] = value
            else:
                setattr(obj, name, value)
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _reset_groups():
    """DeepSpeed caches process groups per process; every plan runs on a fresh fake process group."""
    from deepspeed.utils import groups
    for name, value in list(vars(groups).items()):
        if name.isupper() and name.startswith("_") and isinstance(value, dict):
            value.clear()
    for name in ("_WORLD_GROUP", "_ZERO_PARAM_INTRA_PARALLEL_GROUP", "_TENSOR_MODEL_PARALLEL_GROUP",
                 "_MODEL_PARALLEL_GROUP", "_DATA_PARALLEL_GROUP", "mpu", "mesh_device"):
        if hasattr(groups, name):
            setattr(groups, name, None)


class Engine:
    """``deepspeed.initialize`` on one rank's module with the plan's torch optimizer."""

    def __init__(self, plan, module, optimizer, notes):
        import deepspeed
        t = plan["training"]
        self.micro = max(1, min(int(t.get("gradAccum", 1)), 2))
        self.config = ds_config(plan, self.micro)
        fused = self.config.pop("optimizer", None) is not None
        _reset_groups()
        import deepspeed.runtime.engine as ds_runtime_engine
        saved_fused = ds_runtime_engine.FusedAdam
        if fused:
            ds_runtime_engine.FusedAdam = type(optimizer)
        try:
            self.engine, self.wrapper, _, _ = deepspeed.initialize(model=module, optimizer=optimizer,
                                                                   config=self.config, dist_init_required=False)
        except (AssertionError, ValueError, NotImplementedError) as exc:
            raise OracleError("unsupported-layout", f"DeepSpeed refused this configuration: {type(exc).__name__}: "
                              f"{str(exc).splitlines()[0][:300]}") from exc
        finally:
            ds_runtime_engine.FusedAdam = saved_fused
        self.inner = getattr(self.wrapper, "optimizer", None)
        stage = self.config["zero_optimization"]["stage"]
        notes.append(f"DeepSpeed {deepspeed.__version__} engine, ZeRO-{stage}, {type(self.wrapper).__name__} over "
                     f"{type(self.inner).__name__}, CPU accelerator on the fake process group (shims: "
                     "probe/oracle/ds_engine.py)")

    def step(self, forward):
        """Micro-batches as DeepSpeed runs them: forward through the engine, engine.backward, engine.step."""
        for _ in range(self.micro):
            loss = forward(self.engine)
            self.engine.backward(loss)
            del loss
            self.engine.step()

    def files(self):
        """(tensor, category) of the engine's buffers that exist before the step."""
        w, out = self.wrapper, []
        add = lambda ts, cat: out.extend((x, cat) for x in ts if torch.is_tensor(x))  # noqa: E731
        add(getattr(w, "bit16_groups_flat", []), "parameters")
        add(getattr(w, "bf16_groups_flat", []), "parameters")
        add(getattr(w, "fp16_partitioned_groups_flat", []) or [], "parameters")
        for group in getattr(w, "fp16_groups", []):
            add([getattr(p, "ds_tensor", None) for p in group], "parameters")
        add(getattr(w, "single_partition_of_fp32_groups", []), "optimizer")
        add(getattr(w, "fp32_groups_flat_partition", []), "optimizer")
        # Without ZeRO (DDP_BFLOAT16 / FP16): the fp32 master copies, per parameter (FP16_UnfusedOptimizer) or flat
        # (FP16_Optimizer, with the 16-bit flat groups its parameters are views of).
        for group in getattr(w, "fp32_groups", []):
            add(group, "optimizer")
        add(getattr(w, "fp32_groups_flat", []), "optimizer")
        add(getattr(w, "fp16_groups_flat", []), "parameters")
        add(getattr(w, "fp32_partitioned_groups_flat", []), "optimizer")
        add(getattr(w, "fp32_groups_gradients_flat", []), "gradients")
        add([getattr(w, "grad_partitions_flat_buffer", None)], "gradients")
        for bucket in (getattr(w, "ipg_buckets", None) or {}).values():
            buf = getattr(bucket, "buffer", None)
            add(buf if isinstance(buf, list) else [buf], "other")
        return out

    def instrument(self, tracker):
        """Files the buffers the engine makes during the step as they appear; returns what to undo."""
        from deepspeed.runtime.zero import partition_parameters as pp
        from deepspeed.runtime.zero import partitioned_param_coordinator as pc
        w, undo = self.wrapper, []

        def during(cls, name, category):
            """Tensors made inside cls.name are filed under category (and keep it)."""
            original = getattr(cls, name)

            def method(*args, _orig=original, **kwargs):
                with tracker.filing_new_tensors_as(category):
                    return _orig(*args, **kwargs)
            setattr(cls, name, method)
            undo.append((cls, name, original))

        # ZeRO-1/2: the reduction buckets (setup_buckets, at the first gradient hook of a backward), the gradient
        # partition (copy_grads_in_partition) and the fp32 partition of fp32 accumulation.
        zero12 = type(w)
        for name, category in (("setup_buckets", "other"), ("copy_grads_in_partition", "gradients"),
                               ("_build_compact_grad_partition_buffer", "gradients")):
            if hasattr(zero12, name):
                during(zero12, name, category)
        # ZeRO-3: what the coordinator's all-gathers allocate (the coalesced flat buffer, the per-parameter buffers)
        # and what the handles' wait copies out of it (torch.cat per parameter) are gathered parameters.
        during(pc.PartitionedParameterCoordinator, "_PartitionedParameterCoordinator__all_gather_params", "parameters")
        for cls in (pp.AllGatherHandle, pp.AllGatherCoalescedHandle):
            during(cls, "wait", "parameters")
        tracker.outside_modules_is_temporary = True
        return lambda: _restore(undo)

    def close(self):
        destroy = getattr(self.engine, "destroy", None)
        if destroy is not None:
            with contextlib.suppress(Exception):
                destroy()


def _restore(undo):
    for obj, name, original in reversed(undo):
        if original is None:
            obj.__dict__.pop(name, None)  # the instance's own wrapper: its class method shows again
        else:
            setattr(obj, name, original)
