"""Reads Megatron-Bridge's recipe functions into ShardLens's table of recipes (data/megatron-bridge/recipes.json).

Each recipe (a function under src/megatron/bridge/recipes whose name ends in ``_config``) builds a ConfigContainer from a
base (``_pretrain_common``, ``_sft_common``, ``_peft_common`` and their VLM forms in recipes/common.py) and then sets
fields one by one (``cfg.model.tensor_model_parallel_size = 4``). This script parses the sources without running them
(Python's ``ast``) and keeps, for each recipe, the literal values of the fields that decide memory and time (FIELDS),
the Hugging Face model it converts (``AutoBridge.from_hf_pretrained("…")``), its file and line, and the legacy names
the family modules re-export (``from … import llama31_8b_pretrain_2gpu_h100_bf16_config as llama31_8b_pretrain_config``).
A value that is not a literal (a variable, an expression, a call) is left out, so the reader assumes it and says so.

Usage: ``python3 scripts/extract-bridge-recipes.py <Megatron-Bridge checkout or git dir> <commit> > data/megatron-bridge/recipes.json``
(with a git directory the files are read at the commit through ``git show``).
"""
import ast
import json
import os
import subprocess
import sys

FIELDS = {
    "model": ["tensor_model_parallel_size", "pipeline_model_parallel_size", "virtual_pipeline_model_parallel_size",
              "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size", "sequence_parallel",
              "seq_length", "recompute_granularity", "recompute_method", "recompute_num_layers", "recompute_modules",
              "account_for_embedding_in_pipeline_split", "account_for_loss_in_pipeline_split",
              "cross_entropy_loss_fusion", "moe_token_dispatcher_type", "moe_grouped_gemm", "tp_comm_overlap",
              "moe_shared_expert_overlap", "cuda_graph_impl", "mtp_num_layers"],
    "train": ["micro_batch_size", "global_batch_size"],
    "dataset": ["seq_length"],
    "ddp": ["use_distributed_optimizer", "grad_reduce_in_fp32", "overlap_grad_reduce", "overlap_param_gather",
            "use_megatron_fsdp", "data_parallel_sharding_strategy"],
}
# A field set to something this script cannot evaluate: dropped, so the reader assumes it (never the base's value).
UNKNOWN = object()
BASES = {"_pretrain_common", "_sft_common", "_peft_common", "_sft_common_vlm", "_peft_common_vlm"}
ROOT = "src/megatron/bridge/recipes"


def files(src, commit):
    """(relative path, text) of every recipe module."""
    if os.path.isdir(os.path.join(src, "objects")) or src.endswith(".git") or os.path.basename(src) == "repo":
        names = subprocess.run(["git", "--git-dir", src, "ls-tree", "-r", "--name-only", commit, ROOT], capture_output=True, text=True, check=True).stdout.split()
        for n in sorted(names):
            if n.endswith(".py"):
                yield n[len(ROOT) + 1:], subprocess.run(["git", "--git-dir", src, "show", f"{commit}:{n}"], capture_output=True, text=True, check=True).stdout
    else:
        base = os.path.join(src, ROOT)
        for d, _, fs in os.walk(base):
            for f in sorted(fs):
                if f.endswith(".py"):
                    p = os.path.join(d, f)
                    with open(p, encoding="utf-8") as fh:
                        yield os.path.relpath(p, base), fh.read()


OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
       ast.FloorDiv: lambda a, b: a // b, ast.Div: lambda a, b: a / b, ast.Pow: lambda a, b: a ** b}


def literal(node, env, values=None):
    """The value of a literal, of a local name bound to one, of a field already set (cfg.model.seq_length), or of
    arithmetic over those (128 * 1024); else None with ok False."""
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id], True
    path = attr_path(node) if isinstance(node, ast.Attribute) else None
    if path and values is not None and len(path) == 3 and path[0] == "cfg" and f"{path[1]}.{path[2]}" in values:
        return values[f"{path[1]}.{path[2]}"], True
    if isinstance(node, ast.BinOp) and type(node.op) in OPS:
        a, ok_a = literal(node.left, env, values)
        b, ok_b = literal(node.right, env, values)
        if ok_a and ok_b and isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool):
            try:
                return OPS[type(node.op)](a, b), True
            except (ZeroDivisionError, OverflowError):
                return None, False
        return None, False
    try:
        return ast.literal_eval(node), True
    except (ValueError, SyntaxError, TypeError):
        return None, False


def attr_path(node):
    """["cfg", "model", "seq_length"] of cfg.model.seq_length."""
    out = []
    while isinstance(node, ast.Attribute):
        out.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        out.append(node.id)
        return out[::-1]
    return None


# Calls whose first argument is the Hub id of the model a recipe builds.
HF_CALLS = {"from_hf_pretrained", "from_pretrained"}


