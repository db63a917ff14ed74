"""ShardLens probe: trains the plan's model for a few steps under torchrun and reports what every rank holds and sends.

Usage (one process per rank, launched by torchrun or ``torchrun_compat.py``):
    shardlens_probe.py --plan plan.json [--mode ddp] [--steps 3] [--out report.json] [--watchdog 300]
Rank 0 writes the report (schema: schemas/probe-report.schema.json). Exit code 0 when every rank succeeded, 1 when
the report holds errors, 3 when torch is missing.
"""
import argparse
import faulthandler
import json
import os
import platform
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watchdog import watch_parent  # noqa: E402

# Before torch is imported (seconds): a rank whose launcher is gone (killed with ShardLens) exits instead of training.
if os.environ.get("SHARDLENS_LAUNCHER_PID"):
    watch_parent("SHARDLENS_LAUNCHER_PID")
try:
    import torch
    import torch.distributed as dist
except ImportError as exc:
    sys.stderr.write(f"shardlens-probe: torch is not importable by {sys.executable}: {exc}\n")
    sys.exit(3)

from gpt_model import Gpt, attention_kind, check_model  # noqa: E402
from measure import CommCounter, cpu_trace, nbytes, peak_rss_bytes, state_bytes  # noqa: E402
from wrap import MODES, ProbeError, ddp_bucket_bytes, world_check, wrap  # noqa: E402

SCHEMA_VERSION = 1


def parse_args(argv):
    p = argparse.ArgumentParser(description="ShardLens torchrun probe")
    p.add_argument("--plan", required=True, help="plan JSON exported by ShardLens")
    p.add_argument("--mode", choices=MODES, help="overrides the plan's mode")
    p.add_argument("--steps", type=int, help="training steps (>= 2; step 0 is a warm-up)")
    p.add_argument("--out", default="probe-report.json")
    p.add_argument("--watchdog", type=float, default=300.0, help="seconds before a hung rank exits")
    p.add_argument("--no-cpu-profile", action="store_true", help="skip the CPU allocator trace")
    return p.parse_args(argv)


