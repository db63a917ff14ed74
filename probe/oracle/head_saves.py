"""What a frozen output head keeps for backward: a small transformers Llama in bf16 under CPU autocast with PEFT LoRA
on q and v, its head frozen, or trained as PEFT modules_to_save (a trainable copy). A pack hook sees every tensor
autograd saves; those still alive after the forward are counted, distinct storages only, parameters excluded. Two
token counts separate the per-token part from constants.

Usage: ``python -m oracle.head_saves h f T1 T2`` prints JSON {"frozen": [bytes at T1, T2], "trained": [...],
"config": the model's config.json keys, "torch": version, "peft": version}.
"""
import gc
import json
import sys
import weakref

import peft
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM


def config(hidden, ffn):
    return {"model_type": "llama", "vocab_size": 128, "hidden_size": hidden, "intermediate_size": ffn,
            "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
            "tie_word_embeddings": False, "max_position_embeddings": 4096}


def kept_bytes(hidden, ffn, tokens, head_trains):
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**config(hidden, ffn))).to(torch.bfloat16)
    lora = LoraConfig(r=4, lora_dropout=0.0, target_modules=["q_proj", "v_proj"],
                      modules_to_save=["lm_head"] if head_trains else None)
    model = get_peft_model(model, lora)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    refs = []

    def pack(t):
        if t.untyped_storage().data_ptr() not in params:
            refs.append(weakref.ref(t))
        return t

    ids = torch.randint(0, 128, (1, tokens))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(input_ids=ids).logits
    gc.collect()
    alive = {}
    for r in refs:
        t = r()
        if t is not None:
            st = t.untyped_storage()
            alive[st.data_ptr()] = st.nbytes()
    logits.float().sum().backward()
    return sum(alive.values())


def main(argv):
    hidden, ffn, t1, t2 = (int(x) for x in argv[:4])
    out = {v: [kept_bytes(hidden, ffn, t, v == "trained") for t in (t1, t2)] for v in ("frozen", "trained")}
    out.update({"config": config(hidden, ffn), "torch": torch.__version__, "peft": peft.__version__})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
