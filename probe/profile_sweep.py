"""Measures a cluster for ShardLens's step-time model: ``shardlens profile`` launches this under torchrun.

    profile_sweep.py --request request.json --out profile.json [--watchdog 600]

The request (written by ShardLens from the user's configs) lists GEMM shapes, attention shapes and collectives (kind,
group size, members per node, message bytes). Every rank times its share; rank 0 writes one JSON profile
(``kind: "shardlens-profile"``). On CPU ranks (gloo) the numbers are meaningless; the plumbing is the same.
"""
import argparse
import faulthandler
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watchdog import watch_parent  # noqa: E402

# Before torch is imported: a rank whose launcher is gone (killed with ShardLens) exits instead of measuring.
if os.environ.get("SHARDLENS_LAUNCHER_PID"):
    watch_parent("SHARDLENS_LAUNCHER_PID")
try:
    import torch
    import torch.distributed as dist
except ImportError as exc:
    sys.stderr.write(f"shardlens-profile: torch is not importable by {sys.executable}: {exc}\n")
    sys.exit(3)

SCHEMA_VERSION = 1


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--request", required=True, help="JSON request written by shardlens profile")
    p.add_argument("--out", required=True, help="where rank 0 writes the profile JSON")
    p.add_argument("--watchdog", type=float, default=600.0, help="seconds before a hung rank exits")
    return p.parse_args(argv)


