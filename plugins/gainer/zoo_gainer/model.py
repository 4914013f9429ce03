"""GaINeR: trainable 2-D Gaussians that carry features, gathered by nearest neighbours and decoded by an MLP.

Jakubowska, Zielinski, Tobiasz, Byrski, Zieba, Belter, Spurek, "GaINeR: Geometry-Aware Implicit
Neural Representation for Image Editing" (arXiv 2511.20924), Sec. 3. N Gaussians, each with a mean
``mu_i``, a covariance ``Sigma_i`` and an embedding ``e_i``. For a query point x the model takes the
K Gaussians nearest to x and aggregates their embeddings, each weighted by its Gaussian density at x,

    e(x) = sum_{i in KNN_K(x)} exp(-1/2 (x - mu_i)^T Sigma_i^-1 (x - mu_i)) e_i,       RGB(x) = sigmoid(f(e(x)))

with f a small ReLU MLP. During training each Gaussian's feature is ``e_i + H(mu_i)``, ``H`` a
multi-resolution hash grid (Instant-NGP) evaluated at the Gaussian's mean; at inference the grid is
folded into the per-Gaussian embeddings (``bake``), so moving a Gaussian (``edit``) moves its
feature with it and changes the image only around the Gaussian.

From the authors' code (read, not copied): diagonal covariances stored as log-variances, the
unnormalised density weights above, K = 16 neighbours, sigmoid output, Adam with lr 1e-3 (weight
decay 1e-6) for the networks and embeddings, 1e-4 for the means, 1e-3 for the log-variances. Our
choices for a 2-D CPU version: N = 1024 Gaussians (the code seeds ~500k points from the image)
initialised on a jittered grid with standard deviation equal to the grid spacing, embeddings
drawn from N(0, 0.1^2), an 8-level hash grid (2 features per level, 2^10 entries, resolutions 8..128),
an MLP with 2 hidden layers of 64, exact nearest neighbours by brute force (the code uses an OptiX
ray-tracing search), no densification or pruning.
"""
from __future__ import annotations

import logging
import math
from typing import Any

import torch
from torch import nn

from zoo_task_image_fit.image_fit import mse_loop

log = logging.getLogger(__name__)

__all__ = ["HashGrid2D", "GaINeR", "gainer", "knn"]

_PRIMES = (1, 2654435761)


class HashGrid2D(nn.Module):
    """Multi-resolution hash encoding of 2-D points in [-1, 1]^2 (Mueller et al. 2022): (N, 2) -> (N, L * F).

    Level l has resolution ``floor(min_res * b^l)`` with b chosen so the last level is ``max_res``;
    a level whose grid has more vertices than the table is indexed by the spatial hash
    ``(x * 1) xor (y * 2654435761) mod T``, otherwise densely. Bilinear interpolation of the 4 corners.
    """

    def __init__(self, levels: int = 8, features: int = 2, log2_size: int = 10, min_res: int = 8,
                 max_res: int = 128):
        super().__init__()
        self.levels, self.features, self.size = levels, features, 2 ** log2_size
        b = math.exp((math.log(max_res) - math.log(min_res)) / max(levels - 1, 1))
        self.res = [int(math.floor(min_res * b ** lvl)) for lvl in range(levels)]
        self.tables = nn.Parameter(torch.empty(levels, self.size, features).uniform_(-1e-4, 1e-4))
        self.out_features = levels * features

    def _index(self, ix: torch.Tensor, iy: torch.Tensor, res: int) -> torch.Tensor:
        if (res + 1) ** 2 <= self.size:
            return ix * (res + 1) + iy
        return torch.bitwise_xor(ix * _PRIMES[0], iy * _PRIMES[1]) % self.size

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p01 = ((x.clamp(-1, 1) + 1) / 2).to(self.tables.dtype)
        out = []
        for lvl, res in enumerate(self.res):
            pos = p01 * res
            lo = pos.floor().long().clamp(0, res - 1)
            t = pos - lo
            table = self.tables[lvl]
            acc = 0.0
            for dx in (0, 1):
                for dy in (0, 1):
                    w = (t[:, 0] if dx else 1 - t[:, 0]) * (t[:, 1] if dy else 1 - t[:, 1])
                    acc = acc + w[:, None] * table[self._index(lo[:, 0] + dx, lo[:, 1] + dy, res)]
            out.append(acc)
        return torch.cat(out, dim=-1)


@torch.no_grad()
def knn(queries: torch.Tensor, points: torch.Tensor, k: int, chunk: int = 8192) -> torch.Tensor:
    """Indices (Q, k) of the k points nearest to each query (Euclidean, brute force, in chunks).

    >>> knn(torch.tensor([[0.0, 0.0]]), torch.tensor([[1.0, 0], [0.1, 0], [0, -0.5]]), 2).tolist()
    [[1, 2]]
    """
    k = min(k, points.shape[0])
    return torch.cat([torch.topk(torch.cdist(queries[i:i + chunk], points), k, largest=False, sorted=True).indices
                      for i in range(0, queries.shape[0], chunk)])


