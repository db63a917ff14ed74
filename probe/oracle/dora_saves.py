"""What PEFT's DoRA adds to the tensors a Llama layer keeps for backward: a small transformers Llama in bf16 under
CPU autocast, adapters on all seven projections (peft.get_peft_model, lora_dropout 0), with use_dora off and on. What
autograd still holds after the forward is counted (oracle/kept.py). Two token counts separate the per-token part from per-layer constants.

Usage: ``python -m oracle.dora_saves h f r T1 T2`` prints JSON {"lora": [bytes at T1, T2], "dora": [...], "config":
the model's config.json keys, "torch": version, "peft": version}.
"""
import json
import sys

import peft
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

from .kept import kept_after_forward, one_layer_llama

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def kept_bytes(hidden, ffn, rank, tokens, dora):
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**one_layer_llama(hidden, ffn))).to(torch.bfloat16)
    model = get_peft_model(model, LoraConfig(r=rank, lora_dropout=0.0, target_modules=TARGETS, use_dora=dora))
    ids = torch.randint(0, 128, (1, tokens))

    def forward():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(input_ids=ids, labels=ids).loss

    return kept_after_forward(model, forward)


def main(argv):
    hidden, ffn, rank, t1, t2 = (int(x) for x in argv[:5])
    out = {v: [kept_bytes(hidden, ffn, rank, t, v == "dora") for t in (t1, t2)] for v in ("lora", "dora")}
    out.update({"config": one_layer_llama(hidden, ffn), "torch": torch.__version__, "peft": peft.__version__})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
