"""torch's own memory accounting for one training step: MemTracker with per-category peaks.

``MemTracker`` (torch/distributed/_tools/mem_tracker.py) sorts every tensor storage into parameters, buffers,
gradients, activations, temporaries and optimizer states and records the snapshot at the peak of the total. This
subclass also keeps the peak of each category on its own, accepts modules that run several times in one step
(pipeline micro-batches), and files FSDP2's sharded gradients and Megatron-style fp32 buffers under the right category.
"""
import weakref

import torch
from torch.distributed._tools.mem_tracker import MemTracker, _MemRefType, _TOTAL_KEY, _UpdateType

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
        self._seen_modules = weakref.WeakSet()
        self._trace = trace

    # Every storage the tracker sees also enters the allocation trace (allocator_trace.py), in the same order.
    def _track(self, reftype, t):
        super()._track(reftype, t)
        if self._trace is not None:
            self._trace.see(t)

    def _update_and_maybe_create_winfos(self, t, reftype, update_existing=False):
        out = super()._update_and_maybe_create_winfos(t, reftype, update_existing)
        if self._trace is not None:
            self._trace.see(t)
        return out

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

    def file_under(self, tensor, category):
        """Files a tensor's storages under a category ('gradients', 'optimizer', 'parameters', …)."""
        ref = next(k for k, v in CATEGORY.items() if v == category)
        if tensor is not None:
            self._update_and_maybe_create_winfos(tensor, ref)

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


def instrument_fsdp(tracker, model):
    """Files FSDP2's buffers under torch's categories as soon as FSDP creates them.

    Gathered parameters (the all-gather output and the unsharded parameters copied out of it, FSDPParamGroup.unshard
    and wait_for_unshard) are parameters, wherever in the step they appear; the sharded gradients that
    FSDPParamGroup.post_backward assigns after the reduce-scatter are gradients (MemTracker would count a tensor
    created in backward as a temporary). The reduce-scatter input stays a temporary.
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

    def wrap(group, name, after):
        original = getattr(group, name)

        def method(*args, _orig=original, **kwargs):
            out = _orig(*args, **kwargs)
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
        wrap(group, "unshard", gathered)
        wrap(group, "wait_for_unshard", params_of)
        wrap(group, "post_backward", sharded_grads)
    return undo


def restore(undo):
    for group, name in undo:
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


def tracked_step(step, externals, fsdp_root=None, files=(), trace=None):
    """Runs ``step()`` once under a fresh StepTracker and returns its result.

    ``externals`` are the modules and optimizers created before tracking; ``files`` pairs (tensor, category) for
    buffers the engine keeps outside modules and optimizer state (fp32 master weights, main-grad buffers); ``trace``
    an AllocationTrace that records the storages the tracker sees.
    """
    tracker = StepTracker(trace)
    tracker.track_external(*externals)
    for tensor, category in files:
        tracker.file_under(tensor, category)
    undo = instrument_fsdp(tracker, fsdp_root) if fsdp_root is not None else []
    try:
        with tracker:
            step()
    finally:
        restore(undo)
    return tracker.result()


__all__ = ["StepTracker", "tracked_step", "storage_bytes", "KEYS", "torch"]
