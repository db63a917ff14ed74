"""The memory-bound traffic of one Hugging Face MoE block, counted as torch dispatches it.

transformers' own sparse MoE blocks (the code the HF Trainer, Accelerate, Axolotl, LLaMA-Factory and TRL run for
Qwen3-MoE and Mixtral) run forward on T tokens in bf16 and backward from a random gradient of their output. Their
experts run transformers 5's default ``experts_implementation="grouped_mm"`` (integrations/moe.py
``grouped_mm_experts_forward``): sort the T·k token-expert pairs by expert, gather the tokens, two grouped GEMMs around
the gated activation, weight by the router's probabilities, unsort, sum over the k choices.

Every op that moves data counts one read of each tensor input and one write of each output (oracle.traffic
``Traffic``), and one kernel; matrix products, grouped ones included, are recorded apart as the step-time model times
them on their own. CPU and CUDA run the same aten ops here (torch ≥ 2.10 has ``_grouped_mm`` on both), except the
expert ids' cast before ``histc`` (float on CPU, int32 on CUDA: the same bytes read, 4 written either way).

Usage: ``python -m oracle.moe_traffic hidden expert_ffn experts top_k T`` prints JSON {"qwen3_moe"|"mixtral":
{"fwd": {"bytes", "kernels", "gemms"}, "bwd": {...}}, "torch": version, "transformers": version}.
"""
import json
import sys

import torch
import transformers
from transformers import MixtralConfig, Qwen3MoeConfig
from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock
from transformers.models.qwen3_moe.modeling_qwen3_moe import Qwen3MoeSparseMoeBlock

from .layer_traffic import measure

BLOCKS = {
    "qwen3_moe": (lambda h, f, e, k: Qwen3MoeConfig(hidden_size=h, moe_intermediate_size=f, num_experts=e,
                                                    num_experts_per_tok=k, norm_topk_prob=True), Qwen3MoeSparseMoeBlock),
    "mixtral": (lambda h, f, e, k: MixtralConfig(hidden_size=h, intermediate_size=f, num_local_experts=e,
                                                 num_experts_per_tok=k), MixtralSparseMoeBlock),
}


def run(hidden, ffn, experts, top_k, tokens, family):
    """transformers' sparse MoE block of ``family`` in bf16, its experts as grouped GEMMs."""
    torch.manual_seed(0)
    make, block_cls = BLOCKS[family]
    config = make(hidden, ffn, experts, top_k)
    config._experts_implementation = "grouped_mm"
    block = block_cls(config).to(torch.bfloat16).train()
    # Router weights start at zero in some classes: random ones route tokens to several experts, as trained ones do.
    with torch.no_grad():
        for p in block.parameters():
            p.normal_(0, 0.02)
    x = torch.randn(1, tokens, hidden, dtype=torch.bfloat16, requires_grad=True)
    return measure(lambda: block(x))


def main(argv):
    hidden, ffn, experts, top_k, tokens = (int(x) for x in argv[:5])
    out = {f: run(hidden, ffn, experts, top_k, tokens, f) for f in BLOCKS}
    out.update({"torch": torch.__version__, "transformers": transformers.__version__})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
