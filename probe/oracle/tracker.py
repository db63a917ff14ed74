"""torch's own memory accounting for one training step: MemTracker with per-category peaks.

``MemTracker`` (torch/distributed/_tools/mem_tracker.py) sorts every tensor storage into parameters, buffers,
gradients, activations, temporaries and optimizer states and records the snapshot at the peak of the total. This
subclass also keeps the peak of each category on its own, accepts modules that run several times in one step
(pipeline micro-batches), and files FSDP2's sharded gradients and Megatron-style fp32 buffers under the right category.
"""
import contextlib
import weakref

import torch
from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType, _TOTAL_KEY, _UpdateType
from torch.distributed._tools.common_utils import get_untyped_storages

# Report keys of the torch categories.
CATEGORY = {
    _MemRefType.PARAM: "parameters", _MemRefType.BUFFER: "buffers", _MemRefType.GRAD: "gradients",
    _MemRefType.ACT: "activations", _MemRefType.TEMP: "temporaries", _MemRefType.OPT: "optimizer",
    _MemRefType.OTH: "other",
}
KEYS = tuple(CATEGORY.values()) + ("total",)


class StepTracker(MemTracker):
    """MemTracker that keeps the peak of every category and of the total, and tolerates repeated forwards."""

    def __init__(self, trace=None):
        super().__init__()
        self._cat_peak = {}
        # Every storage the tracker sees also enters the allocation trace (allocator_trace.py), in the same order.
        self._trace = trace
        self._seen_modules = weakref.WeakSet()
        self._filing = False
        # An engine whose optimizer wrapper is not a torch Optimizer (DeepSpeed) makes its step's tensors outside any
        # module: they are temporaries, not activations.
        self.outside_modules_is_temporary = False
        self._forced = None
        # While an FSDP2 routine runs, the storages it creates are filed under its category from the start (its
        # all-gather buffers are parameters, its reduce-scatter buffers gradients), not as activations or temporaries
        # for the moment before they are re-filed.
        self.forced = None
        # DTensor's sharding propagation runs each op once more on full-size fake tensors to learn the output's
        # metadata (ShardingPropagator._propagate_tensor_meta_non_cached); with the oracle's fake mode active it
        # reuses that mode, so its tensors would look allocated. No GPU allocates them: they are not tracked.
        self.ignoring = False

    # Per-category peaks: every change of the current snapshot passes through _update_snap.
    def _update_snap(self, u_type, winfo, old_mem_consumed=None, old_reftype=None):
        super()._update_snap(u_type, winfo, old_mem_consumed, old_reftype)
        if u_type == _UpdateType.DEL:
            return
        snap = self._curr_mem_snap.get(winfo.device)
        if snap is None:
            return
        peak = self._cat_peak.setdefault(winfo.device, {})
        for key, value in snap.items():
            if value > peak.get(key, 0):
                peak[key] = value

    # Module hooks reduced to what categorisation needs; the per-module snapshots of MemTracker are not used and
    # its "one call per module per step" rule would reject pipeline micro-batches.
    def _pre_fw_hook(self, module, inputs):
        if module not in self._seen_modules:
            self._seen_modules.add(module)
            self._track_module_params_and_buffers(module, install_grad_hooks=True)
        elif self._mod_tracker.is_bw and self._ac_mod is None:
            self._ac_mod = weakref.ref(module)
            self._in_ac = True

    def _post_fw_hook(self, module, inputs, outputs):
        if self._mod_tracker.is_bw and self._ac_mod is not None and self._ac_mod() is module:
            self._ac_mod = None
            self._in_ac = False

    def _pre_bw_hook(self, module, args):
        return None

    def _post_bw_hook(self, module, args):
        return None

    def file_under(self, tensor, category, pin=False):
        """Files a tensor's storages under a category ('gradients', 'optimizer', 'parameters', …). A pinned storage
        keeps it: MemTracker's gradient hooks would refile an engine's bucket as gradients when a .grad views it."""
        ref = next(k for k, v in CATEGORY.items() if v == category)
        if tensor is None:
            return
        self._filing = True
        try:
            for winfo in self._update_and_maybe_create_winfos(tensor, ref):
                if pin:
                    winfo.pinned = True
        finally:
            self._filing = False

    def _update_and_maybe_create_winfos(self, t, reftype, update_existing=False):
        if not self._filing:
            known = [self._WINFO.get(st, (None, None))[0] for st in get_untyped_storages(t)]
            if known and all(w is not None and getattr(w, "pinned", False) for w in known):
                return set(known)
        out = super()._update_and_maybe_create_winfos(t, reftype, update_existing)
        if self._trace is not None:
            self._trace.see(t)
        return out

    @contextlib.contextmanager
    def filing_new_tensors_as(self, category):
        """Storages made inside the block are filed under ``category`` and keep it (an engine's gathered parameters,
        buckets and gradient partitions)."""
        previous, self._forced = self._forced, category
        try:
            yield
        finally:
            self._forced = previous

    def _track(self, reftype, t):
        if self.ignoring:
            return None
        if self.forced is not None and reftype != _MemRefType.OPT:
            reftype = next(k for k, v in CATEGORY.items() if v == self.forced)
        if self._forced is not None and all(self._WINFO.get(st, (None, None))[0] is None for st in get_untyped_storages(t)):
            self.file_under(t, self._forced, pin=True)  # new storages only: views keep their category
            if self._trace is not None:
                self._trace.see(t)
            return None
        if (self.outside_modules_is_temporary and reftype == _MemRefType.ACT and not self._mod_tracker.is_bw
                and self._mod_tracker.parents == {"Global"}):
            reftype = _MemRefType.TEMP
        out = super()._track(reftype, t)
        if self._trace is not None:
            self._trace.see(t)
        return out

    def result(self):
        """Per-category peaks and the snapshot at the peak of the total, in bytes, summed over devices."""
        peaks = dict.fromkeys(KEYS, 0)
        at_peak = dict.fromkeys(KEYS, 0)
        for snap in self._cat_peak.values():
            for key, value in snap.items():
                name = "total" if key == _TOTAL_KEY else CATEGORY.get(key)
                if name:
                    peaks[name] += int(value)
        for snap in self._peak_mem_snap.values():
            for key, value in snap.items():
                name = "total" if key == _TOTAL_KEY else CATEGORY.get(key)
                if name:
                    at_peak[name] += int(value)
        return {"peaks": peaks, "atPeak": at_peak}


