"""Linear transformers as fast weight programmers (Schlag, Irie and Schmidhuber 2021, arXiv 2102.11174).

A slow network maps each input ``x_t`` to a key, a value, a query and (for the delta rule) a learning rate; a fast
weight matrix ``W`` is programmed by them, one update per step, and read with the query (Sec. 4, eqs. 14-18 of the
paper: "Fast Weight Programmers" with the delta rule):

    v_bar_t = W_{t-1} phi(k_t)                                  (what the memory holds at the key)
    W_t     = W_{t-1} + beta_t (v_t - v_bar_t) phi(k_t)^T       (delta rule; beta_t = sigmoid(w_beta x_t))
    y_t     = W_t phi(q_t)

The additive rule of linear attention (Katharopoulos et al. 2020), the paper's baseline, is ``W_t = W_{t-1} + v_t
phi(k_t)^T``. ``phi`` is DPFP (Sec. 5.4, "deterministic parameter-free projection"): with ``r = relu([k, -k])`` (2d
entries), ``phi_nu(k)`` concatenates ``r * roll(r, i)`` for ``i = 1..nu`` (``2 nu d`` non-negative features), then
each ``phi`` is divided by the sum of its entries (the paper's sum normalisation, Sec. 4.2, which replaces linear
attention's denominator).

Both rules are computed in parallel over the sequence (``rule``'s fast path) and, for checking, by the recurrence
(``FastWeightLayer.recurrent``). The delta rule's fast path: the writes ``u_t = beta_t (v_t - v_bar_t)`` satisfy
``u_t + beta_t sum_{i<t} (phi(k_i) . phi(k_t)) u_i = beta_t v_t``, a unit lower-triangular system ``(I + diag(beta)
L) U = diag(beta) V`` solved at once; then ``y_t = sum_{i<=t} (phi(k_i) . phi(q_t)) u_i``. That is O(T^2) per head,
fine for the short recall sequences here.

Deviations from the paper, and why:

* The recall model (``fwp_lm``) feeds each position the embedding of its token plus a separate embedding of the
  previous token (a causal token shift), so one fast-weight layer sees a key and its value at the same step, as the
  paper's synthetic setting presents them (one key-value pair per step); the paper's language models stack layers
  with feed-forward blocks instead (``depth`` and ``ffn`` are available).
* One head of DPFP-2 on 4-dimensional keys (16 features) by default, so that the number of stored pairs crosses the
  feature dimension inside the task's test sizes (4-32 pairs); ``preset="paper"`` is the shape of the paper's small
  WikiText-103 model as the official example script (IDSIA/lmtool-fwp) sets it: 16 layers, ``dim=128``, 8 heads with
  16-dimensional keys, feed-forward blocks (4 x dim wide here, 2048 there), no attention normalisation; ``nu=3`` is
  the largest DPFP of the paper's synthetic study (the script leaves it to a flag). The synthetic task's own sizes
  were not read here.
* The paper's text beyond its abstract and catalog entry was not available offline; the equations above are the
  published update rule, DPFP and sum normalisation as widely restated; initialisation is PyTorch's default for the
  projections and N(0, 0.02) for embeddings (ours).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

RULES = ("delta", "additive")
CPU: dict[str, Any] = {"dim": 64, "heads": 1, "key_dim": 4, "nu": 2, "depth": 1, "ffn": False}
PAPER: dict[str, Any] = {"dim": 128, "heads": 8, "key_dim": 16, "nu": 3, "depth": 16, "ffn": True}
PRESETS = {"cpu": CPU, "paper": PAPER}


def dpfp(x: torch.Tensor, nu: int = 1) -> torch.Tensor:
    """DPFP-``nu`` features of ``x (..., d)``: ``(..., 2 nu d)``, non-negative (not yet normalised).

    Feature ``i`` of block ``nu`` is ``r_i r_{i - nu}`` (indices mod 2d): the paper's products ``r_i r_{i + nu}``, in a
    rotated order.

    >>> dpfp(torch.tensor([[1.0, -2.0]]), nu=1)  # r = relu([1, -2, -1, 2]) = [1, 0, 0, 2]; r * roll(r, 1)
    tensor([[2., 0., 0., 0.]])
    """
    if nu < 1:
        raise ValueError(f"dpfp: nu must be >= 1 (the paper uses 1, 2, 3), got {nu}")
    r = F.relu(torch.cat([x, -x], dim=-1))
    return torch.cat([r * torch.roll(r, shifts=i, dims=-1) for i in range(1, nu + 1)], dim=-1)


def sum_normalise(phi: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """``phi / sum(phi)`` over the last axis (Sec. 4.2); an all-zero ``phi`` stays zero."""
    return phi / (phi.sum(-1, keepdim=True) + eps)


def delta_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """Outputs ``y (B, H, T, dv)`` of the delta-rule fast weights for features ``q, k (B, H, T, m)``, values
    ``v (B, H, T, dv)`` and rates ``beta (B, H, T)``, in parallel (the triangular solve of the module docstring)."""
    t = k.shape[-2]
    strict = torch.ones(t, t, dtype=torch.bool, device=k.device).tril(-1)
    kk = (k @ k.transpose(-1, -2)).masked_fill(~strict, 0.0)  # phi(k_t) . phi(k_i) for i < t
    system = torch.eye(t, dtype=k.dtype, device=k.device) + beta.unsqueeze(-1) * kk
    u = torch.linalg.solve_triangular(system, beta.unsqueeze(-1) * v, upper=False, unitriangular=True)
    return (q @ k.transpose(-1, -2)).tril() @ u


def additive_rule(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Outputs of the additive fast weights (causal linear attention without a denominator): ``y_t = sum_{i<=t}
    (phi(k_i) . phi(q_t)) v_i``."""
    return (q @ k.transpose(-1, -2)).tril() @ v


