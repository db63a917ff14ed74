"""The model states of a PEFT LoRA model after one optimizer step, with and without modules_to_save or DoRA: a small
transformers Llama loaded in bf16, LoRA on q/k/v/o through peft.get_peft_model (its defaults: adapters cast to fp32),
torch AdamW over the trainable parameters, one forward, backward and step on a CPU. Bytes are counted from the tensors
themselves (distinct storages): every parameter, every gradient, every optimizer state with elements (AdamW's 0-d
``step`` counters excluded).

Usage: ``python -m oracle.peft_states V h L r`` prints JSON {variant: {parameters, gradients, states, trainable},
"config": the model's config.json keys, "torch": version, "peft": version} for the variants "adapters" (no
modules_to_save), "saved" (embed_tokens and lm_head in modules_to_save) and "dora" (use_dora, no modules_to_save).
"""
import json
import sys

import peft
import torch
from peft import LoraConfig, get_peft_model
from transformers import LlamaConfig, LlamaForCausalLM


def config(vocab, hidden, layers):
    """The architecture the TypeScript side reads through modelFromHfConfig (test/probe/peftStates.test.ts)."""
    return {"model_type": "llama", "vocab_size": vocab, "hidden_size": hidden, "intermediate_size": 2 * hidden,
            "num_hidden_layers": layers, "num_attention_heads": 4, "num_key_value_heads": 2,
            "tie_word_embeddings": False, "max_position_embeddings": 256}


def distinct_bytes(tensors):
    seen = {}
    for t in tensors:
        st = t.untyped_storage()
        seen[st.data_ptr()] = st.nbytes()
    return sum(seen.values())


def measure(vocab, hidden, layers, rank, modules, dora=False):
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(**config(vocab, hidden, layers))).to(torch.bfloat16)
    model = get_peft_model(model, LoraConfig(r=rank, lora_alpha=2 * rank, lora_dropout=0.0,
                                             target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                                             modules_to_save=modules, use_dora=dora))
    trainable = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trainable, lr=1e-4, foreach=False)
    ids = torch.randint(0, vocab, (1, 16))
    model(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    return {
        "parameters": distinct_bytes(model.parameters()),
        "gradients": distinct_bytes(p.grad for p in trainable if p.grad is not None),
        "states": distinct_bytes(t for s in opt.state.values() for t in s.values() if torch.is_tensor(t) and t.dim() > 0),
        "trainable": sum(p.numel() for p in trainable),
    }


def main(argv):
    vocab, hidden, layers, rank = (int(x) for x in argv[:4])
    out = {
        "adapters": measure(vocab, hidden, layers, rank, None),
        "saved": measure(vocab, hidden, layers, rank, ["embed_tokens", "lm_head"]),
        "dora": measure(vocab, hidden, layers, rank, None, dora=True),
        "config": config(vocab, hidden, layers), "torch": torch.__version__, "peft": peft.__version__,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
