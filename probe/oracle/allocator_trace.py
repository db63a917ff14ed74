"""The allocation trace of the oracle's warm-up and tracked steps, and its replay through the caching-allocator
simulation (allocator.py).

Every tensor storage the step's MemTracker sees is an allocation, in the order it appears, of its bytes, on the stream
current when it appears; a storage's death (its weak reference) is a free; a ``resize_`` (FSDP2 frees and re-allocates
its unsharded parameters that way) is an allocation of the new size followed by the free of the old one, as torch's
storage resize does. Streams are those the engine selects with ``device_handle.stream(...)``: on a CPU FSDP2 runs the
same code with ``torch.cpu`` streams, whose current stream this module reads, and names them after FSDP2's
``FSDPCommContext`` (all-gather copy-in, all-gather, reduce-scatter, all-reduce streams). The replay starts from the
parameters (allocated at model construction), runs the warm-up step (optimizer states appear) and the tracked step;
torch's peak reserved is the peak over both, as a training run's first steps are.
"""
import contextlib
import weakref

import torch
from torch.distributed._tools.common_utils import get_untyped_storages
from torch.utils.weak import WeakIdKeyDictionary

from .allocator import CachingAllocator, Config

FSDP_STREAMS = ("all_gather_copy_in_stream", "all_gather_stream", "reduce_scatter_stream", "all_reduce_stream")


class AllocationTrace:
    """Records ('a', key, bytes, stream) and ('f', key) events; ``mark_step`` notes where the tracked step begins."""

    def __init__(self, modules=(), conf="", capacity=None):
        self.events, self.step_start = [], 0
        self.conf, self.capacity = conf, capacity
        self._live = WeakIdKeyDictionary()
        self._refs = {}
        self._next = 0
        self._modules = list(modules)
        self._names = {}
        self._muted = 0

    # -- recording ---------------------------------------------------------------------------------------------------
    def see(self, tensor):
        """Registers the storages behind a tensor the tracker saw (DTensors by their local part)."""
        if self._muted:
            return
        for st in get_untyped_storages(tensor):
            if st not in self._live:
                self._register(st, st.nbytes())

    def _register(self, st, nbytes):
        entry = [self._new_key(nbytes), nbytes]
        self._live[st] = entry
        ref = weakref.ref(st, lambda _r, e=entry, k=id(entry): self._freed(e, k))
        self._refs[id(entry)] = ref

    def _new_key(self, nbytes):
        key, self._next = self._next, self._next + 1
        if nbytes > 0:
            self.events.append(("a", key, nbytes, self._stream()))
        return key

    def _freed(self, entry, ref_key):
        self._refs.pop(ref_key, None)
        if entry[1] > 0:
            self.events.append(("f", entry[0]))

    def _resized(self, st, new):
        entry = self._live.get(st)
        if entry is None:
            self._register(st, new)
            return
        old_key, old = entry
        if new == old:
            return
        entry[0], entry[1] = self._new_key(new), new
        if old > 0:
            self.events.append(("f", old_key))

    def mark_step(self):
        self.step_start = len(self.events)

    @contextlib.contextmanager
    def capturing(self):
        """Sees every ``UntypedStorage.resize_`` while active (install before the trackers: they wrap it in turn), and
        ignores the global-shape fake tensors DTensor makes to propagate shapes (ShardingPropagator
        ``_propagate_tensor_meta_non_cached`` runs the op on them in the active fake mode): they are never allocated."""
        from torch.distributed.tensor._sharding_prop import ShardingPropagator
        resize, propagate = torch.UntypedStorage.resize_, ShardingPropagator._propagate_tensor_meta_non_cached
        trace = self

        def resize_(st, size):
            out = resize(st, size)
            trace._resized(st, st.nbytes())
            return out

        def muted(prop, *args, **kwargs):
            trace._muted += 1
            try:
                return propagate(prop, *args, **kwargs)
            finally:
                trace._muted -= 1
        torch.UntypedStorage.resize_, ShardingPropagator._propagate_tensor_meta_non_cached = resize_, muted
        try:
            yield self
        finally:
            torch.UntypedStorage.resize_, ShardingPropagator._propagate_tensor_meta_non_cached = resize, propagate

    # -- streams -------------------------------------------------------------------------------------------------------
    def _stream(self):
        stream = torch.cpu.current_stream()
        name = self._names.get(id(stream))
        if name is None:
            name = self._name_of(stream)
            self._names[id(stream)] = name
        return name

    def _name_of(self, stream):
        if stream is torch.cpu._default_cpu_stream:
            return "default"
        for i, ctx in enumerate(_comm_contexts(self._modules)):
            for attr in FSDP_STREAMS:
                if getattr(ctx, attr, None) is stream:
                    return f"fsdp {attr[:-len('_stream')].replace('_', '-')}" + (f" #{i}" if i else "")
        return f"stream {len(self._names)}"

    # -- replay --------------------------------------------------------------------------------------------------------
    def summary(self):
        """Replays the trace with the native allocator and with expandable segments; what the report's rank holds."""
        base = Config.parse(self.conf, capacity=self.capacity or float("inf"))
        out = {"events": len(self.events), "stepPeakRequested": _step_peak(self.events, self.step_start)}
        for name, expandable in (("native", False), ("expandable", True)):
            cfg = Config.parse(self.conf, capacity=base.capacity)
            cfg.expandable = expandable
            out[name] = replay(self.events, cfg)
        return out


