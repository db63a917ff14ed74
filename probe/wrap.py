"""Wraps the model as the plan says: DDP, ZeroRedundancyOptimizer, FSDP strategies or DeepSpeed."""
import torch
import torch.distributed as dist

import torch_compat
from measure import ddp_counting_hook

MODES = ("ddp", "zero1", "fsdp-full-shard", "fsdp-shard-grad-op", "fsdp-no-shard", "fsdp-hybrid-shard", "deepspeed")
FSDP_STRATEGY = {"fsdp-full-shard": "FULL_SHARD", "fsdp-shard-grad-op": "SHARD_GRAD_OP",
                 "fsdp-no-shard": "NO_SHARD", "fsdp-hybrid-shard": "HYBRID_SHARD"}


class ProbeError(Exception):
    """A failure with a stable code the extension can explain (e.g. "torch-too-old", "unsupported-on-device")."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def make_optimizer(kind, params, lr=1e-4):
    """Returns (optimizer class, kwargs) for the plan's optimizer; the ones torch lacks fail clearly."""
    table = {"adamw": (torch.optim.AdamW, {"lr": lr}), "adam": (torch.optim.Adam, {"lr": lr}),
             "sgd": (torch.optim.SGD, {"lr": lr}), "sgd-momentum": (torch.optim.SGD, {"lr": lr, "momentum": 0.9})}
    if kind not in table:
        raise ProbeError("unsupported-optimizer", f"optimizer '{kind}' is not part of torch.optim; "
                         "the probe supports adamw, adam, sgd and sgd-momentum")
    cls, kwargs = table[kind]
    return cls, kwargs if params is None else cls(params, **kwargs)


def wrap(mode, model, plan, device, counter):
    """Returns a dict with the wrapped module, the optimizer, the local optimizer whose state this rank holds,
    and notes. Raises ProbeError when the installed torch or device cannot run the mode."""
    par, opt_kind = plan["parallel"], plan["training"]["optimizer"]
    on_cuda = device.type == "cuda"
    if mode in ("ddp", "zero1"):
        from torch.nn.parallel import DistributedDataParallel as DDP
        ddp = DDP(model, device_ids=[device.index] if on_cuda else None,
                  bucket_cap_mb=par.get("bucketCapMb", 25), gradient_as_bucket_view=par.get("gradientAsBucketView", False))
        ddp.register_comm_hook(None, ddp_counting_hook(counter, synchronous=not on_cuda))
        if mode == "ddp":
            opt = make_optimizer(opt_kind, ddp.parameters())[1]
            return {"module": ddp, "optimizer": opt, "state_owner": opt, "ddp": ddp,
                    "notes": ["DDP: gradients all-reduced in buckets by a counting comm hook"]}
        from torch.distributed.optim import ZeroRedundancyOptimizer
        cls, kwargs = make_optimizer(opt_kind, None)
        zero = ZeroRedundancyOptimizer(ddp.parameters(), optimizer_class=cls,
                                       parameters_as_bucket_view=par.get("parametersAsBucketView", False), **kwargs)
        return {"module": ddp, "optimizer": zero, "state_owner": zero.optim, "ddp": ddp,
                "notes": ["ZeroRedundancyOptimizer: DDP all-reduce, then each rank broadcasts its updated shard; "
                          "parameters are assigned to ranks whole (sorted greedy by size)"]}
    if mode in FSDP_STRATEGY:
        return _wrap_fsdp(mode, model, plan, device)
    if mode == "deepspeed":
        return _wrap_deepspeed(model, plan)
    raise ProbeError("unknown-mode", f"unknown mode '{mode}'; expected one of {', '.join(MODES)}")


