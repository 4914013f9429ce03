"""Positional encoding by shifted basis functions, and the two numbers that predict how well it works.

Zheng, Ramasinghe, Lucey, "Rethinking Positional Encoding", arXiv 2107.02561 (2021), Sec. 3-4: a
coordinate x in one dimension is embedded as ``psi(x) = [phi(x - t_1), ..., phi(x - t_M)]``, one
basis function ``phi`` shifted to M equally spaced centres t_j; in 2-D the per-axis embeddings are
concatenated (separable). ``phi`` may be a Gaussian ``exp(-d^2 / (2 sigma^2))``, a triangle (hat)
``max(0, 1 - |d| / sigma)``, a box ``1[|d| <= sigma]`` (an impulse as sigma -> 0), or a sinusoid:
shifted sinusoids span the same space as ``[cos(2 pi f x), sin(2 pi f x)]``, so Fourier features are
the special case ``rff`` (random per-axis frequencies f ~ N(0, sigma^2)). How well a coordinate MLP
on top fits and generalises is governed by

- the stable rank of the embedded coordinates, ``||E||_F^2 / ||E||_2^2`` (high: can memorise), and
- distance preservation: ``<psi(x), psi(x')>`` should fall smoothly with ``|x - x'|`` (generalises).

Narrow bases raise the first and destroy the second; wide ones the opposite. As in the authors'
code, each per-axis embedding is divided by its largest row norm (here over a dense grid of the
domain, fixed at construction).
"""
from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["BASES", "basis_function", "ShiftedBasisEmbedding", "ShiftedBasisMLP", "shifted_basis_mlp",
           "stable_rank", "distance_preservation"]

BASES = ("gaussian", "triangle", "box", "rff")


def basis_function(d: torch.Tensor, basis: str, sigma: float) -> torch.Tensor:
    """``phi(d)`` for a displacement ``d`` and bandwidth ``sigma`` (not for ``rff``, which is not shifted)."""
    if basis == "gaussian":
        return torch.exp(-0.5 * (d / sigma) ** 2)
    if basis == "triangle":
        return torch.clamp(1.0 - d.abs() / sigma, min=0.0)
    if basis == "box":
        return (d.abs() <= sigma).to(d.dtype)
    raise ValueError(f"unknown shifted basis {basis!r}; choose from {', '.join(BASES)}")


class ShiftedBasisEmbedding(nn.Module):
    """``coords (B, d) in [-1, 1] -> (B, n_centers * d)``: per-axis shifted-basis (or Fourier) embedding.

    Centres are the pixel centres of an ``n_centers`` grid on [-1, 1]; ``rff`` draws ``n_centers // 2``
    frequencies per axis from ``N(0, sigma^2)`` (cycles per unit) with its own seeded generator.

    >>> e = ShiftedBasisEmbedding(in_features=2, n_centers=8, sigma=0.25)
    >>> e(torch.zeros(3, 2)).shape
    torch.Size([3, 16])
    """

    def __init__(self, in_features: int = 2, n_centers: int = 64, sigma: float = 0.03, basis: str = "gaussian",
                 seed: int = 0):
        super().__init__()
        if basis not in BASES:
            raise ValueError(f"unknown shifted basis {basis!r}; choose from {', '.join(BASES)}")
        self.in_features, self.n_centers, self.sigma, self.basis = in_features, n_centers, float(sigma), basis
        self.register_buffer("centers", (torch.arange(n_centers, dtype=torch.float32) * 2 + 1) / n_centers - 1)
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("freqs", torch.randn(in_features, n_centers // 2, generator=g) * sigma)
        dense = torch.linspace(-1, 1, 2049).unsqueeze(1).expand(-1, in_features)
        self.register_buffer("scale", 1.0 / self._raw(dense).norm(dim=-1).amax(0))
        self.out_features = n_centers * in_features if basis != "rff" else 2 * (n_centers // 2) * in_features

    def _raw(self, x: torch.Tensor) -> torch.Tensor:
        """Un-normalised per-axis embedding, (B, d, M)."""
        if self.basis == "rff":
            proj = 2 * math.pi * x.unsqueeze(-1) * self.freqs  # (B, d, M/2)
            return torch.cat([torch.cos(proj), torch.sin(proj)], dim=-1)
        return basis_function(x.unsqueeze(-1) - self.centers, self.basis, self.sigma)

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        emb = self._raw(coords) * self.scale.unsqueeze(-1)
        return emb.reshape(coords.shape[0], -1) / math.sqrt(self.in_features)


class ShiftedBasisMLP(nn.Module):
    """A shifted-basis embedding, then ``layers`` ReLU layers of width ``hidden`` (0: a linear model), then linear.

    >>> m = ShiftedBasisMLP(n_centers=8, sigma=0.25, hidden=16, layers=1)
    >>> m(torch.zeros(3, 2)).shape
    torch.Size([3, 1])
    """

    default_lr = 1e-3  # Adam 1e-3, as in the authors' 2-D image experiments

    def __init__(self, in_features: int = 2, out_features: int = 1, basis: str = "gaussian", n_centers: int = 64,
                 sigma: float = 0.03, hidden: int = 128, layers: int = 1, seed: int = 0):
        super().__init__()
        self.embed = ShiftedBasisEmbedding(in_features, n_centers, sigma, basis, seed)
        body: list[nn.Module] = []
        d = self.embed.out_features
        for _ in range(layers):
            body += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(d, out_features)

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(self.embed(coords)))


def shifted_basis_mlp(in_features: int = 2, out_features: int = 1, basis: str = "gaussian", n_centers: int = 64,
                      sigma: float = 0.03, hidden: int = 128, layers: int = 1, seed: int = 0) -> ShiftedBasisMLP:
    """Builder of the ``sbpe_*`` models (64 centres per axis, one hidden ReLU layer of width 128)."""
    return ShiftedBasisMLP(in_features, out_features, basis, n_centers, sigma, hidden, layers, seed)


def stable_rank(emb: torch.Tensor) -> float:
    """``||E||_F^2 / ||E||_2^2`` of an (N, M) embedding matrix: between 1 and rank(E).

    >>> stable_rank(torch.eye(4))
    4.0
    """
    s = torch.linalg.svdvals(emb.double())
    return float((s ** 2).sum() / s[0] ** 2)


def distance_preservation(emb: torch.Tensor, coords: torch.Tensor) -> float:
    """Spearman rank correlation, over all pairs, between the embeddings' cosine similarity and ``-|x - x'|``.

    1 when similarity falls monotonically with distance (the paper's distance preservation); near 0
    for an impulse-like embedding whose similarity is 0 for every distinct pair. This scalar is our
    summary of the paper's similarity-vs-displacement curves, which it does not reduce to one number.

    >>> x = torch.linspace(-1, 1, 16).unsqueeze(1)
    >>> distance_preservation(ShiftedBasisEmbedding(1, 32, sigma=0.5)(x), x) > 0.9
    True
    """
    from scipy.stats import spearmanr

    e = torch.nn.functional.normalize(emb.double(), dim=1)
    sim = e @ e.T
    dist = torch.cdist(coords.double(), coords.double())
    iu = torch.triu_indices(len(coords), len(coords), offset=1)
    sims = sim[iu[0], iu[1]].numpy()
    if sims.max() - sims.min() < 1e-12:  # every distinct pair equally similar (e.g. an impulse): nothing preserved
        return 0.0
    return float(spearmanr(sims, (-dist[iu[0], iu[1]]).numpy()).statistic)