_ACTIVE = []


@contextlib.contextmanager
def allocations_as(category):
    """Files what is allocated inside the block under ``category`` (when a step is being tracked): work an engine does
    outside autograd's backward but for it (the pipeline schedule's gradient reduction after the last micro-batch)
    allocates temporaries, as it does inside the backward without PP."""
    tracker = _ACTIVE[-1] if _ACTIVE else None
    if tracker is None:
        yield
        return
    before, tracker.forced = tracker.forced, category
    try:
        yield
    finally:
        tracker.forced = before


def instrument_fsdp(tracker, model):
    """Files FSDP2's buffers under torch's categories as soon as FSDP creates them.

    Gathered parameters (the all-gather input and output and the unsharded parameters copied out of it,
    FSDPParamGroup.unshard and wait_for_unshard) are parameters, wherever in the step they appear; the reduce-scatter
    input and output and the sharded gradients that FSDPParamGroup.post_backward assigns are gradients (MemTracker
    would count a tensor created in backward as a temporary, in forward as an activation).
    """
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:
        return []
    undo = []

    def params_of(group):
        for fp in group.fsdp_params:
            for t in getattr(fp, "all_gather_outputs", []) or []:
                tracker.file_under(t, "parameters")
            if hasattr(fp, "_unsharded_param"):
                tracker.file_under(fp._unsharded_param, "parameters")

    def wrap(group, name, after, category):
        original = getattr(group, name)

        def method(*args, _orig=original, **kwargs):
            before, tracker.forced = tracker.forced, category
            try:
                out = _orig(*args, **kwargs)
            finally:
                tracker.forced = before
            after(group)
            return out
        setattr(group, name, method)
        undo.append((group, name))

    def gathered(group):
        result = getattr(group, "_all_gather_result", None)
        if result is not None and getattr(result, "all_gather_output", None) is not None:
            tracker.file_under(result.all_gather_output, "parameters")

    def sharded_grads(group):
        for fp in group.fsdp_params:
            tracker.file_under(fp.sharded_param.grad, "gradients")

    for module in model.modules():
        if not isinstance(module, FSDPModule):
            continue
        group = module._get_fsdp_state()._fsdp_param_group
        if group is None:
            continue
        wrap(group, "unshard", gathered, "parameters")
        wrap(group, "wait_for_unshard", params_of, "parameters")
        wrap(group, "post_backward", sharded_grads, "gradients")
    return undo


