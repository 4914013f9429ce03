"""The compressors video_tokens compares a model with, all on its contract ``compress(tokens (B, T, N, D)) ->
(codebook (B, K, D), index_map (B, T, N) long)`` (index -1: no token at that position):

- ``full_tokens``: every token is its own entry (ratio 1);
- ``random_prune``: ``k`` positions per video drawn uniformly, the rest dropped (the pruning family);
- ``temporal_pool``: the mean of every ``window`` consecutive frames, each position of a window pointing at its
  pooled token (ratio 1 / window; merging along time);
- ``kmeans``: Euclidean k-means with a fixed ``k`` per video on the raw tokens (k-means++ start, Lloyd iterations).

Randomness (pruned positions, k-means++ seeds) comes from torch's global generator, which ``evaluate`` seeds.

>>> x = torch.randn(2, 8, 36, 16)
>>> cb, im = RandomPrune(k=5).compress(x)
>>> tuple(cb.shape), int((im >= 0).sum()), bool((cb[0, im[0][im[0] >= 0]] != 0).all())
((2, 5, 16), 10, True)
"""
from __future__ import annotations

import torch
from torch import nn

BASELINES = ("full_tokens", "random_prune", "temporal_pool", "kmeans")


class Compressor(nn.Module):
    """Base class: ``forward(tokens)`` runs :meth:`compress`, so the conformance kit checks the contract."""

    def compress(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.compress(tokens)


def kmeans(x: torch.Tensor, k: int, *, iters: int = 25, cosine: bool = False,
           generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Batched k-means: ``x`` (B, L, D) -> ``(labels (B, L) long, centroids (B, k, D), distortion (B,))``.

    k-means++ start (the first centre uniform, then each proportional to the squared distance to the nearest centre),
    then ``iters`` Lloyd steps; an emptied cluster keeps its centre. ``cosine=True``: the points are compared by cosine
    distance 1 - cos (pass unit vectors for spherical k-means); the distortion is the sum over points of the squared
    Euclidean (or the cosine) distance to their centre. ``generator``: the k-means++ draws' generator (default:
    torch's global one).
    """
    b, n, d = x.shape
    if not 1 <= k <= n:
        raise ValueError(f"kmeans: k={k} must lie in [1, {n}] (the number of points)")

    def dist(c: torch.Tensor) -> torch.Tensor:  # (B, L, k)
        if cosine:
            return 1 - x @ c.transpose(1, 2) / c.norm(dim=-1).clamp_min(1e-12)[:, None, :]
        return torch.cdist(x, c).pow(2)

    rows = torch.arange(b)
    first = torch.randint(0, n, (b,), generator=generator)
    cent = x[rows, first][:, None, :]
    for _ in range(1, k):
        w = dist(cent).min(dim=2).values.clamp_min(0) + 1e-12
        pick = torch.multinomial(w / w.sum(1, keepdim=True), 1, generator=generator)[:, 0]
        cent = torch.cat([cent, x[rows, pick][:, None, :]], dim=1)
    for _ in range(iters):
        labels = dist(cent).argmin(dim=2)
        onehot = nn.functional.one_hot(labels, k).to(x.dtype)  # (B, L, k)
        count = onehot.sum(1)[..., None]
        new = onehot.transpose(1, 2) @ x / count.clamp_min(1)
        new = torch.where(count > 0, new, cent)
        if torch.equal(new, cent):
            break
        cent = new
    dd = dist(cent)
    labels = dd.argmin(dim=2)
    return labels, cent, dd.gather(2, labels[..., None])[..., 0].sum(1)


class FullTokens(Compressor):
    """Every token kept: the codebook is the flattened grid and the index map counts 0 .. T*N - 1."""

    def compress(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, n, d = tokens.shape
        return tokens.reshape(b, t * n, d), torch.arange(t * n).reshape(1, t, n).expand(b, -1, -1).clone()


class RandomPrune(Compressor):
    """``k`` positions per video kept uniformly at random, with their place in the grid; the others get -1."""

    def __init__(self, k: int = 14) -> None:
        super().__init__()
        self.k = int(k)

    def compress(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, n, d = tokens.shape
        k = min(self.k, t * n)
        keep = torch.rand(b, t * n).argsort(dim=1)[:, :k].sort(dim=1).values
        codebook = torch.gather(tokens.reshape(b, t * n, d), 1, keep[..., None].expand(-1, -1, d))
        index_map = torch.full((b, t * n), -1, dtype=torch.long)
        index_map.scatter_(1, keep, torch.arange(k).expand(b, -1).contiguous())
        return codebook, index_map.reshape(b, t, n)


class TemporalPool(Compressor):
    """The mean token of every ``window`` consecutive frames at each grid position (the last window may be shorter)."""

    def __init__(self, window: int = 8) -> None:
        super().__init__()
        self.window = int(window)

    def compress(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, n, d = tokens.shape
        w = max(1, min(self.window, t))
        pooled = torch.stack([tokens[:, s:s + w].mean(1) for s in range(0, t, w)], dim=1)  # (B, ceil(T/w), N, D)
        index_map = (torch.arange(t)[:, None] // w) * n + torch.arange(n)[None, :]
        return pooled.reshape(b, -1, d), index_map.expand(b, -1, -1).clone()


class KMeans(Compressor):
    """Euclidean k-means with a fixed ``k`` on each video's raw tokens; every position points at its centre."""

    def __init__(self, k: int = 14, iters: int = 25) -> None:
        super().__init__()
        self.k, self.iters = int(k), int(iters)

    def compress(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, n, d = tokens.shape
        labels, cent, _ = kmeans(tokens.reshape(b, t * n, d), min(self.k, t * n), iters=self.iters)
        return cent, labels.reshape(b, t, n)


_BUILDERS = {"full_tokens": FullTokens, "random_prune": RandomPrune, "temporal_pool": TemporalPool, "kmeans": KMeans}


def build_baseline(name: str, **kwargs) -> Compressor:
    """A baseline by name (``k`` for random_prune / kmeans, ``window`` for temporal_pool)."""
    if name not in _BUILDERS:
        raise ValueError(f"video_tokens: unknown baseline {name!r}; choose from {BASELINES}")
    return _BUILDERS[name](**kwargs)