def _comm_contexts(modules):
    seen = []
    for mod in modules:
        state = getattr(mod, "_get_fsdp_state", lambda: None)()
        ctx = getattr(state, "_comm_ctx", None)
        if ctx is not None and all(ctx is not c for c in seen):
            seen.append(ctx)
    return seen


def _step_peak(events, start):
    """Peak of the requested bytes live during the tracked step (MemTracker's total peak, from the trace)."""
    sizes, live, peak = {}, 0, 0
    for i, ev in enumerate(events):
        if ev[0] == "a":
            sizes[ev[1]] = ev[2]
            live += ev[2]
            if i >= start:
                peak = max(peak, live)
        else:
            live -= sizes.pop(ev[1], 0)
    return peak


def replay(events, cfg):
    """Runs a trace through a CachingAllocator: peaks (bytes), segments, retries, out of memory, and each stream's
    reserved bytes at the peak of the total."""
    alloc, blocks, oom = CachingAllocator(cfg), {}, False
    for ev in events:
        if ev[0] == "a":
            block = alloc.malloc(ev[2], ev[3])
            if block is None:
                oom = True
                break
            blocks[ev[1]] = block
        else:
            block = blocks.pop(ev[1], None)
            if block is not None:
                alloc.free(block)
    return {
        "peakAllocated": alloc.peak_allocated, "peakReserved": alloc.peak_reserved, "peakRequested": alloc.peak_requested,
        "reservedByStream": {k: v for k, v in alloc.peak_streams.items() if v > 0}, "segments": alloc.segments,
        "retries": alloc.retries, "oom": oom,
    }


def main(stdin, stdout):
    """``python -m oracle.allocator_trace``: replays traces given as JSON on stdin — a list of {"events": [["a", key,
    bytes, stream] | ["f", key], …], "conf": PYTORCH_CUDA_ALLOC_CONF text, "capacity": bytes or null} — and writes one
    replay per trace as JSON."""
    import json
    out = []
    for case in json.load(stdin):
        cfg = Config.parse(case.get("conf", ""), capacity=case.get("capacity") or float("inf"))
        out.append(replay([tuple(ev) for ev in case["events"]], cfg))
    json.dump(out, stdout)


if __name__ == "__main__":
    import sys
    main(sys.stdin, sys.stdout)
