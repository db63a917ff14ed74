"""Pipeline parallelism as each engine runs it: the rank's stage chunks (layers split evenly, embedding on the first
chunk, norm and output on the last; looped placement: rank i holds chunks i, i + pp, …), then

- torchtitan (and any torch-native plan): ``torch.distributed.pipelining`` as torchtitan builds it
  (torchtitan/distributed/pipeline_parallel.py ``_build_pipeline_schedule``: ``scale_grads=False``, the loss on the last
  stage; the train step passes ``return_outputs=False``). ``PipelineStage`` gets static input/output shapes (no shape
  exchange over the fake process group). The stage allocates a receive buffer for the input and one for the output's
  gradient per micro-batch once and keeps them (stage.py ``_setup_forward_recv_info``, ``_create_grad_recv_info``):
  they are filed as engine buffers ("other"). With FSDP2 every micro-batch's backward runs without gradient sync or
  resharding and ``perform_reduce_grad`` reduce-scatters after the last one: its buffers are temporaries.
- Megatron: megatron_pipeline.py (Megatron's own schedules, freed outputs, fresh receive tensors).
"""
import torch

from . import megatron_pipeline
from .precision import BF16, F32, forward_context
from .tracker import allocations_as


def split_layers(layers, chunks):
    """Layer ids per chunk: an even split, the remainder on the first chunks."""
    base, extra = divmod(layers, chunks)
    out, start = [], 0
    for c in range(chunks):
        n = base + (1 if c < extra else 0)
        out.append(list(range(start, start + n)))
        start += n
    return out


def chunks_of_rank(layers, pp, vpp, stage):
    """(layer ids, first, last) of every chunk this pipeline rank holds; without PP one chunk with everything."""
    if pp <= 1:
        return [(None, True, True)]
    total = pp * vpp
    ids = split_layers(layers, total)
    return [(ids[c], c == 0, c == total - 1) for c in range(stage, total, pp)]


def _hidden_meta(built, mb):
    """The tensor passed between stages: (mb, s/tp, h) in torchtitan, (s/tp, mb, h) in Megatron (SP-local)."""
    t, par, m = built.plan["training"], built.plan["parallel"], built.plan["model"]
    tp = par.get("tp", 1)
    s = t["seqLen"] // par.get("cp", 1)
    sp = tp if (built.impl == "megatron" and par.get("sp", False)) or built.impl == "torchtitan" else 1
    dtype = F32 if built.regime_name in ("amp", "fp32") else BF16
    if built.impl == "megatron":
        return torch.empty(s // sp, mb, m["hiddenSize"], dtype=dtype)
    return torch.empty(mb, s // sp, m["hiddenSize"], dtype=dtype)


def make_step(built):
    if built.impl == "megatron":
        built.pp_stages = []
        built.notes.append("Megatron's pipeline schedule is emulated on one rank: sends carry no data, every receive "
                           "allocates a fresh tensor, sent outputs are freed (deallocate_output_tensor)")
        return megatron_pipeline.make_step(built, _hidden_meta)
    built.notes.append("torch.distributed.pipelining runs with static shapes; its receive buffers count as engine "
                       "buffers (other)")
    return _torch_step(built)


def recv_buffers(built):
    """(tensor, "other") for the receive buffers torch's pipeline stages keep for every micro-batch (after a step)."""
    out = []
    for stage in getattr(built, "pp_stages", []):
        infos = list(getattr(stage, "args_recv_info", {}).values())
        for group in infos + list(getattr(stage, "grad_recv_info", {}).values()):
            for info in group:
                if getattr(info, "buffer", None) is not None:
                    out.append((info.buffer, "other"))
    return out


def _torch_step(built):
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe, ScheduleInterleaved1F1B
    t, par = built.plan["training"], built.plan["parallel"]
    pp, vpp = par.get("pp", 1), built.vpp
    mb, m = t["microBatch"], max(1, int(t.get("gradAccum", 1)))
    group = built.mesh["pp"].get_group()
    total = pp * vpp
    indices = list(range(built.stage, total, pp))
    v = built.plan["model"]["vocabSize"]
    with built.fake:
        hidden = _hidden_meta(built, mb)
        tokens_meta = torch.empty(mb, t["seqLen"], dtype=torch.long)
        stages = []
        for mod, c in zip(built.modules, indices):
            inp = tokens_meta if c == 0 else hidden
            # Outputs that require grad: their gradient receive buffers are derived from them.
            out = _hidden_meta(built, mb).requires_grad_(True) if c < total - 1 else _logits_meta(built, mb)
            stages.append(PipelineStage(mod, c, total, torch.device("cpu"), input_args=(inp,), output_args=(out,),
                                        group=group))
    loss = built.loss
    kind = par.get("schedule", "1f1b")
    if kind == "interleaved" or vpp > 1:
        schedule = ScheduleInterleaved1F1B(stages, m, loss_fn=loss, scale_grads=False)
    elif kind == "gpipe":
        schedule = ScheduleGPipe(stages[0], m, loss_fn=loss, scale_grads=False)
    else:
        schedule = Schedule1F1B(stages[0], m, loss_fn=loss, scale_grads=False)
    _static_shapes(schedule)
    built.pp_stages = stages
    for stage in stages:
        stage.perform_reduce_grad = _as_temporaries(stage.perform_reduce_grad)
    has_first, has_last = 0 in indices, total - 1 in indices
    from .run import _cp_context, _loss_parallel

    def step():
        tokens = torch.randint(0, v, (mb * m, t["seqLen"]))
        kw = {"return_outputs": False} if _takes_return_outputs(schedule) else {}
        with forward_context(built.regime_name), _cp_context(built, tokens), _loss_parallel(built):
            if has_first and has_last:
                schedule.step(tokens, target=tokens, **kw)
            elif has_first:
                schedule.step(tokens, **kw)
            elif has_last:
                schedule.step(target=tokens, **kw)
            else:
                schedule.step(**kw)
        built.optimizer.step()
        for mod in built.modules:
            built.regime.zero_grad(mod, built.optimizer)
    return step


def _as_temporaries(method):
    def wrapped(*args, **kwargs):
        with allocations_as("temporaries"):
            return method(*args, **kwargs)
    return wrapped


def _takes_return_outputs(schedule):
    """torchtitan passes return_outputs=False so the last stage does not keep every micro-batch's logits."""
    import inspect
    try:
        return "return_outputs" in inspect.signature(schedule.step).parameters
    except (TypeError, ValueError):
        return False


def _static_shapes(schedule):
    """The shapes are given to every stage, so the P2P warm-up vote (a real exchange whose result is read with
    ``.item()``, impossible on fake tensors) is replaced by its outcome: static shapes."""
    try:
        from torch.distributed.pipelining._utils import InferenceMode
    except ImportError:
        return

    def warmup(stages, *args, **kwargs):
        for stage in stages:
            stage._inference_mode = InferenceMode.STATIC
    if hasattr(schedule, "_warmup_p2p"):
        schedule._warmup_p2p = warmup


def _logits_meta(built, mb):
    t, par, m = built.plan["training"], built.plan["parallel"], built.plan["model"]
    s, tp = t["seqLen"] // par.get("cp", 1), par.get("tp", 1)
    dtype = F32 if built.regime_name in ("amp", "fp32") else BF16
    if built.impl == "megatron":
        return torch.empty(s, mb, m["vocabSize"] // tp, dtype=dtype)
    return torch.empty(mb, s, m["vocabSize"] // tp, dtype=dtype)
