"""Megatron-LM's pipeline schedules on one simulated rank, with the memory behaviour of the engine (facts from
megatron/core/pipeline_parallel/schedules.py and p2p_communication.py; no Megatron code is imported or copied):

- Warm-up counts: ``forward_backward_pipelining_without_interleaving`` runs min(p − r − 1, m) forwards, then
  1F1B steps (forward, then the backward of the oldest micro-batch), then the remaining backwards;
  ``get_pp_rank_microbatches`` for the interleaved schedule runs min(2(p − r − 1) + (v − 1)·g, m·v) chunk
  forwards (g = ``microbatch_group_size_per_vp_stage``, p by default), in the order of ``get_schedule_table``
  (groups of g micro-batches per model chunk; backwards walk the chunks in reverse).
- Every receive allocates a fresh tensor (``P2PCommunicator._communicate``: ``torch.empty(..., requires_grad=True)``),
  kept in ``input_tensors`` until the micro-batch's backward; the forward of the next micro-batch is received right
  after the current step's backward (``send_backward_recv_forward``), the output gradient right after the forward
  (``send_forward_recv_backward``).
- ``deallocate_output_tensor``: once sent, an output's data is replaced by a one-element tensor and only its grad_fn
  is kept (Megatron-LM's training sets ``deallocate_pipeline_outputs=True``, megatron/training/argument_utils.py);
  ``custom_backward`` then runs the autograd engine directly, which does not check the output's shape.
- ``backward_step``: ``retain_grad`` on the received input; its gradient is what is sent back, then dropped. The
  schedule popped the input from ``input_tensors``: nothing references it or its gradient any more and both are freed.
  Under the oracle's tracker they would not be: ModTracker's multi-grad hook on a module's input holds a leaf through
  its AccumulateGrad node, a reference cycle through autograd's C++ that Python's collector cannot see, so the oracle
  frees the received input and its gradient itself (``_release``) where Megatron's last reference goes.
- The last stage divides the loss by m (``forward_step_calc_loss``) and runs its backward from it.
Sends and receives carry no data on fake tensors: only their allocations are reproduced.
"""
import torch
from torch.autograd import Variable

from .precision import forward_context


def schedule_table(m, v, g):
    """(micro-batch, chunk) of every chunk forward in order (get_schedule_table): g micro-batches per chunk group."""
    out = []
    for lo in range(0, m, g):
        hi = m if lo + g >= m else lo + g
        out.extend((mb, c) for c in range(v) for mb in range(lo, hi))
    return out


def warmup_count(p, rank, v, m, g):
    """Chunk forwards before the first backward (get_pp_rank_microbatches and the non-interleaved schedule)."""
    if v == 1:
        return min(p - rank - 1, m)
    return min(2 * (p - rank - 1) + (v - 1) * g, m * v)


def _deallocate(out):
    """deallocate_output_tensor: keep the grad_fn, free the data."""
    out.data = torch.empty((1,), dtype=out.dtype, device=out.device)


def _release(inp):
    """The received input and its gradient once the gradient is sent back (backward_step's return, the schedule's
    ``input_tensors.pop(0)``): freed on a GPU; the tracker's hook cycle would keep them alive on fake tensors."""
    if inp is None:
        return
    inp.grad = None
    inp.data = torch.empty((0,), dtype=inp.dtype, device=inp.device)


def _backward(inp, out, grad):
    """backward_step with custom_backward; returns the input's gradient (None on the first stage)."""
    if inp is not None:
        inp.retain_grad()
    if grad is None:
        grad = torch.ones_like(out)
    Variable._execution_engine.run_backward(tensors=(out,), grad_tensors=(grad,), keep_graph=False,
                                            create_graph=False, inputs=tuple(), allow_unreachable=True,
                                            accumulate_grad=True)
    return None if inp is None else inp.grad


def make_step(built, hidden_meta):
    """The step function of a Megatron pipeline rank: the schedule, then the optimizer step and zeroing."""
    t, par = built.plan["training"], built.plan["parallel"]
    p, v, r = par.get("pp", 1), built.vpp, built.stage
    m = max(1, int(t.get("gradAccum", 1)))
    g = p  # microbatch_group_size_per_vp_stage defaults to the pipeline size (ModelParallelConfig.__post_init__)
    vocab, mb, seq = built.plan["model"]["vocabSize"], t["microBatch"], t["seqLen"]

    def first(c):
        return r == 0 and c == 0

    def last(c):
        return r == p - 1 and c == v - 1

    def recv():
        with built.fake:
            return torch.empty_like(hidden_meta(built, mb)).requires_grad_(True)

    def forward(c, inp):
        mod = built.modules[c]
        with forward_context(built.regime_name):
            if first(c):
                out = mod(torch.randint(0, vocab, (mb, seq)))
            else:
                out = mod(inp)
            if last(c):
                out = built.loss(out, torch.randint(0, vocab, (mb, seq))) / m
        if not last(c):
            _deallocate(out)  # after send_forward
        return out

    table = schedule_table(m, v, g)
    total = m * v
    warm = warmup_count(p, r, v, m, g)

    def step():
        inputs = [[] for _ in range(v)]
        outputs = [[] for _ in range(v)]

        def run_forward(k):
            c = table[k][1]
            inp = None if first(c) else recv()
            out = forward(c, inp)
            inputs[c].append(inp)
            outputs[c].append(out)

        def run_backward(k):
            c = v - 1 - table[k][1]
            inp, out = inputs[c].pop(0), outputs[c].pop(0)
            grad = None if last(c) else recv()
            _backward(inp, out, grad)  # the input's gradient is sent back and dropped
            _release(inp)
            del inp, out, grad

        for k in range(warm):
            run_forward(k)
        for k in range(total - warm):
            run_forward(k + warm)
            run_backward(k)
        for k in range(total - warm, total):
            run_backward(k)
        built.optimizer.step()
        for mod in built.modules:
            built.regime.zero_grad(mod, built.optimizer)
    return step
