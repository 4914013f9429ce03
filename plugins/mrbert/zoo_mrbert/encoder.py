"""The ModernBERT encoder (Warner et al. 2024, arXiv 2412.13663, §2.1) that MrBERT is built on.

Per layer, pre-LayerNorm without biases (and no bias in any linear layer):

    h = h + Wo · softmax(RoPE(q) RoPE(k)^T / sqrt(d_head) + mask) v          (attention)
    h = h + Wo' · (GELU(x Wi_a) * (x Wi_g))                                  (GeGLU MLP, x = LN(h))

Attention alternates: layer i is *global* (every token sees every token, RoPE theta 160,000) when
``i % global_every == 0`` and *local* otherwise (token i sees token j only when ``|i - j| <= window // 2``,
RoPE theta 10,000). The token embeddings are LayerNorm-ed before the first layer (so layer 0 has no
attention norm) and a final LayerNorm closes the stack. Padding is masked out as keys.

    >>> enc = ModernBertEncoder(vocab_size=20, dim=16, layers=3, heads=2, intermediate=24, local_window=4)
    >>> enc(torch.tensor([[2, 7, 9, 3, 0]]), torch.tensor([[True, True, True, True, False]])).shape
    torch.Size([1, 5, 16])

Deviations: no unpadding / FlashAttention (a dense boolean mask does the same arithmetic); the
initialisation is ModernBERT's truncated normal (std 0.02, cut at 2 std; output projections scaled by
1/sqrt(2 * layers)) without its per-module "megatron" variants.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["rope_angles", "apply_rope", "attention_mask", "Attention", "GeGLU", "Block", "ModernBertEncoder"]


def rope_angles(positions: torch.Tensor, head_dim: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """(cos, sin) of RoPE (Su et al. 2021) for ``positions`` (T,), each (T, head_dim), halves repeated."""
    inv = 1.0 / theta ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim)
    ang = positions.float()[:, None] * inv[None, :]
    ang = torch.cat([ang, ang], dim=-1)
    return ang.cos(), ang.sin()


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate the pairs (x_i, x_{i + d/2}) of ``x`` (..., T, d) by the position's angles (the "rotate half" layout
    of ModernBERT's checkpoints): q(m) . k(n) then depends on m - n only."""
    a, b = x.chunk(2, dim=-1)
    return x * cos + torch.cat([-b, a], dim=-1) * sin


def attention_mask(keep: torch.Tensor, window: int | None) -> torch.Tensor:
    """(B, 1, T, T) boolean: query i may attend to key j (j is not padding, and ``|i - j| <= window // 2``
    when ``window`` is given, ModernBERT's local attention). A token always sees itself, so a padding query
    far from every real token gets a finite (unused) output instead of NaN.

    >>> attention_mask(torch.ones(1, 5, dtype=torch.bool), 2)[0, 0].int()
    tensor([[1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 1, 1, 1, 0],
            [0, 0, 1, 1, 1],
            [0, 0, 0, 1, 1]], dtype=torch.int32)
    """
    t = keep.shape[1]
    pos = torch.arange(t, device=keep.device)
    allowed = keep[:, None, None, :].expand(-1, 1, t, t)
    if window is not None:
        allowed = allowed & ((pos[:, None] - pos[None, :]).abs() <= window // 2)
    return allowed | (pos[:, None] == pos[None, :])


class Attention(nn.Module):
    """Multi-head self-attention with RoPE; one fused ``qkv`` projection and ``out``, no biases."""

    def __init__(self, dim: int, heads: int, theta: float, window: int | None) -> None:
        super().__init__()
        if dim % heads or (dim // heads) % 2:
            raise ValueError(f"dim {dim} must split into {heads} heads of even size")
        self.heads, self.head_dim, self.theta, self.window = heads, dim // heads, theta, window
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)

    def forward(self, x: torch.Tensor, keep: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        pos = torch.arange(t, device=x.device) if positions is None else positions
        cos, sin = rope_angles(pos, self.head_dim, self.theta)
        q, k = apply_rope(q, cos.to(q.dtype), sin.to(q.dtype)), apply_rope(k, cos.to(k.dtype), sin.to(k.dtype))
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attention_mask(keep, self.window))
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class GeGLU(nn.Module):
    """ModernBERT's MLP: ``wi`` makes (input, gate) of ``hidden`` each; ``wo(GELU(input) * gate)``."""

    def __init__(self, dim: int, hidden: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.wi = nn.Linear(dim, 2 * hidden, bias=False)
        self.wo = nn.Linear(hidden, dim, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, g = self.wi(x).chunk(2, dim=-1)
        return self.wo(self.drop(F.gelu(a) * g))


class Block(nn.Module):
    """One pre-norm layer: attention (global or local) then GeGLU, each a residual branch."""

    def __init__(self, dim: int, heads: int, intermediate: int, *, theta: float, window: int | None, first: bool,
                 eps: float = 1e-5, dropout: float = 0.0) -> None:
        super().__init__()
        # the embeddings are already normalised: ModernBERT's first layer skips its attention norm
        self.attn_norm = nn.Identity() if first else nn.LayerNorm(dim, eps=eps, bias=False)
        self.attn = Attention(dim, heads, theta, window)
        self.mlp_norm = nn.LayerNorm(dim, eps=eps, bias=False)
        self.mlp = GeGLU(dim, intermediate, dropout)

    def forward(self, h: torch.Tensor, keep: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        h = h + self.attn(self.attn_norm(h), keep, positions)
        return h + self.mlp(self.mlp_norm(h))


class ModernBertEncoder(nn.Module):
    """Token ids (B, T) and a keep mask (B, T) -> hidden states (B, T, dim) (module docstring)."""

    def __init__(self, vocab_size: int, dim: int = 768, layers: int = 22, heads: int = 12, intermediate: int = 1152,
                 local_window: int = 128, global_every: int = 3, global_theta: float = 160_000.0,
                 local_theta: float = 10_000.0, eps: float = 1e-5, dropout: float = 0.0, pad_id: int = 0) -> None:
        super().__init__()
        self.global_every, self.local_window = global_every, local_window
        self.tok_emb = nn.Embedding(vocab_size, dim, padding_idx=pad_id)
        self.emb_norm = nn.LayerNorm(dim, eps=eps, bias=False)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            Block(dim, heads, intermediate, first=i == 0, eps=eps, dropout=dropout,
                  theta=global_theta if self.is_global(i) else local_theta,
                  window=None if self.is_global(i) else local_window)
            for i in range(layers))
        self.final_norm = nn.LayerNorm(dim, eps=eps, bias=False)
        self._init(layers)

    def is_global(self, i: int) -> bool:
        """Layer ``i`` attends globally (ModernBERT: every ``global_every``-th layer, starting with the first)."""
        return i % self.global_every == 0

    @torch.no_grad()
    def _init(self, layers: int, std: float = 0.02) -> None:
        for name, p in self.named_parameters():
            if p.dim() < 2:
                continue
            s = std / math.sqrt(2.0 * layers) if name.endswith(("attn.out.weight", "mlp.wo.weight")) else std
            nn.init.trunc_normal_(p, std=s, a=-2 * s, b=2 * s)

    def forward(self, ids: torch.Tensor, keep: torch.Tensor | None = None,
                positions: torch.Tensor | None = None) -> torch.Tensor:
        keep = ids.new_ones(ids.shape, dtype=torch.bool) if keep is None else keep.bool()
        h = self.drop(self.emb_norm(self.tok_emb(ids)))
        for block in self.blocks:
            h = block(h, keep, positions)
        return self.final_norm(h)