def versions():
    v = {"torch": torch.__version__, "python": platform.python_version()}
    if torch.cuda.is_available():
        v["cuda"] = torch.version.cuda
        try:
            v["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
        except Exception:  # NCCL version is informational only.
            pass
    return v


def autocast_ctx(precision, device):
    """Autocast for mixed precision; fp16 on CPU runs in bf16 because CPU autocast supports only bf16."""
    if precision in ("bf16-mixed", "fp16-mixed"):
        dt = torch.float16 if precision == "fp16-mixed" and device.type == "cuda" else torch.bfloat16
        return torch.autocast(device_type=device.type, dtype=dt)
    return torch.autocast(device_type=device.type, enabled=False)


def run_rank(plan, mode, steps, device, counter, use_profiler):
    """Builds, wraps and trains; returns this rank's record (raises ProbeError on a clear failure)."""
    rec = {"notes": []}
    world, rank = dist.get_world_size(), dist.get_rank()
    world_check(plan, world)
    reasons = check_model(plan["model"])
    if reasons:
        raise ProbeError("invalid-plan", "; ".join(reasons))
    tr = plan["training"]
    if tr["precision"] == "fp8-mixed":
        raise ProbeError("unsupported-precision", "fp8 training is not probed; export the plan with bf16-mixed")
    prof = None
    if use_profiler:
        prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True)
        prof.__enter__()
    torch.manual_seed(1234)
    model = Gpt(plan["model"])
    if tr["precision"] == "bf16":
        model = model.to(torch.bfloat16)
    model = model.to(device)
    unique = list({id(p): p for p in model.parameters()}.values())
    rec["parameters"] = sum(p.numel() for p in unique)
    rec["parameterNumels"] = [p.numel() for p in unique]
    w = wrap(mode, model, plan, device, counter)
    rec["notes"] += w["notes"]
    module, opt = w["module"], w["optimizer"]
    buckets = ddp_bucket_bytes(w["ddp"]) if w["ddp"] is not None else None
    shares_buckets = plan["parallel"].get("gradientAsBucketView", False)
    rec["commBuffersBytes"] = 0 if not buckets or shares_buckets else sum(buckets)
    params = [p for p in module.parameters()]
    anchor = nbytes(params) + rec["commBuffersBytes"]
    with torch.profiler.record_function("probe_wrapped"):
        pass
    gen = torch.Generator().manual_seed(1000 + rank)
    b, s, vocab = tr["microBatch"], tr["seqLen"], plan["model"]["vocabSize"]
    times, losses, grads, cuda = [], [], 0, {}
    for k in range(steps):
        tokens = torch.randint(0, vocab, (b, s + 1), generator=gen).to(device)
        counter.active = k >= 1
        if device.type == "cuda":
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats(device)
            cuda.setdefault("allocatedAtStepStart", []).append(torch.cuda.memory_allocated(device))
        t0 = time.perf_counter()
        with torch.profiler.record_function(f"probe_step{k}"):
            with autocast_ctx(tr["precision"], device):
                logits = module(tokens[:, :-1])
                loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, vocab), tokens[:, 1:].reshape(-1))
            if w.get("deepspeed") is not None:
                module.backward(loss)
                grads = nbytes(p.grad for p in params)
                module.step()
            else:
                loss.backward()
                grads = nbytes(p.grad for p in params)
                opt.step()
                opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
            cuda.setdefault("peak", []).append(torch.cuda.max_memory_allocated(device))
            cuda.setdefault("reserved", []).append(torch.cuda.max_memory_reserved(device))
        times.append(time.perf_counter() - t0)
        losses.append(float(loss.detach()))
    counter.active = False
    # DeepSpeed ZeRO-3 leaves an empty p.data and keeps this rank's partition in p.ds_tensor.
    rec["parametersBytes"] = nbytes(getattr(p, "ds_tensor", p) for p in module.parameters())
    if w.get("fsdp_root_numel") is not None:
        rec["fsdpRootParameters"] = w["fsdp_root_numel"]
    rec["gradientsBytes"] = grads
    rec["optimizerStatesBytes"] = state_bytes(w["state_owner"].state)
    rec["modelStatesBytes"] = rec["parametersBytes"] + rec["gradientsBytes"] + rec["optimizerStatesBytes"]
    if buckets is not None:
        rec["ddpBucketBytes"] = buckets
    rec["stepSecondsAll"] = times
    rec["stepSeconds"] = statistics.median(times[1:]) if len(times) > 1 else times[0]
    rec["loss"] = losses[-1]
    measured = steps - 1
    rec["collectives"] = counter.per_step(measured, world)
    rec["commBytesPerStep"] = sum(c["payloadBytes"] for c in rec["collectives"].values())
    rec["commWireBytesPerStep"] = sum(c["wireBytesSent"] for c in rec["collectives"].values())
    last = f"probe_step{steps - 1}"
    if device.type == "cuda":
        rec["peakAllocatedBytes"], rec["peakAllocatedSource"] = max(cuda["peak"][1:] or cuda["peak"]), "cuda"
        rec["peakReservedBytes"] = max(cuda["reserved"][1:] or cuda["reserved"])
        rec["allocatedAtStepStartBytes"] = cuda["allocatedAtStepStart"][-1]
    elif prof is not None:
        prof.__exit__(None, None, None)
        try:
            trace = cpu_trace(prof, anchor)
        except Exception as exc:  # The profiler's event API is private; fall back to tensor accounting.
            rec["notes"].append(f"CPU allocator trace unavailable: {type(exc).__name__}: {exc}")
            trace = None
        if trace and last in trace["peakInStep"]:
            rec["peakAllocatedBytes"] = max(v for k, v in trace["peakInStep"].items() if k != "probe_step0")
            rec["peakAllocatedSource"] = "cpu-profiler"
            rec["allocatedAtStepStartBytes"] = trace["allocatedAtStart"][last]
            rec["cpuTraceCalibrationBytes"] = trace["calibrationOffsetBytes"]
    if "peakAllocatedBytes" not in rec:
        rec["peakAllocatedBytes"], rec["peakAllocatedSource"] = rec["modelStatesBytes"] + rec["commBuffersBytes"], "tensor-accounting"
    rec.setdefault("peakReservedBytes", None)
    if w.get("engine_version"):
        rec["deepspeedVersion"] = w["engine_version"]
    return rec