def _wrap_fsdp(mode, model, plan, device):
    try:
        fsdp = torch_compat.import_fsdp()
    except Exception as exc:  # Older builds may lack FSDP entirely.
        raise ProbeError("torch-too-old", f"torch {torch.__version__} cannot import FSDP: {exc}") from exc
    name = FSDP_STRATEGY[mode]
    if name not in fsdp.ShardingStrategy.__members__:
        raise ProbeError("torch-too-old", f"torch {torch.__version__} has no ShardingStrategy.{name} "
                         f"(it has {', '.join(fsdp.ShardingStrategy.__members__)}); HYBRID_SHARD needs torch >= 2.0")
    # Each decoder block is its own FSDP unit (gathered per layer, as DeepSpeed ZeRO-3 does); the root holds the rest.
    import functools
    from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
    from gpt_model import Block
    kwargs = {"sharding_strategy": fsdp.ShardingStrategy[name],
              "auto_wrap_policy": functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})}
    root_numel = sum(p.numel() for p in model.parameters()) - sum(
        p.numel() for m in model.modules() if isinstance(m, Block) for p in m.parameters())
    if device.type == "cuda":
        kwargs["device_id"] = device
    if plan["training"]["precision"] in ("bf16-mixed", "fp16-mixed") and device.type == "cuda":
        dt = torch.bfloat16 if plan["training"]["precision"] == "bf16-mixed" else torch.float16
        kwargs["mixed_precision"] = fsdp.MixedPrecision(param_dtype=dt, reduce_dtype=dt, buffer_dtype=dt)
    try:
        module = fsdp.FullyShardedDataParallel(model, **kwargs)
    except (AssertionError, RuntimeError) as exc:
        if device.type != "cuda":
            raise ProbeError("unsupported-on-device",
                             f"FSDP {name} cannot run on CPU with torch {torch.__version__} and gloo: {exc!r}. "
                             "torch 1.13's FSDP always computes on a CUDA device, and its gloo lacks "
                             "_allgather_base and reduce_scatter; CPU FSDP needs torch >= 2.2") from exc
        raise
    opt = make_optimizer(plan["training"]["optimizer"], module.parameters())[1]
    return {"module": module, "optimizer": opt, "state_owner": opt, "ddp": None, "fsdp_root_numel": root_numel,
            "notes": [f"FSDP {name}: one unit per decoder block plus the root; parameters() yields this rank's "
                      "flat-parameter shards (padded to a multiple of the world size)"]}


def _wrap_deepspeed(model, plan):
    try:
        import deepspeed
    except ImportError as exc:
        raise ProbeError("deepspeed-missing", f"DeepSpeed is not importable ({exc}); install it, or run the torch "
                         "equivalent with --mode zero1 / fsdp-shard-grad-op / fsdp-full-shard") from exc
    config = dict(plan.get("deepspeedConfig") or {})
    config["train_micro_batch_size_per_gpu"] = plan["training"]["microBatch"]
    config["gradient_accumulation_steps"] = 1
    config.pop("train_batch_size", None)
    config.setdefault("optimizer", {"type": "AdamW", "params": {"lr": 1e-4}})
    config["comms_logger"] = {"enabled": True, "prof_all": True}
    engine, opt, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config=config)
    return {"module": engine, "optimizer": opt, "state_owner": getattr(opt, "optimizer", opt), "ddp": None,
            "deepspeed": engine, "engine_version": deepspeed.__version__,
            "notes": ["DeepSpeed with the plan's JSON (micro batch from the plan, 1 accumulation step); "
                      "ZeRO-3 parameters are counted by their ds_tensor partitions; gradients live in the engine's "
                      "partitioned buffers and are not counted; this path is untested in ShardLens CI"]}


def ddp_bucket_bytes(ddp):
    """Bytes of DDP's gradient buckets, from its logging data (a comma-separated list of bytes)."""
    try:
        sizes = ddp._get_ddp_logging_data().get("bucket_sizes", "")
        return [int(x) for x in str(sizes).split(",") if x.strip()]
    except Exception:  # Private API; absent on some builds.
        return None


def world_check(plan, world):
    """The probe runs the data-parallel dimension only: world size must equal dp and the other degrees be 1."""
    par = plan["parallel"]
    others = {k: par.get(k, 1) for k in ("tp", "pp", "cp", "ep")}
    bad = {k: v for k, v in others.items() if v != 1}
    if bad:
        raise ProbeError("layout-mismatch", "the probe runs data parallelism only; the plan also has "
                         + ", ".join(f"{k}={v}" for k, v in bad.items()))
    if par["dp"] != world:
        raise ProbeError("layout-mismatch", f"the plan's data-parallel size is {par['dp']} but torchrun started "
                         f"{world} ranks; export the plan for {world} ranks or launch {par['dp']}")
    if dist.get_world_size() != world:
        raise ProbeError("layout-mismatch", "WORLD_SIZE does not match the process group")