class FastWeightLayer(nn.Module):
    """A multi-head fast-weight layer ``(B, T, dim) -> (B, T, dim)``, causal: ``rule`` "delta" (the paper's) or
    "additive" (linear attention); DPFP-``nu`` features on ``key_dim``-dimensional keys and queries, sum-normalised.

    >>> layer = FastWeightLayer(8, heads=2, key_dim=3, nu=2)
    >>> x = torch.randn(2, 5, 8)
    >>> torch.allclose(layer(x), layer.recurrent(x), atol=1e-5)
    True
    """

    def __init__(self, dim: int, heads: int = 1, key_dim: int = 4, nu: int = 2, rule: str = "delta") -> None:
        super().__init__()
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}; choose from {RULES}")
        if dim % heads:
            raise ValueError(f"dim ({dim}) must be a multiple of heads ({heads}): values split evenly over heads")
        self.heads, self.key_dim, self.nu, self.rule = heads, key_dim, nu, rule
        self.value_dim = dim // heads
        self.q = nn.Linear(dim, heads * key_dim, bias=False)
        self.k = nn.Linear(dim, heads * key_dim, bias=False)
        self.v = nn.Linear(dim, dim, bias=False)
        self.beta = nn.Linear(dim, heads) if rule == "delta" else None
        self.out = nn.Linear(dim, dim, bias=False)

    @property
    def feature_dim(self) -> int:
        """Features per head, ``2 nu key_dim``: the fast memory of a head is ``value_dim x feature_dim``."""
        return 2 * self.nu * self.key_dim

    def _split(self, x: torch.Tensor, d: int) -> torch.Tensor:
        b, t, _ = x.shape
        return x.view(b, t, self.heads, d).transpose(1, 2)

    def programs(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """``(phi(q), phi(k), v, beta)`` per head: ``(B, H, T, m)`` twice, ``(B, H, T, dv)``, ``(B, H, T)`` (ones for the
        additive rule, which has no rate)."""
        q = sum_normalise(dpfp(self._split(self.q(x), self.key_dim), self.nu))
        k = sum_normalise(dpfp(self._split(self.k(x), self.key_dim), self.nu))
        v = self._split(self.v(x), self.value_dim)
        beta = torch.sigmoid(self.beta(x)).transpose(1, 2) if self.beta is not None else torch.ones_like(v[..., 0])
        return q, k, v, beta

    def _merge(self, y: torch.Tensor) -> torch.Tensor:
        b, h, t, d = y.shape
        return self.out(y.transpose(1, 2).reshape(b, t, h * d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v, beta = self.programs(x)
        y = delta_rule(q, k, v, beta) if self.rule == "delta" else additive_rule(q, k, v)
        return self._merge(y)

    def recurrent(self, x: torch.Tensor, state: torch.Tensor | None = None) -> torch.Tensor:
        """The same outputs by the step-by-step fast-weight recurrence (the paper's form; slow, for checking)."""
        q, k, v, beta = self.programs(x)
        b, h, t, _ = v.shape
        w = state if state is not None else v.new_zeros(b, h, self.value_dim, self.feature_dim)
        ys = []
        for i in range(t):
            ki, vi = k[:, :, i], v[:, :, i]
            if self.rule == "delta":
                retrieved = torch.einsum("bhvm,bhm->bhv", w, ki)
                vi = beta[:, :, i, None] * (vi - retrieved)
            w = w + torch.einsum("bhv,bhm->bhvm", vi, ki)
            ys.append(torch.einsum("bhvm,bhm->bhv", w, q[:, :, i]))
        return self._merge(torch.stack(ys, 2))


class FastWeightLM(nn.Module):
    """A token model of fast-weight layers: ``ids (B, T) -> logits (B, T, vocab)`` (the ``algorithmic_seq`` recall
    contract, ``input_kind = "tokens"``).

    Each position embeds its token plus the previous token (causal token shift, see the module docstring), then
    ``depth`` residual fast-weight layers (each optionally followed by a feed-forward block), a LayerNorm and the
    output head.
    """

    input_kind = "tokens"

    def __init__(self, vocab_size: int = 129, dim: int = 64, heads: int = 1, key_dim: int = 4, nu: int = 2,
                 rule: str = "delta", depth: int = 1, ffn: bool = False) -> None:
        super().__init__()
        self.emb = nn.Embedding(vocab_size, dim)
        self.prev = nn.Embedding(vocab_size + 1, dim)  # index vocab_size: "no previous token" at t = 0
        self.layers = nn.ModuleList(FastWeightLayer(dim, heads, key_dim, nu, rule) for _ in range(depth))
        self.ffns = nn.ModuleList(
            nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
            for _ in range(depth)) if ffn else None
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab_size)
        for e in (self.emb, self.prev):
            nn.init.normal_(e.weight, std=0.02)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        before = F.pad(ids[:, :-1], (1, 0), value=self.prev.num_embeddings - 1)
        x = self.emb(ids) + self.prev(before)
        for i, layer in enumerate(self.layers):
            x = x + layer(x)
            if self.ffns is not None:
                x = x + self.ffns[i](x)
        return self.head(self.norm(x))


def _config(preset: str, **overrides: Any) -> dict[str, Any]:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {sorted(PRESETS)}")
    return {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}


def fwp_delta_lm(vocab_size: int = 129, preset: str = "cpu", dim: int | None = None, heads: int | None = None,
                 key_dim: int | None = None, nu: int | None = None, depth: int | None = None,
                 ffn: bool | None = None) -> FastWeightLM:
    """The delta-rule fast weight programmer with DPFP-``nu`` features as a recall LM (``preset`` "cpu" or "paper";
    every argument given overrides it)."""
    cfg = _config(preset, dim=dim, heads=heads, key_dim=key_dim, nu=nu, depth=depth, ffn=ffn)
    return FastWeightLM(vocab_size, rule="delta", **cfg)


def fwp_additive_lm(vocab_size: int = 129, preset: str = "cpu", dim: int | None = None, heads: int | None = None,
                    key_dim: int | None = None, nu: int | None = None, depth: int | None = None,
                    ffn: bool | None = None) -> FastWeightLM:
    """The paper's baseline: the same model with the additive (linear-attention) update."""
    cfg = _config(preset, dim=dim, heads=heads, key_dim=key_dim, nu=nu, depth=depth, ffn=ffn)
    return FastWeightLM(vocab_size, rule="additive", **cfg)
