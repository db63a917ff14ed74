"""Launches ``torch.distributed.run`` (torchrun) with the Python 3.11 shim applied; arguments are torchrun's own."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import torch  # noqa: F401
except ImportError as exc:  # Reported to the launcher with a distinct exit code.
    sys.stderr.write(f"shardlens-probe: torch is not importable by {sys.executable}: {exc}\n")
    sys.exit(3)

import torch_compat  # noqa: E402

torch_compat.patch_torchrun()
from torch.distributed.run import main  # noqa: E402

sys.exit(main())