class GaINeR(nn.Module):
    """GaINeR for images: ``coords (B, 2)`` in [-1, 1] -> ``(B, out_features)`` in [0, 1].

    >>> m = GaINeR(n_gaussians=16, k=4, hash_levels=2, hidden=8)
    >>> m(torch.zeros(3, 2)).shape
    torch.Size([3, 1])
    """

    default_lr = 1e-3

    def __init__(self, in_features: int = 2, out_features: int = 1, n_gaussians: int = 1024, k: int = 16,
                 embed_dim: int = 16, hidden: int = 64, layers: int = 2, hash_levels: int = 8,
                 hash_log2_size: int = 10, hash_min_res: int = 8, hash_max_res: int = 128,
                 means_lr: float = 1e-4, covs_lr: float = 1e-3):
        super().__init__()
        if in_features != 2:
            raise ValueError(f"GaINeR represents 2-D images; in_features must be 2, got {in_features}")
        if hash_levels and embed_dim % hash_levels:
            raise ValueError(f"embed_dim ({embed_dim}) must be hash_levels ({hash_levels}) x features per level")
        self.k, self.means_lr, self.covs_lr = k, means_lr, covs_lr
        side = math.ceil(math.sqrt(n_gaussians))
        spacing = 2.0 / side
        cells = torch.stack(torch.meshgrid(torch.arange(side), torch.arange(side), indexing="ij"), -1).reshape(-1, 2)
        cells = cells[torch.randperm(cells.shape[0])[:n_gaussians]].float()
        self.means = nn.Parameter((cells + torch.rand(n_gaussians, 2)) * spacing - 1.0)
        self.log_var = nn.Parameter(torch.full((n_gaussians, 2), 2 * math.log(spacing)))
        self.embed = nn.Parameter(torch.randn(n_gaussians, embed_dim) * 0.1)
        self.hash = (HashGrid2D(hash_levels, embed_dim // hash_levels, hash_log2_size, hash_min_res, hash_max_res)
                     if hash_levels else None)
        self.register_buffer("baked", torch.tensor(not hash_levels))
        body: list[nn.Module] = []
        d = embed_dim
        for _ in range(layers):
            body += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        self.decoder = nn.Sequential(*body, nn.Linear(d, out_features))

    def gaussian_features(self) -> torch.Tensor:
        """Each Gaussian's feature (N, embed_dim): ``e_i + H(mu_i)`` while training, ``e_i`` once baked."""
        if self.hash is None or bool(self.baked):
            return self.embed
        return self.embed + self.hash(self.means)

    def aggregate(self, coords: torch.Tensor) -> torch.Tensor:
        """``e(x)``: the density-weighted sum of the K nearest Gaussians' features, (B, embed_dim)."""
        idx = knn(coords.detach(), self.means.detach(), self.k)
        diff = coords[:, None, :] - self.means[idx]
        w = torch.exp(-0.5 * (diff ** 2 / self.log_var.exp()[idx]).sum(-1))
        return torch.einsum("bk,bkf->bf", w, self.gaussian_features()[idx])

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.decoder(self.aggregate(coords)))

    @torch.no_grad()
    def bake(self) -> None:
        """Fold the hash-grid features into the per-Gaussian embeddings (inference form; idempotent)."""
        if not bool(self.baked):
            self.embed += self.hash(self.means)
            self.baked.fill_(True)

    @torch.no_grad()
    def edit(self, gaussian_ids: torch.Tensor | list[int], new_means: torch.Tensor) -> None:
        """Move Gaussians ``gaussian_ids`` to ``new_means`` (M, 2); their features move with them."""
        self.bake()
        self.means[torch.as_tensor(gaussian_ids, dtype=torch.long)] = new_means.to(self.means.dtype)

    def fit(self, signal, *, steps: int | None, budget_s: float | None = None, seed: int = 0,
            progress: str | None = None) -> dict[str, Any]:
        """Full-batch Adam on the MSE with the paper's per-group learning rates, then ``bake``."""
        if bool(self.baked) and self.hash is not None:
            raise RuntimeError("this GaINeR is baked (inference form); fit a freshly created model")
        rest = [p for n, p in self.named_parameters() if n not in ("means", "log_var")]
        opt = torch.optim.Adam([{"params": rest, "lr": self.default_lr, "weight_decay": 1e-6},
                                {"params": [self.means], "lr": self.means_lr},
                                {"params": [self.log_var], "lr": self.covs_lr}], eps=1e-15)
        out = mse_loop(self, signal, opt, steps=steps, budget_s=budget_s, progress=progress)
        self.bake()
        self.eval()
        return out


def gainer(in_features: int = 2, out_features: int = 1, n_gaussians: int = 1024, k: int = 16, embed_dim: int = 16,
           hidden: int = 64, layers: int = 2, hash_levels: int = 8, hash_log2_size: int = 10, hash_min_res: int = 8,
           hash_max_res: int = 128, means_lr: float = 1e-4, covs_lr: float = 1e-3) -> GaINeR:
    """GaINeR with CPU-sized defaults (1024 Gaussians, K=16, 16-d features, 8-level hash grid, MLP 2 x 64).

    >>> gainer(n_gaussians=16, k=4, hash_levels=2, hidden=8)(torch.zeros(2, 2)).shape
    torch.Size([2, 1])
    """
    return GaINeR(in_features, out_features, n_gaussians, k, embed_dim, hidden, layers, hash_levels, hash_log2_size,
                  hash_min_res, hash_max_res, means_lr, covs_lr)