def main(argv):
    args = parse_args(argv)
    faulthandler.dump_traceback_later(args.watchdog, exit=True)
    with open(args.plan, encoding="utf-8") as f:
        plan = json.load(f)
    mode = args.mode or plan["parallel"].get("mode", "ddp")
    steps = max(2, args.steps or plan.get("steps", 3))
    use_cuda = torch.cuda.is_available() and plan.get("device", "auto") != "cpu"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if use_cuda:
        torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    counter = CommCounter()
    counter.install()
    t0 = time.perf_counter()
    try:
        rec = run_rank(plan, mode, steps, device, counter, use_profiler=not use_cuda and not args.no_cpu_profile)
        rec["ok"] = True
    except ProbeError as exc:
        rec = {"ok": False, "error": {"code": exc.code, "message": str(exc)}}
    except Exception as exc:  # Any other failure still produces a report.
        rec = {"ok": False, "error": {"code": "runtime-error", "message": f"{type(exc).__name__}: {exc}"}}
    counter.active = False
    rec.update({"rank": rank, "host": platform.node(), "peakRssBytes": peak_rss_bytes(),
                "rankWallSeconds": time.perf_counter() - t0})
    records = [None] * world
    dist.all_gather_object(records, rec)
    ok = all(r["ok"] for r in records)
    if rank == 0:
        try:
            write_report(args, plan, mode, steps, device, world, records, ok)
        except OSError as exc:  # An unwritable --out must not leave the other ranks waiting.
            sys.stderr.write(f"shardlens-probe: cannot write {args.out}: {exc}\n")
            ok = False
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    # torch 1.13 + gloo can deadlock in interpreter teardown (torch-probe.md §3.4): leave at once.
    os._exit(0 if ok else 1)


def write_report(args, plan, mode, steps, device, world, records, ok):
    errors = [dict(r["error"], rank=r["rank"]) for r in records if not r["ok"]]
    params = next((r["parameters"] for r in records if r["ok"]), None)
    numels = next((r["parameterNumels"] for r in records if r["ok"]), None)
    engine = {"name": "deepspeed" if mode == "deepspeed" else "torch", "versions": versions()}
    ds = next((r.get("deepspeedVersion") for r in records if r.get("deepspeedVersion")), None)
    if ds:
        engine["versions"]["deepspeed"] = ds
    report = {
        "schemaVersion": SCHEMA_VERSION, "kind": "shardlens-probe-report", "ok": ok,
        "engine": engine, "backend": "nccl" if device.type == "cuda" else "gloo",
        "device": f"cuda:{torch.cuda.get_device_name(device)}" if device.type == "cuda" else "cpu",
        "worldSize": world, "nnodes": len({r["host"] for r in records}),
        "mode": mode, "attention": attention_kind(), "parameters": params, "parameterNumels": numels, "steps": steps, "measuredSteps": steps - 1,
        "plan": {"name": plan.get("name"), "model": plan["model"], "training": plan["training"],
                 "parallel": plan["parallel"], "scaling": plan.get("scaling")},
        "errors": errors,
        "ranks": [{k: v for k, v in r.items() if k not in ("error", "parameters", "parameterNumels")} | ({"error": r["error"]} if not r["ok"] else {})
                  for r in records],
        "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    os.replace(tmp, args.out)


if __name__ == "__main__":
    main(sys.argv[1:])
