"""What autograd still holds after a forward: the shared measurement of the oracle's saved-tensor scripts.

A pack hook sees every tensor autograd saves; those still alive after the forward (held by the graph the backward will
run through, not by graphs the forward built and dropped) are counted, distinct storages only, parameters excluded.
"""
import gc
import weakref

import torch


def one_layer_llama(hidden, ffn):
    """config.json keys of a one-layer transformers Llama with 4 heads, 2 KV heads, a 128-token vocabulary, untied."""
    return {"model_type": "llama", "vocab_size": 128, "hidden_size": hidden, "intermediate_size": ffn,
            "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2,
            "tie_word_embeddings": False, "max_position_embeddings": 4096}


def kept_after_forward(model, forward):
    """Bytes of the distinct non-parameter storages autograd keeps once `forward()` has returned its scalar, which is
    then backpropagated (so the graph is released as in training)."""
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    refs = []

    def pack(t):
        if t.untyped_storage().data_ptr() not in params:
            refs.append(weakref.ref(t))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = forward()
    gc.collect()
    alive = {}
    for r in refs:
        t = r()
        if t is not None:
            st = t.untyped_storage()
            alive[st.data_ptr()] = st.nbytes()
    out.backward()
    return sum(alive.values())
