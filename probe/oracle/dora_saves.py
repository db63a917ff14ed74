"""What PEFT's DoRA adds to the tensors a Llama layer keeps for backward: a small transformers Llama in bf16 under
CPU autocast, adapters on all seven projections (peft.get_peft_model, lora_dropout 0), with use_dora off and on. A
pack hook sees every tensor autograd saves; those still alive after the forward (held by the graph the loss will
backpropagate through, not by graphs a forward built and dropped) are counted, distinct storages only, parameters
excluded. Two token counts separate the per-token part from per-layer constants.

Usage: ``python -m oracle.dora_saves h f r T1 T2`` prints JSON {"lora": [bytes at T1, T2], "dora": [...], "config":
the model's config.json keys, "torch": version, "peft": version}.
"""
import gc
import json
import sys
import weakref

import peft
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def config(hidden, ffn):
    return {"model_type": "llama", "vocab_size": 128, "hidden_size": hidden, "intermediate_size": ffn,
            "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
            "tie_word_embeddings": False, "max_position_embeddings": 4096}


def kept_bytes(hidden, ffn, rank, tokens, dora):
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**config(hidden, ffn))).to(torch.bfloat16)
    model = get_peft_model(model, LoraConfig(r=rank, lora_dropout=0.0, target_modules=TARGETS, use_dora=dora))
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    refs = []

    def pack(t):
        if t.untyped_storage().data_ptr() not in params:
            refs.append(weakref.ref(t))
        return t

    ids = torch.randint(0, 128, (1, tokens))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
    gc.collect()
    alive = {}
    for r in refs:
        t = r()
        if t is not None:
            st = t.untyped_storage()
            alive[st.data_ptr()] = st.nbytes()
    loss.backward()
    return sum(alive.values())


def main(argv):
    hidden, ffn, rank, t1, t2 = (int(x) for x in argv[:5])
    out = {v: [kept_bytes(hidden, ffn, rank, t, v == "dora") for t in (t1, t2)] for v in ("lora", "dora")}
    out.update({"config": config(hidden, ffn), "torch": torch.__version__, "peft": peft.__version__})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
