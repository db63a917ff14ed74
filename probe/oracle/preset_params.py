"""Parameter counts of model configs as transformers builds them.

Each argument is a config.json (a bundled preset under data/models, its ``_shardlens`` block ignored); the model is
built with ``AutoModelForCausalLM.from_config`` on the meta device (no memory, no weights) and its parameters counted
(``nn.Module.parameters``: buffers such as GLM-4.5's ``e_score_correction_bias`` are not parameters). A multimodal
config's language model is its ``text_config``.

Usage: ``python -m oracle.preset_params FILE…`` prints JSON {file: parameters or {"error": …}, "transformers": version}.
"""
import json
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM

from .hf import config_for


def count(path):
    with open(path, encoding="utf-8") as fh:
        cfg = json.load(fh)
    cfg.pop("_shardlens", None)
    if isinstance(cfg.get("text_config"), dict):
        cfg = cfg["text_config"]
    model_type = cfg.pop("model_type")
    config = config_for(model_type, cfg)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config)
    return sum(p.numel() for p in model.parameters())


def main():
    out = {}
    for path in sys.argv[1:]:
        try:
            out[path] = count(path)
        except Exception as e:  # A config this transformers cannot build is reported, not fatal to the others.
            out[path] = {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    out["transformers"] = transformers.__version__
    print(json.dumps(out))


if __name__ == "__main__":
    main()
