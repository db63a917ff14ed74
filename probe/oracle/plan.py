"""Reading and checking the oracle plan (written by validation/torch/oraclePlan.ts); bad input raises OracleError."""

IMPLS = ("torchtitan", "megatron", "hf")
AC_MODES = ("none", "full", "selective-layer", "selective-op", "hf", "megatron-selective")
SCHEDULES = ("gpipe", "1f1b", "interleaved")
SHARDINGS = ("fsdp2", "ddp", "none", "megatron", "deepspeed")


class OracleError(Exception):
    """A failure with a stable code: torch-missing, torch-too-old, invalid-plan, unsupported-layout, build-failed."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _pos_int(d, key, where, default=None):
    v = d.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise OracleError("invalid-plan", f"{where}.{key} must be a positive integer (got {v!r})")
    return v


def check_plan(plan):
    """Validates the fields the oracle reads and returns the world size."""
    if not isinstance(plan, dict) or plan.get("kind") != "shardlens-oracle-plan":
        raise OracleError("invalid-plan", "not a ShardLens oracle plan (kind must be 'shardlens-oracle-plan')")
    m, t, par = plan.get("model"), plan.get("training"), plan.get("parallel")
    if not isinstance(m, dict) or not isinstance(t, dict) or not isinstance(par, dict):
        raise OracleError("invalid-plan", "the plan needs model, training and parallel objects")
    impl = plan.get("impl")
    if impl not in IMPLS:
        raise OracleError("invalid-plan", f"impl must be one of {', '.join(IMPLS)} (got {impl!r})")
    if impl == "hf" and not isinstance(plan.get("hfConfig"), dict):
        raise OracleError("invalid-plan", "impl 'hf' needs the model's config.json as hfConfig")
    for key in ("layers", "hiddenSize", "heads", "kvHeads", "headDim", "ffnSize", "vocabSize"):
        _pos_int(m, key, "model")
    for key in ("microBatch", "seqLen"):
        _pos_int(t, key, "training")
    degrees = {k: _pos_int(par, k, "parallel", 1) for k in ("pp", "dpReplicate", "dpShard", "cp", "tp", "vpp")}
    ac = plan.get("ac") or {"mode": "none"}
    if ac.get("mode") not in AC_MODES:
        raise OracleError("invalid-plan", f"ac.mode must be one of {', '.join(AC_MODES)} (got {ac.get('mode')!r})")
    if par.get("sharding", "none") not in SHARDINGS:
        raise OracleError("invalid-plan", f"parallel.sharding must be one of {', '.join(SHARDINGS)}")
    if degrees["pp"] > 1 and par.get("schedule", "1f1b") not in SCHEDULES:
        raise OracleError("invalid-plan", f"parallel.schedule must be one of {', '.join(SCHEDULES)}")
    world = 1
    for v in degrees.values():
        world *= v
    world //= degrees["vpp"]
    if impl == "hf" and (degrees["tp"] > 1 or degrees["pp"] > 1 or degrees["cp"] > 1):
        raise OracleError("unsupported-layout", "Hugging Face models are reproduced with data parallelism "
                          "(FSDP2, DDP) only; the plan has tensor, pipeline or context parallelism")
    if m.get("moe") and (degrees["tp"] > 1 or par.get("ep", 1) > 1):
        raise OracleError("unsupported-layout", "mixture-of-experts layers are reproduced without tensor or "
                          "expert parallelism")
    if m["heads"] % degrees["tp"] or max(1, m["kvHeads"]) % degrees["tp"] and degrees["tp"] % m["kvHeads"]:
        raise OracleError("unsupported-layout", f"tensor parallelism {degrees['tp']} does not divide the heads")
    if t["seqLen"] % (degrees["cp"] * degrees["tp"] * (2 if degrees["cp"] > 1 else 1)):
        raise OracleError("unsupported-layout", "the sequence length must divide evenly over CP (×2 for load "
                          "balancing) and TP")
    if m["layers"] < degrees["pp"] * degrees["vpp"]:
        raise OracleError("unsupported-layout", "fewer layers than pipeline stages")
    return world