def hf_of(node, env, helpers=None):
    """The Hub id of AutoBridge.from_hf_pretrained("…") or AutoConfig.from_pretrained("…") anywhere in a call chain (a
    literal or a name bound to one), or of the module's helper function called there (``_moonlight_16b_model_provider()``)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in HF_CALLS and n.args:
            v, ok = literal(n.args[0], env)
            if ok and isinstance(v, str) and "/" in v:
                return v
        if helpers and isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and helpers.get(n.func.id):
            return helpers[n.func.id]
    return None


def keep(section, field):
    return field in FIELDS.get(section, [])


def read_function(fn, module_env, helpers=None):
    """(base, values, hf) of one function body, statements in order; `module_env` holds the module's literal constants,
    `helpers` the Hub id each of the module's private functions builds its model from."""
    env, values, base, hf = dict(module_env), {}, None, None
    # Names bound to a model config read from the Hub (text_config = AutoConfig.from_pretrained(ID).text_config).
    hf_names = {}
    peft_vars = {}
    for arg, default in zip(fn.args.args[len(fn.args.args) - len(fn.args.defaults):], fn.args.defaults):
        v, ok = literal(default, {})
        if ok:
            env[arg.arg] = v
    for st in fn.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            t, v = st.targets[0], st.value
            if isinstance(t, ast.Name):
                if t.id == "cfg" and isinstance(v, ast.Call) and isinstance(v.func, ast.Name):
                    # A base builder, or another recipe this one starts from (…_16gpu_… = …_8gpu_…() with changes).
                    if v.func.id in BASES or (v.func.id.endswith("_config") and not v.func.id.startswith("_")):
                        base = v.func.id
                    elif v.func.id == "ConfigContainer":
                        for kw in v.keywords:
                            if kw.arg == "mixed_precision":
                                mp, ok = literal(kw.value, env)
                                if ok and isinstance(mp, str):
                                    values["mixed_precision"] = mp
                            elif kw.arg == "peft" and isinstance(kw.value, ast.Call) and isinstance(kw.value.func, ast.Name):
                                values["peft"] = kw.value.func.id.lower()
                                for k2 in kw.value.keywords:
                                    if k2.arg == "dim":
                                        val, ok = literal(k2.value, env)
                                        if ok:
                                            values["peft.dim"] = val
                            elif isinstance(kw.value, ast.Call):
                                for k2 in kw.value.keywords:
                                    if keep(kw.arg, k2.arg):
                                        val, ok = literal(k2.value, env)
                                        if ok:
                                            values[f"{kw.arg}.{k2.arg}"] = val
                    continue
                if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "default_peft_config" and v.args:
                    scheme, ok = literal(v.args[0], env)
                    if ok and isinstance(scheme, str):
                        peft_vars[t.id] = scheme
                    continue
                val, ok = literal(v, env)
                if ok:
                    env[t.id] = val
                else:
                    named = hf_of(v, env, helpers)
                    if named:
                        hf_names[t.id] = named
                continue
            path = attr_path(t)
            if path and len(path) == 2 and path[0] in peft_vars and path[1] == "dim":
                val, ok = literal(v, env)
                if ok and values.get("peft") is not None:
                    values["peft.dim"] = val
                continue
            if not path or path[0] != "cfg":
                continue
            if len(path) == 2 and path[1] == "model":
                used = [n.id for n in ast.walk(v) if isinstance(n, ast.Name) and n.id in hf_names]
                hf = hf_of(v, env, helpers) or (hf_names[used[0]] if used else None) or hf
            elif len(path) == 3 and path[1] == "model" and path[2] == "hf_model_id":
                # The checkpoint a recipe that starts from another one converts instead (nemotron_3_5_lightning_sft_config).
                named, ok = literal(v, env)
                if ok and isinstance(named, str):
                    hf = named
            elif len(path) == 2 and path[1] == "mixed_precision":
                # A recipe name ("bf16_mixed"), get_mixed_precision_config("…"), or the named builder (bf16_mixed()).
                mp, ok = literal(v, env)
                if not ok and isinstance(v, ast.Call) and v.args:
                    mp, ok = literal(v.args[0], env)
                elif not ok and isinstance(v, ast.Call) and not v.args and isinstance(v.func, ast.Name) and v.func.id.endswith("_mixed"):
                    mp, ok = v.func.id, True
                values["mixed_precision"] = mp if ok and isinstance(mp, str) else UNKNOWN
            elif len(path) == 2 and path[1] == "peft":
                if isinstance(v, ast.Name) and v.id in peft_vars:
                    values["peft"] = peft_vars[v.id]
                elif isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "default_peft_config" and v.args:
                    scheme, ok = literal(v.args[0], env)
                    if ok and isinstance(scheme, str):
                        values["peft"] = scheme
                elif isinstance(v, ast.Constant) and v.value is None:
                    values["peft"] = None
            elif len(path) == 2 and path[1] == "dataset" and isinstance(v, ast.Call):
                # A new dataset config: its sequence length, or none known (what it started from no longer holds).
                values["dataset.seq_length"] = UNKNOWN
                for kw in v.keywords:
                    if kw.arg == "seq_length":
                        val, ok = literal(kw.value, env, values)
                        if ok:
                            values["dataset.seq_length"] = val
            elif len(path) == 3 and keep(path[1], path[2]):
                val, ok = literal(v, env, values)
                # A value the sources compute from what this script does not follow is unknown, not the inherited one.
                values[f"{path[1]}.{path[2]}"] = val if ok else UNKNOWN
    # A field set only under a condition (an `if`, a loop) is not known without running the recipe.
    for n in ast.walk(fn):
        if isinstance(n, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for st in ast.walk(n):
                if isinstance(st, ast.Assign) and len(st.targets) == 1:
                    path = attr_path(st.targets[0])
                    if path and len(path) == 3 and path[0] == "cfg" and keep(path[1], path[2]):
                        values[f"{path[1]}.{path[2]}"] = UNKNOWN
    # A LoRA rank set under `if peft_scheme.lower() in ["lora", "dora"]:` holds for the default scheme (LoRA).
    for n in ast.walk(fn):
        if isinstance(n, ast.If):
            for st in ast.walk(n):
                if isinstance(st, ast.Assign) and len(st.targets) == 1:
                    path = attr_path(st.targets[0])
                    if path and len(path) == 2 and path[0] in peft_vars and path[1] == "dim" and values.get("peft"):
                        val, ok = literal(st.value, env)
                        if ok:
                            values["peft.dim"] = val
    return base, values, hf


def main():
    src, commit = sys.argv[1], sys.argv[2]
    recipes, aliases, bases = {}, {}, {}
    for rel, text in files(src, commit):
        if rel.startswith("utils/"):
            continue
        tree = ast.parse(text)
        module_env = {}
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                val, ok = literal(node.value, module_env)
                if ok:
                    module_env[node.targets[0].id] = val
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                val, ok = literal(node.value, module_env)
                if ok:
                    module_env[node.target.id] = val
        # The Hub id each private helper builds its model from (def _moonlight_16b_model_provider(): AutoBridge…(ID)).
        # Twice: a helper may build on another (_moonlight_16b_finetuning_model_provider calls the one above).
        helpers = {}
        for _ in range(2):
            for node in tree.body:
                if isinstance(node, ast.FunctionDef) and node.name.startswith("_") and node.name not in BASES:
                    named = hf_of(node, module_env, helpers)
                    if named:
                        helpers[node.name] = named
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("megatron.bridge.recipes"):
                for a in node.names:
                    if a.asname and a.asname.endswith("_config") and a.name.endswith("_config"):
                        aliases[a.asname] = a.name
            if not isinstance(node, ast.FunctionDef):
                continue
            base, values, hf = read_function(node, module_env, helpers)
            if node.name in BASES:
                bases[node.name] = (base, values)
            elif node.name.endswith("_config") and not node.name.startswith("_") and (base or hf):
                recipes[node.name] = {"file": rel, "line": node.lineno, "base": base, **({"hf": hf} if hf else {}), "values": values}
    merged_of = {}

    def merged(name, depth=0):
        """A recipe's or base's values over those of what it starts from (None: back to Megatron's default)."""
        if name in merged_of:
            return merged_of[name]
        own = recipes.get(name) or ({"base": bases[name][0], "values": bases[name][1]} if name in bases else None)
        if own is None or depth > 16:
            return {}, None
        parent = own["base"]
        values, hf = dict(merged(parent, depth + 1)[0]) if parent else {}, (merged(parent, depth + 1)[1] if parent else None)
        values.update(own["values"])
        merged_of[name] = (values, own.get("hf") or hf)
        return merged_of[name]

    for name, r in recipes.items():
        values, hf = merged(name)
        r["values"] = {k: v for k, v in sorted(values.items()) if v is not None and v is not UNKNOWN}
        if hf:
            r["hf"] = hf
        # The builder it starts from: a base of recipes/common.py, or another recipe.
        r["base"] = r["base"]
    aliases = {k: v for k, v in sorted(aliases.items()) if v in recipes and k not in recipes}
    # One recipe a line: small enough to bundle, still reviewable line by line.
    out = sys.stdout
    out.write('{\n "source": ' + json.dumps({"repo": "NVIDIA-NeMo/Megatron-Bridge", "commit": commit, "path": ROOT}) + ',\n "recipes": {\n')
    out.write(",\n".join(f"  {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in sorted(recipes.items())))
    out.write('\n },\n "aliases": ' + json.dumps(aliases, indent=None, separators=(',', ':')) + '\n}\n')


if __name__ == "__main__":
    main()
