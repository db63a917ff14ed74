"""A GPT-style decoder built from the plan's model description, with the same parameters the estimator counts.

Covers grouped-query attention (kv heads), an explicit head dimension, gated (SwiGLU) or plain (GELU) MLPs, biases
(none, q/k/v only, all), q/k RMSNorm, LayerNorm or RMSNorm, learned, rotary or no positions, tied embeddings.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """Root-mean-square norm with one weight vector (Zhang & Sennrich 2019); torch 1.13 has none built in."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        scale = torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + self.eps)
        return (x.float() * scale).type_as(x) * self.weight


def make_norm(kind, dim):
    """LayerNorm holds a weight and a bias (2·h); RMSNorm only a weight (h)."""
    return RMSNorm(dim) if kind == "rmsnorm" else nn.LayerNorm(dim)


def rotary(x, base=10000.0):
    """Applies rotary position embeddings (Su et al. 2021) to a (batch, heads, seq, head_dim) tensor."""
    seq, dim = x.shape[-2], x.shape[-1]
    half = dim // 2
    freqs = 1.0 / (base ** (torch.arange(0, half, device=x.device, dtype=torch.float32) / half))
    angles = torch.outer(torch.arange(seq, device=x.device, dtype=torch.float32), freqs)
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:2 * half]
    rotated = torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return torch.cat([rotated, x[..., 2 * half:]], dim=-1) if dim % 2 else rotated


class Attention(nn.Module):
    """Causal self-attention with h·a·d queries and h·g·d keys and values (GQA when g < a)."""

    def __init__(self, m):
        super().__init__()
        h, a, g, d = m["hiddenSize"], m["heads"], m["kvHeads"], m["headDim"]
        qkv_bias = m["attnBias"] in ("qkv", "all")
        self.heads, self.kv_heads, self.head_dim = a, g, d
        self.q = nn.Linear(h, a * d, bias=qkv_bias)
        self.k = nn.Linear(h, g * d, bias=qkv_bias)
        self.v = nn.Linear(h, g * d, bias=qkv_bias)
        self.o = nn.Linear(a * d, h, bias=m["attnBias"] == "all")
        self.q_norm = RMSNorm(d) if m.get("qkNorm") else None
        self.k_norm = RMSNorm(d) if m.get("qkNorm") else None
        self.rotary = m["positions"] == "rotary"

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.q_norm is not None:
            q, k = self.q_norm(q), self.k_norm(k)
        if self.rotary:
            q, k = rotary(q), rotary(k)
        if self.kv_heads != self.heads:
            rep = self.heads // self.kv_heads
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
        if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0: fused (flash / memory-efficient) kernels.
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
            mask = torch.ones(s, s, device=x.device, dtype=torch.bool).triu(1)
            out = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v
        out = out.transpose(1, 2).reshape(b, s, self.heads * self.head_dim)
        return self.o(out)


class Mlp(nn.Module):
    """Gated: down(silu(gate(x))·up(x)) with 3 matrices; plain: down(gelu(up(x))) with 2."""

    def __init__(self, m):
        super().__init__()
        h, f, bias = m["hiddenSize"], m["ffnSize"], bool(m["mlpBias"])
        self.gate = nn.Linear(h, f, bias=bias) if m["gatedMlp"] else None
        self.up = nn.Linear(h, f, bias=bias)
        self.down = nn.Linear(f, h, bias=bias)

    def forward(self, x):
        if self.gate is not None:
            return self.down(F.silu(self.gate(x)) * self.up(x))
        return self.down(F.gelu(self.up(x)))


class Block(nn.Module):
    """Pre-norm decoder layer: x + attn(norm(x)), then x + mlp(norm(x))."""

    def __init__(self, m):
        super().__init__()
        self.norm1, self.attn = make_norm(m["norm"], m["hiddenSize"]), Attention(m)
        self.norm2, self.mlp = make_norm(m["norm"], m["hiddenSize"]), Mlp(m)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Gpt(nn.Module):
    """Embeddings, L decoder layers, a final norm and an LM head (shared with the embedding when tied)."""

    def __init__(self, m):
        super().__init__()
        h, vocab = m["hiddenSize"], m["vocabSize"]
        self.embed = nn.Embedding(vocab, h)
        self.pos = nn.Embedding(m["maxPositions"], h) if m["positions"] == "learned" else None
        self.blocks = nn.ModuleList(Block(m) for _ in range(m["layers"]))
        self.norm = make_norm(m["norm"], h)
        self.tied = bool(m["tiedEmbeddings"])
        self.head = None if self.tied else nn.Linear(h, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        if self.pos is not None:
            x = x + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x)
        x = self.norm(x)
        return F.linear(x, self.embed.weight) if self.tied else self.head(x)


def attention_kind():
    """'sdpa' where torch provides fused attention (>= 2.0), else 'eager' (scores materialised)."""
    return "sdpa" if hasattr(F, "scaled_dot_product_attention") else "eager"


def check_model(m):
    """Returns a list of reasons the description cannot be built (empty when it can)."""
    reasons = []
    for key in ("layers", "hiddenSize", "heads", "kvHeads", "headDim", "ffnSize", "vocabSize"):
        if not isinstance(m.get(key), int) or m[key] < 1:
            reasons.append(f"model.{key} must be a positive integer")
    if not reasons and m["heads"] % m["kvHeads"]:
        reasons.append(f"model.heads ({m['heads']}) must be a multiple of model.kvHeads ({m['kvHeads']})")
    if m.get("moe"):
        reasons.append("mixture-of-experts layers are not built by the probe yet")
    return reasons
