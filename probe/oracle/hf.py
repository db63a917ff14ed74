"""Hugging Face ``transformers`` causal LMs built from a config.json with ``from_config`` on the meta device, as the
HF-based trainers (Accelerate, Axolotl, LLaMA-Factory, TRL) run them: ``attn_implementation`` "sdpa" or "eager",
the loss from the model's ``loss_function`` (ForCausalLMLoss: logits upcast to fp32, shifted labels)."""
import re

import torch


def _as_on_gpu():
    """transformers cannot read fake ``cache_position`` / ``position_ids`` and then materialises an s×s causal mask, which sends SDPA to
    the math path with repeated K/V heads. On a GPU the training forward starts at position 0, the mask is skipped and
    SDPA runs FlashAttention with native grouped-query heads (transformers masking_utils._ignore_causal_mask_sdpa,
    integrations/sdpa_attention.use_gqa_in_sdpa). The oracle gives the mask decision that offset."""
    try:
        from transformers import masking_utils
    except ImportError:
        return
    original = getattr(masking_utils, "_ignore_causal_mask_sdpa", None)
    if original is None or getattr(original, "_shardlens", False):
        return

    def ignore(padding_mask, q_length, kv_length, q_offset, kv_offset, *args, **kwargs):
        if isinstance(q_offset, torch.Tensor) and q_offset.numel() == 1:
            q_offset = 0
        if isinstance(kv_offset, torch.Tensor) and kv_offset.numel() == 1:
            kv_offset = 0
        return original(padding_mask, q_length, kv_length, q_offset, kv_offset, *args, **kwargs)
    ignore._shardlens = True
    masking_utils._ignore_causal_mask_sdpa = ignore
    # Default position ids (0 … s−1 per row) hold one sequence per row: no packed-sequence mask.
    masking_utils.find_packed_sequence_indices = lambda position_ids: None


def config_for(model_type, cfg):
    """AutoConfig.for_model, with a float field written as a whole number (Gemma 2's final_logit_softcapping 30.0 saved
    as 30, gpt-oss's swiglu_limit 7) passed as the float it means: transformers 5 validates config fields strictly.
    `cfg` is changed in place."""
    from transformers import AutoConfig
    for _ in range(8):
        try:
            return AutoConfig.for_model(model_type, **cfg)
        except Exception as e:
            m = re.search(r"field '(\w+)'.*expected float, got int", str(e), re.S)
            if not m or not isinstance(cfg.get(m.group(1)), int):
                raise
            cfg[m.group(1)] = float(cfg[m.group(1)])
    return AutoConfig.for_model(model_type, **cfg)


def build(config_dict, layers, attention, dtype=torch.float32):
    try:
        from transformers import AutoModelForCausalLM
    except ImportError as exc:
        raise RuntimeError(f"transformers is not importable: {exc}") from exc
    cfg = dict(config_dict)
    model_type = cfg.pop("model_type", None)
    if not model_type:
        raise ValueError("the config.json has no model_type")
    cfg.pop("architectures", None)
    cfg.pop("torch_dtype", None)
    cfg.pop("dtype", None)
    if layers is not None:
        cfg["num_hidden_layers"] = layers
        # Hybrid models list a type per layer; keep the first `layers` entries.
        if isinstance(cfg.get("layer_types"), list):
            cfg["layer_types"] = cfg["layer_types"][:layers]
    _as_on_gpu()
    config = config_for(model_type, cfg)
    config.use_cache = False
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa" if attention == "flash" else "eager",
                                                 dtype=dtype)
    return model


def blocks_of(model):
    """The decoder layers (a ModuleList) of a causal LM."""
    base = getattr(model, model.base_model_prefix, model)
    layers = getattr(base, "layers", None)
    if layers is None:
        raise ValueError(f"{type(model).__name__}: no decoder layers found (expected <base>.layers)")
    return layers


def loss_of(model, tokens):
    """The HF Trainer's compute_loss: ``model(input_ids, labels).loss``; the output object (logits) is dropped."""
    return model(input_ids=tokens, labels=tokens).loss
