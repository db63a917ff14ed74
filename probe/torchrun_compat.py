"""Launches ``torch.distributed.run`` (torchrun) with the Python 3.11 shim applied; arguments are torchrun's own.

For local runs ShardLens also passes ``--local_addr 127.0.0.1`` (dropped for torch < 2, which lacks it), and the
launcher binds its rendezvous store to 127.0.0.1 (loopback.py). A watchdog kills the launcher's process group when
the process that started it (ShardLens) is gone, so no rank outlives a killed ShardLens.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import watchdog  # noqa: E402

watchdog.watch_parent("SHARDLENS_PARENT_PID", kill_group=True)
# The ranks watch this process (their parent) the same way.
os.environ["SHARDLENS_LAUNCHER_PID"] = str(os.getpid())

try:
    import torch  # noqa: F401
except ImportError as exc:  # Reported to the launcher with a distinct exit code.
    sys.stderr.write(f"shardlens-probe: torch is not importable by {sys.executable}: {exc}\n")
    sys.exit(3)

import loopback  # noqa: E402
import torch_compat  # noqa: E402

torch_compat.patch_torchrun()
if not loopback.bind_stores_to_loopback():
    argv = sys.argv[1:]
    if "--local_addr" in argv:
        i = argv.index("--local_addr")
        sys.argv[1:] = argv[:i] + argv[i + 2:]
from torch.distributed.run import main  # noqa: E402

sys.exit(main())
