"""Per-rank measurements: exact tensor accounting, collective counters and the CPU allocator trace."""
import contextlib
import resource

import torch
import torch.distributed as dist

# Collectives wrapped at the Python level. ZeroRedundancyOptimizer and FSDP call them as ``dist.X(...)``.
WRAPPED = ("all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor", "_all_gather_base",
           "reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base")


def nbytes(tensors):
    """Bytes of distinct tensors (by storage pointer, so views and tied weights count once)."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        key = (t.data_ptr(), t.numel(), t.dtype)
        if key not in seen:
            seen.add(key)
            total += t.numel() * t.element_size()
    return total


def state_bytes(states):
    """Bytes of every tensor held in an optimizer's per-parameter state (Adam: exp_avg, exp_avg_sq, step)."""
    return nbytes(v for st in states.values() for v in st.values() if torch.is_tensor(v))


def _tensor_bytes(x):
    if torch.is_tensor(x):
        return x.numel() * x.element_size()
    if isinstance(x, (list, tuple)):
        return sum(_tensor_bytes(t) for t in x)
    return 0


def wire_bytes(op, payload, n):
    """Bytes one rank sends for a payload with ring algorithms (nccl-tests PERFORMANCE.md conventions).

    all_reduce: 2(N−1)/N·S; all_gather / reduce_scatter (S = unsharded size): (N−1)/N·S; broadcast, reduce:
    (N−1)/N·S averaged over ranks (pipelined ring).
    """
    factor = 2.0 if op in ("all_reduce", "ddp_bucket_allreduce") else 1.0
    return int(round(factor * (n - 1) / n * payload)) if n > 1 else 0


class CommCounter:
    """Counts calls and unsharded payload bytes per collective; ``suspended()`` hides nested calls."""

    def __init__(self):
        self.counts, self.active, self._depth, self._originals = {}, False, 0, {}

    def add(self, op, payload):
        if self.active and self._depth == 0:
            c = self.counts.setdefault(op, {"calls": 0, "payloadBytes": 0})
            c["calls"] += 1
            c["payloadBytes"] += payload

    @contextlib.contextmanager
    def suspended(self):
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    def install(self):
        for name in WRAPPED:
            fn = getattr(dist, name, None)
            if fn is None:
                continue
            self._originals[name] = fn
            setattr(dist, name, self._wrap(name, fn))

    def _wrap(self, name, fn):
        def wrapper(*args, **kwargs):
            first = args[0] if args else next(iter(kwargs.values()), None)
            out = kwargs.get("output_tensor_list", kwargs.get("output", first))
            if name in ("reduce_scatter", "reduce_scatter_tensor", "_reduce_scatter_base"):
                payload = _tensor_bytes(args[1] if len(args) > 1 else kwargs.get("input_list", kwargs.get("input")))
            else:
                payload = _tensor_bytes(out)
            self.add(name, payload)
            with self.suspended():
                return fn(*args, **kwargs)
        return wrapper

    def reset(self):
        self.counts = {}

    def per_step(self, steps, world):
        """Averages the counts over ``steps`` and adds the ring estimate of bytes sent."""
        out = {}
        for op, c in sorted(self.counts.items()):
            payload = c["payloadBytes"] // max(steps, 1)
            out[op] = {"calls": c["calls"] // max(steps, 1), "payloadBytes": payload,
                       "wireBytesSent": wire_bytes(op, payload, world)}
        return out


def ddp_counting_hook(counter, synchronous):
    """A DDP comm hook that counts each bucket, then all-reduces its mean (as ``default_hooks.allreduce_hook``).

    On CPU the hook is synchronous: an async callback on a gloo thread together with the CPU memory profiler
    corrupted the heap in torch 1.13 (see shared/reference/torch-probe.md §3.5).
    """
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    def hook(state, bucket):
        buf = bucket.buffer()
        counter.add("ddp_bucket_allreduce", buf.numel() * buf.element_size())
        with counter.suspended():
            if not synchronous:
                return default_hooks.allreduce_hook(state, bucket)
            buf.div_(dist.get_world_size())
            dist.all_reduce(buf)
        fut = torch.futures.Future()
        fut.set_result(buf)
        return fut
    return hook


def peak_rss_bytes():
    """Peak resident set size of this process (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cpu_trace(prof, anchor_bytes):
    """Replays the profiler's ``[memory]`` events and returns allocated-at-start and peak bytes per step marker.

    The running sum is calibrated so that it equals ``anchor_bytes`` at the ``probe_wrapped`` marker: frees made on
    unprofiled gloo threads are otherwise missed (torch-probe.md §3.6).
    """
    events = list(prof.profiler.kineto_results.events())
    mem = sorted((e.start_us(), e.nbytes()) for e in events if e.name() == "[memory]")
    marks = sorted((e.start_us(), e.start_us() + e.duration_us(), e.name()) for e in events
                   if e.name().startswith("probe_"))
    anchor = next((m for m in marks if m[2] == "probe_wrapped"), None)
    if anchor is None:
        return None
    running, i, at = 0, 0, {}
    while i < len(mem) and mem[i][0] <= anchor[0]:
        running += mem[i][1]
        i += 1
    offset = anchor_bytes - running
    steps = {}
    for start, end, name in marks:
        if not name.startswith("probe_step"):
            continue
        run, peak = 0, None
        for t, b in mem:
            if t > end:
                break
            run += b
            if t >= start:
                peak = run if peak is None else max(peak, run)
        before = sum(b for t, b in mem if t < start)
        at[name] = before + offset
        steps[name] = (peak if peak is not None else before) + offset
    return {"calibrationOffsetBytes": offset, "allocatedAtStart": at, "peakInStep": steps}