class Timer:
    """Device time of a callable: CUDA events on GPU, perf_counter on CPU; median of `reps` after `warm` runs."""

    def __init__(self, device):
        self.device = device

    def __call__(self, fn, reps, warm=2):
        for _ in range(warm):
            fn()
        times = []
        for _ in range(reps):
            if self.device.type == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        times.sort()
        return times[len(times) // 2]


def gemm_sweep(req, device, timer, dtype16):
    out = []
    fp8 = getattr(torch, "float8_e4m3fn", None)
    for g in req.get("gemm", []):
        m, n, k = int(g["m"]), int(g["n"]), int(g["k"])
        if g.get("dtype") == "fp8":
            if device.type != "cuda" or fp8 is None or not hasattr(torch, "_scaled_mm"):
                continue
            a = torch.randn(m, k, device=device).to(fp8)
            b = torch.randn(n, k, device=device).to(fp8).t()
            one = torch.ones((), device=device)
            fn = lambda a=a, b=b, one=one: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        else:
            a = torch.randn(m, k, device=device, dtype=dtype16)
            b = torch.randn(k, n, device=device, dtype=dtype16)
            fn = lambda a=a, b=b: a @ b
        try:
            out.append({"dtype": g.get("dtype", "bf16"), "m": m, "n": n, "k": k, "seconds": timer(fn, int(req.get("reps", 5)))})
        except RuntimeError as exc:  # An unsupported shape or dtype is skipped, not fatal.
            sys.stderr.write(f"shardlens-profile: GEMM {m}x{n}x{k} {g.get('dtype')}: {exc}\n")
    return out


def attention_sweep(req, device, timer, dtype16, warnings):
    out = []
    F = torch.nn.functional
    if not hasattr(F, "scaled_dot_product_attention"):  # torch < 2.0: no fused attention to measure.
        warnings.append(f"torch {torch.__version__} has no scaled_dot_product_attention: attention was not measured")
        return out
    for a in req.get("attention", []):
        seq, hd, heads, causal = int(a["seq"]), int(a["headDim"]), int(a.get("heads", 8)), bool(a["causal"])
        shape = (1, heads, seq, hd)
        q, k, v = (torch.randn(shape, device=device, dtype=dtype16, requires_grad=True) for _ in range(3))
        fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        grad = torch.randn(shape, device=device, dtype=dtype16)

        def fwd_bwd():
            q.grad = k.grad = v.grad = None
            F.scaled_dot_product_attention(q, k, v, is_causal=causal).backward(grad)
        reps = int(req.get("reps", 5))
        tf = timer(fwd, reps)
        tfb = timer(fwd_bwd, reps)
        out.append({"seq": seq, "headDim": hd, "causal": causal, "batchHeads": heads, "fwdSeconds": tf, "bwdSeconds": max(tfb - tf, 1e-9)})
    return out


def memory_sweep(req, device, timer):
    n = int(req.get("memoryBytes", 1 << 28)) // 4
    x = torch.empty(n, device=device, dtype=torch.float32)
    y = torch.empty_like(x)
    t = timer(lambda: y.copy_(x), int(req.get("reps", 5)))
    return (2 * n * 4) / t if t > 0 else 0.0


def group_of(size, per_node, world, gpus_per_node):
    """Rank lists of groups of `size` ranks with `per_node` members per node (strided like the layout's axis)."""
    nodes = max(1, world // gpus_per_node)
    span = size // per_node
    if size > world or per_node > gpus_per_node or size % per_node or span > nodes:
        return None
    stride = gpus_per_node // per_node
    return [[(node * gpus_per_node) + (j % per_node) * stride for node in range(span) for j in range(per_node)]]


def collective_sweep(req, device, timer, world, rank, gpus_per_node):
    out = []
    for c in req.get("collectives", []):
        kind, size, per_node = c["kind"], int(c["groupSize"]), int(c["perNode"])
        layout = group_of(size, per_node, world, gpus_per_node)
        if layout is None:
            continue
        ranks = sorted(layout[0])
        group = dist.new_group(ranks=ranks)  # Every rank takes part in new_group, members or not.
        dtype = torch.bfloat16 if device.type == "cuda" else torch.float32
        elem = torch.empty((), dtype=dtype).element_size()
        for nbytes in c["bytes"]:
            numel = max(size, int(nbytes) // elem // size * size)
            if rank in ranks:
                x = torch.randn(numel, device=device, dtype=dtype)
                if kind == "all-reduce":
                    fn = lambda x=x: dist.all_reduce(x, group=group)
                elif kind == "all-gather":
                    outs = [torch.empty_like(x) for _ in range(size)]
                    fn = lambda x=x, outs=outs: dist.all_gather(outs, x, group=group)
                elif kind == "reduce-scatter":
                    ins = [torch.empty_like(x) for _ in range(size)]
                    fn = lambda x=x, ins=ins: dist.reduce_scatter(x, ins, group=group)
                else:
                    outs = [torch.empty(numel // size, device=device, dtype=x.dtype) for _ in range(size)]
                    ins = list(x.chunk(size))
                    fn = lambda ins=ins, outs=outs: dist.all_to_all(outs, ins, group=group)
                try:
                    t = timer(fn, int(req.get("reps", 5)))
                except RuntimeError as exc:  # gloo lacks some collectives (reduce_scatter, all_to_all).
                    sys.stderr.write(f"shardlens-profile: {kind} on {size} ranks: {exc}\n")
                    t = None
                if rank == ranks[0] and t is not None:
                    out.append({"kind": kind, "groupSize": size, "perNode": per_node, "bytes": numel * x.element_size(), "seconds": t})
            dist.barrier()
    return out


def main(argv):
    args = parse_args(argv)
    faulthandler.dump_traceback_later(args.watchdog, exit=True)
    with open(args.request, encoding="utf-8") as f:
        req = json.load(f)
    use_cuda = torch.cuda.is_available() and req.get("device", "auto") != "cpu"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if use_cuda:
        torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank) if use_cuda else torch.device("cpu")
    dist.init_process_group(backend="nccl" if use_cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    gpus_per_node = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)))
    timer = Timer(device)
    dtype16 = torch.bfloat16 if use_cuda else torch.float32
    warnings = []
    if not use_cuda:
        warnings.append("measured on CPU ranks over gloo: the numbers do not describe any GPU")
    # Kernels are measured on local rank 0 of every node (the others wait); collectives on every rank.
    kernels = {"gemm": [], "attention": [], "hbm": 0.0}
    if local_rank == 0:
        kernels = {"gemm": gemm_sweep(req, device, timer, dtype16), "attention": attention_sweep(req, device, timer, dtype16, warnings),
                   "hbm": memory_sweep(req, device, timer)}
    dist.barrier()
    collectives = collective_sweep(req, device, timer, world, rank, gpus_per_node)
    gathered = [None] * world
    dist.all_gather_object(gathered, {"kernels": kernels, "collectives": collectives, "host": platform.node()})
    if rank == 0:
        profile = {
            "schemaVersion": SCHEMA_VERSION, "kind": "shardlens-profile",
            "device": torch.cuda.get_device_name(device) if use_cuda else "cpu", "backend": "nccl" if use_cuda else "gloo",
            "torch": torch.__version__, "worldSize": world, "gpusPerNode": gpus_per_node,
            "nodes": len({g["host"] for g in gathered}),
            "gemm": gathered[0]["kernels"]["gemm"], "attention": gathered[0]["kernels"]["attention"],
            "hbmBytesPerSecond": gathered[0]["kernels"]["hbm"],
            "collectives": [c for g in gathered for c in g["collectives"]],
            "warnings": warnings, "createdAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        tmp = args.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(profile, f, indent=1)
        os.replace(tmp, args.out)
    dist.barrier()
    sys.stdout.flush()
    sys.stderr.flush()
    # torch 1.13 + gloo can deadlock in interpreter teardown (torch-probe.md §3.4): leave at once.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
