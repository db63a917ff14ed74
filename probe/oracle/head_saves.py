"""What a frozen output head keeps for backward: a small transformers Llama in bf16 under CPU autocast with PEFT LoRA
on q and v, its head frozen, or trained as PEFT modules_to_save (a trainable copy). What autograd still holds after
the forward is counted (oracle/kept.py). Two token counts separate the per-token part from constants.

Usage: ``python -m oracle.head_saves h f T1 T2`` prints JSON {"frozen": [bytes at T1, T2], "trained": [...],
"config": the model's config.json keys, "torch": version, "peft": version}.
"""
import json
import sys

import peft
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

from .kept import kept_after_forward, one_layer_llama


def kept_bytes(hidden, ffn, tokens, head_trains):
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**one_layer_llama(hidden, ffn))).to(torch.bfloat16)
    lora = LoraConfig(r=4, lora_dropout=0.0, target_modules=["q_proj", "v_proj"],
                      modules_to_save=["lm_head"] if head_trains else None)
    model = get_peft_model(model, lora)
    ids = torch.randint(0, 128, (1, tokens))

    def forward():
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return model(input_ids=ids).logits.float().sum()

    return kept_after_forward(model, forward)


def main(argv):
    hidden, ffn, t1, t2 = (int(x) for x in argv[:4])
    out = {v: [kept_bytes(hidden, ffn, t, v == "trained") for t in (t1, t2)] for v in ("frozen", "trained")}
    out.update({"config": one_layer_llama(hidden, ffn), "torch": torch.__version__, "peft": peft.__version__})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
