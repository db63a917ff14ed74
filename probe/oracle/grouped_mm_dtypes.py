"""What the warning `moe-fp32-experts` rests on (shared/time/moeHost.ts expertsGetFp32Inputs), asked of the installed
torch and transformers:

- ``cuda``: which input dtypes torch's CUDA grouped GEMM takes, run on fake CUDA tensors (torch's meta function mirrors
  the CUDA kernel's checks: torch/_meta_registrations.py ``_meta_grouped_mm_common``); "ok" or the error's text;
- ``transformers_output``: the dtype transformers' ``_grouped_mm`` (integrations/moe.py) returns for a bf16 input and
  fp32 weights on the CPU: "float32" when it casts the input to the weights' dtype, as it does because torch's
  grouped GEMM is not autocast-enabled.

Usage: ``python -m oracle.grouped_mm_dtypes`` prints JSON {"cuda": {"bfloat16": …, "float32": …},
"transformers_output": dtype, "torch": version, "transformers": version}.
"""
import json
import logging

import torch
import transformers
from torch._subclasses.fake_tensor import FakeTensorMode


def cuda_accepts(dtype):
    """'ok' when the CUDA grouped GEMM takes ``dtype`` operands (fake tensors), else the error's first line."""
    try:
        with FakeTensorMode(allow_non_fake_inputs=True):
            a = torch.empty(16, 8, dtype=dtype, device="cuda")
            b = torch.empty(2, 8, 16, dtype=dtype, device="cuda")
            offs = torch.empty(2, dtype=torch.int32, device="cuda")
            torch._grouped_mm(a, b, offs=offs)
        return "ok"
    except RuntimeError as exc:
        return str(exc).splitlines()[0]


def transformers_output_dtype():
    """The dtype of transformers' grouped GEMM for a bf16 input and fp32 weights (CPU, real tensors)."""
    from transformers.integrations.moe import _grouped_mm

    x = torch.randn(16, 8, dtype=torch.bfloat16)
    w = torch.randn(2, 8, 16, dtype=torch.float32)
    offs = torch.tensor([8, 16], dtype=torch.int32)
    return str(_grouped_mm(x, w, offs).dtype).replace("torch.", "")


def main():
    # The fake-tensor dispatcher logs the meta function's failure before raising it; the answer is the raised text.
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    out = {
        "cuda": {str(d).replace("torch.", ""): cuda_accepts(d) for d in (torch.bfloat16, torch.float32)},
        "transformers_output": transformers_output_dtype(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