def ignore_dtensor_propagation(tracker):
    """Stops tracking while DTensor propagates an op's metadata on full-size fake tensors (see StepTracker)."""
    try:
        from torch.distributed.tensor._sharding_prop import ShardingPropagator
    except ImportError:
        return []
    name = "_propagate_tensor_meta_non_cached"
    original = getattr(ShardingPropagator, name, None)
    if original is None:
        return []

    def propagate(self, *args, **kwargs):
        before, tracker.ignoring = tracker.ignoring, True
        try:
            return original(self, *args, **kwargs)
        finally:
            tracker.ignoring = before
    setattr(ShardingPropagator, name, propagate)
    return [(ShardingPropagator, name, original)]


def restore(undo):
    for item in undo:
        if len(item) == 3:
            owner, name, original = item
            setattr(owner, name, original)
            continue
        group, name = item
        if name in group.__dict__:
            del group.__dict__[name]


def storage_bytes(tensors):
    """Bytes of the distinct storages behind tensors (views and tied weights once; DTensors by their local part)."""
    seen, total = set(), 0
    for t in tensors:
        if t is None:
            continue
        local = t.to_local() if hasattr(t, "to_local") else t
        st = local.untyped_storage()
        key = id(st)
        if key not in seen:
            seen.add(key)
            total += st.nbytes()
    return total


def tracked_step(step, externals, fsdp_root=None, files=(), instrument=None, gather_as_parameters=True, trace=None):
    """Runs ``step()`` once under a fresh StepTracker and returns its result.

    ``externals`` are the modules and optimizers created before tracking; ``files`` pairs (tensor, category) for
    buffers the engine keeps outside modules and optimizer state (fp32 master weights, main-grad buffers);
    ``instrument(tracker)`` files an engine's buffers as it makes them and returns a callable that undoes it.
    FSDP2's gathered parameters are parameters from their allocation on (``gather_as_parameters`` is kept for callers;
    the oracle files them so in every layout); ``trace`` an AllocationTrace that records the storages the tracker sees.
    """
    tracker = StepTracker(trace)
    tracker.track_external(*externals)
    for tensor, category in files:
        tracker.file_under(tensor, category, pin=instrument is not None)
    undo = instrument_fsdp(tracker, fsdp_root) if fsdp_root is not None else []
    undo += ignore_dtensor_propagation(tracker)
    undo_engine = instrument(tracker) if instrument is not None else None
    _ACTIVE.append(tracker)
    try:
        with tracker:
            step()
    finally:
        _ACTIVE.pop()
        restore(undo)
        if undo_engine is not None:
            undo_engine()
    return tracker.result()


__all__ = ["StepTracker", "tracked_step", "storage_bytes", "KEYS", "torch"]
