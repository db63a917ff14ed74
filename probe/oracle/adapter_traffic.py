"""The kernels PEFT's LoRA and DoRA add to one frozen linear's forward and backward, counted as torch dispatches them.

One bias-free linear of `in` → `out` in bf16 (frozen, as under LoRA), its input requiring grad (a layer's input does),
under CPU autocast in bf16 with PEFT's adapters in fp32 (autocast_adapter_dtype, PEFT's default), runs forward on T
tokens and backward from a random output gradient; a TorchDispatchMode sees every aten op. Matrix products are
recorded as their (M, N, K); every other op that moves data counts the bytes of its tensor inputs and outputs (one read
of each input, one write of each output); views, metadata ops and zero-element tensors count nothing. The plain frozen
linear is run the same way, so `lora` and `dora` minus `base` is what the adapters add.

Usage: ``python -m oracle.adapter_traffic in out r T dropout`` prints JSON {"base"|"lora"|"dora": {"fwd": {"bytes",
"gemms"}, "bwd": {...}}, "torch": version, "peft": version}. With dropout > 0 the dropout's random mask is drawn by
the same op on every run, so its bytes are counted as torch moves them.
"""
import json
import sys

import peft
import torch
from peft import LoraConfig, get_peft_model

from .traffic import Traffic


def run(dim_in, dim_out, rank, tokens, dropout, variant):
    torch.manual_seed(0)
    model = torch.nn.Sequential()
    model.add_module("lin", torch.nn.Linear(dim_in, dim_out, bias=False))
    model = model.to(torch.bfloat16)
    for p in model.parameters():
        p.requires_grad_(False)
    if variant != "base":
        model = get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=dropout,
                                                 target_modules=["lin"], use_dora=variant == "dora"))
        model.train()
    x = torch.randn(tokens, dim_in, dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(tokens, dim_out, dtype=torch.bfloat16)
    fwd, bwd = Traffic(), Traffic()
    if fwd.log:
        print(f"== {variant}", file=sys.stderr)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with fwd:
            y = model(x)
    if fwd.log:
        print(f"-- {variant} backward", file=sys.stderr)
    with bwd:
        y.backward(grad)
    return {"fwd": {"bytes": fwd.bytes, "gemms": fwd.gemms}, "bwd": {"bytes": bwd.bytes, "gemms": bwd.gemms}}


def main(argv):
    dim_in, dim_out, rank, tokens = (int(x) for x in argv[:4])
    dropout = float(argv[4]) if len(argv) > 4 else 0.0
    out = {v: run(dim_in, dim_out, rank, tokens, dropout, v) for v in ("base", "lora", "dora")}
    out.update({"torch": torch.__version__, "peft": peft.__version__})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
