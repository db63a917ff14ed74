"""Hugging Face ``transformers`` causal LMs built from a config.json with ``from_config`` on the meta device, as the
HF-based trainers (Accelerate, Axolotl, LLaMA-Factory, TRL) run them: ``attn_implementation`` "sdpa" or "eager",
the loss from the model's ``loss_function`` (ForCausalLMLoss: logits upcast to fp32, shifted labels)."""
import torch


def build(config_dict, layers, attention, dtype=torch.float32):
    try:
        from transformers import AutoConfig, AutoModelForCausalLM
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
    config = AutoConfig.for_model(model_type, **cfg)
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
