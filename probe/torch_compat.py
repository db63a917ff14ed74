"""Shims for known incompatibilities of torch < 2.0 with Python >= 3.11. Each shim is a no-op elsewhere.

1. torchrun's ``Std.from_str`` iterates an ``IntFlag``; Python 3.11 no longer yields its 0-valued member, so every
   launch fails with ``'NoneType' object has no attribute 'get'`` (meta-llama/llama#86).
2. ``import torch.distributed.fsdp`` fails because ``_shard/sharded_tensor/metadata.py`` uses a mutable dataclass
   default, which Python 3.11 rejects.
"""
import dataclasses
import re
import sys


def _torch_major():
    import torch
    try:
        return int(torch.__version__.split(".")[0])
    except ValueError:
        return 0


def needs_shims():
    """True when the installed torch predates the Python 3.11 fixes."""
    return sys.version_info >= (3, 11) and _torch_major() < 2


def patch_torchrun():
    """Makes ``Std.from_str`` parse values with ``int`` instead of iterating the flag."""
    if not needs_shims():
        return
    from torch.distributed.elastic.multiprocessing import api

    def _from_str(cls, vm):
        if re.match(api._VALUE_REGEX, vm):
            return cls(int(vm))
        if re.match(api._MAPPING_REGEX, vm):
            return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
        raise ValueError(f"{vm} does not match: <{api._VALUE_REGEX}> or <{api._MAPPING_REGEX}>")

    api.Std.from_str = classmethod(_from_str)


def import_fsdp():
    """Imports ``torch.distributed.fsdp``, turning mutable dataclass defaults into factories while it loads."""
    if not needs_shims():
        import torch.distributed.fsdp as fsdp
        return fsdp
    original = dataclasses._get_field

    def _get_field(cls, name, a_type, *rest):
        default = cls.__dict__.get(name, dataclasses.MISSING)
        if isinstance(default, dataclasses.Field):
            value = default.default
            if value is not dataclasses.MISSING and value.__class__.__hash__ is None:
                default.default = dataclasses.MISSING
                default.default_factory = (lambda v=value: dataclasses.replace(v)
                                           if dataclasses.is_dataclass(v) else v)
        return original(cls, name, a_type, *rest)

    dataclasses._get_field = _get_field
    try:
        import torch.distributed.fsdp as fsdp
    finally:
        dataclasses._get_field = original
    return fsdp
