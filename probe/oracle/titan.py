"""Llama, Qwen, Mistral and Mixtral decoders as torchtitan builds them (torchtitan/models/llama3/model/model.py and
torchtitan/models/moe: separate wq/wk/wv/wo and w1/w2/w3 projections, ``nn.RMSNorm``, complex RoPE computed in fp32,
``repeat_kv`` by expand + reshape, SDPA on (b, heads, s, d), untied output head unless the model ties it, the loss as
``cross_entropy(pred.flatten(0, 1).float(), labels)``). Written for the oracle; no torchtitan code is imported.

MoE layers route tokens evenly (each expert gets T·k/E tokens): static shapes, as fake tensors need, and the even
routing ShardLens assumes.
"""
import torch
import torch.nn.functional as F
from torch import nn

from .attention import attend
from .norms import FusedRMSNorm


def rope_table(head_dim, length, theta=500000.0):
    """Complex64 (length, head_dim/2) table, torchtitan's precompute_freqs_cis."""
    freqs = 1.0 / (theta ** (torch.arange(0, head_dim, 2)[: head_dim // 2].float() / head_dim))
    angles = torch.outer(torch.arange(length).float(), freqs)
    return torch.polar(torch.ones_like(angles), angles)


def rotate(x, table):
    """RoPE as torchtitan applies it: view as complex in fp32, multiply, view back, cast to the input dtype."""
    xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
    t = table[: x.shape[1]].view(1, x.shape[1], 1, xc.shape[-1])
    return torch.view_as_real(xc * t).flatten(3).type_as(x)


def repeat_kv(x, rep):
    if rep == 1:
        return x
    b, s, kv, d = x.shape
    return x.unsqueeze(3).expand(b, s, kv, rep, d).reshape(b, s, kv * rep, d)


class Attention(nn.Module):
    def __init__(self, m, attention):
        super().__init__()
        h, d, q, kv = m["hiddenSize"], m["headDim"], m["heads"], m["kvHeads"]
        qkv_bias = m.get("attnBias", "none") != "none"
        self.head_dim, self.rep, self.attention = d, q // kv, attention
        self.wq = nn.Linear(h, q * d, bias=qkv_bias)
        self.wk = nn.Linear(h, kv * d, bias=qkv_bias)
        self.wv = nn.Linear(h, kv * d, bias=qkv_bias)
        self.wo = nn.Linear(q * d, h, bias=m.get("attnBias") == "all")
        self.q_norm = FusedRMSNorm(d) if m.get("qkNorm") else nn.Identity()
        self.k_norm = FusedRMSNorm(d) if m.get("qkNorm") else nn.Identity()

    def forward(self, x, table):
        b, s, _ = x.shape
        xq = self.wq(x).view(b, s, -1, self.head_dim)
        xk = self.wk(x).view(b, s, -1, self.head_dim)
        xv = self.wv(x).view(b, s, -1, self.head_dim)
        xq, xk = rotate(self.q_norm(xq), table), rotate(self.k_norm(xk), table)
        keys, values = repeat_kv(xk, self.rep), repeat_kv(xv, self.rep)
        q, k, v = xq.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
        if self.attention == "eager":
            out = attend(q, k, v, "eager")
        else:  # torchtitan calls SDPA; the oracle routes it to the GPU kernel (and context parallelism patches it)
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(out.transpose(1, 2).contiguous().view(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, h, f, bias=False):
        super().__init__()
        self.w1, self.w2, self.w3 = nn.Linear(h, f, bias=bias), nn.Linear(f, h, bias=bias), nn.Linear(h, f, bias=bias)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoE(nn.Module):
    """Router + grouped experts (+ shared experts), tokens spread evenly over experts."""

    def __init__(self, h, moe):
        super().__init__()
        e, f = moe["experts"], moe["expertFfnSize"]
        self.experts, self.top_k = e, moe["topK"]
        self.router = nn.Linear(h, e, bias=False)
        self.w1 = nn.Parameter(torch.empty(e, h, f))
        self.w3 = nn.Parameter(torch.empty(e, h, f))
        self.w2 = nn.Parameter(torch.empty(e, f, h))
        shared = moe.get("sharedExperts", 0) * moe.get("sharedExpertFfnSize", 0)
        self.shared = FeedForward(h, shared) if shared else None

    def forward(self, x):
        b, s, h = x.shape
        tokens = x.reshape(-1, h)
        scores = torch.softmax(self.router(tokens).float(), dim=-1)
        weights, index = torch.topk(scores, self.top_k, dim=-1)
        # Token copies grouped by expert (torchtitan gathers them sorted by expert); even split, padded to E·n.
        n = -(-index.numel() // self.experts)
        order = torch.arange(self.experts * n, device=x.device) % index.numel() // self.top_k
        per = tokens.index_select(0, order).reshape(self.experts, n, h)
        hidden = F.silu(torch.bmm(per, self.w1)) * torch.bmm(per, self.w3)
        out = torch.bmm(hidden, self.w2).reshape(-1, h)[: index.numel()].reshape(-1, self.top_k, h)
        out = (out * weights.unsqueeze(-1).to(out.dtype)).sum(dim=1)
        if self.shared is not None:
            out = out + self.shared(tokens)
        return out.reshape(b, s, h)


class Block(nn.Module):
    def __init__(self, m, attention, moe_layer):
        super().__init__()
        h = m["hiddenSize"]
        self.attention_norm, self.ffn_norm = FusedRMSNorm(h), FusedRMSNorm(h)
        self.attention = Attention(m, attention)
        self.feed_forward = MoE(h, m["moe"]) if moe_layer else FeedForward(h, m["ffnSize"], m.get("mlpBias", False))

    def forward(self, x, table):
        h = x + self.attention(self.attention_norm(x), table)
        return h + self.feed_forward(self.ffn_norm(h))


def is_moe_layer(m, i):
    moe = m.get("moe")
    return bool(moe) and i >= moe.get("denseFirstLayers", 0) and (i % max(1, moe.get("layerFrequency", 1)) == 0)


class Transformer(nn.Module):
    """Embedding → blocks → norm → output; any part may be absent on a pipeline stage (torchtitan's PP split)."""

    def __init__(self, m, attention="flash", layers=None, first=True, last=True, seq_len=2048):
        super().__init__()
        h, v = m["hiddenSize"], m["vocabSize"]
        ids = range(m["layers"]) if layers is None else layers
        self.tok_embeddings = nn.Embedding(v, h) if first else None
        self.layers = nn.ModuleDict({str(i): Block(m, attention, is_moe_layer(m, i)) for i in ids})
        self.norm = FusedRMSNorm(h) if last else None
        self.output = nn.Linear(h, v, bias=False) if last else None
        if last and first and m.get("tiedEmbeddings"):
            self.output.weight = self.tok_embeddings.weight
        self.register_buffer("freqs_cis", rope_table(m["headDim"], seq_len), persistent=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens) if self.tok_embeddings is not None else tokens
        for layer in self.layers.values():
            h = layer(h, self.freqs_cis)
        h = self.norm(h) if self.norm is not None else h
        return self.output(h) if self.output is not None else h


def loss_fn(pred, labels):
    """torchtitan's cross_entropy_loss: fp32 upcast of the logits, mean over tokens."""
    return F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
