"""Embeddings for numerical features (Gorishniy, Rubachev and Babenko 2022, "On Embeddings for Numerical Features in
Tabular Deep Learning", arXiv:2203.05556): every numeric feature becomes a vector before the MLP.

Section 3.2, Eq. 1, piecewise-linear encoding (PLE): with bin edges ``b_0 < ... < b_T`` of a feature,

    PLE(x)_t = 0                                  if x < b_{t-1} and t > 1,
               1                                  if x >= b_t and t < T,
               (x - b_{t-1}) / (b_t - b_{t-1})    otherwise,

(so the first bin extrapolates below ``b_0`` and the last above ``b_T``). Bins are the training quantiles
(``bins="quantile"``; duplicates merged, so a feature with few distinct values gets fewer bins) or the leaves of a
decision tree on (feature, target) (``bins="tree"``, target-aware, ``max_leaf_nodes = T``, ``min_samples_leaf``);
the task calls ``prepare(x_num_train, y_train)`` to compute them. MLP-PLE feeds the flattened encodings (n_num x T)
to the MLP (the paper's MLP-Q / MLP-T).

Section 3.3, Eq. 2, periodic embeddings: ``Periodic(x) = concat[sin(v), cos(v)]``, ``v = 2 pi (c_1 x, ..., c_k x)``
with trainable frequencies ``c_i ~ N(0, sigma^2)``, separate per feature; PLR adds a per-feature Linear(2k, d) and a
ReLU (``lite=True``: one Linear shared by all features, the authors' later "lite" variant). MLP-PLR feeds the
flattened (n_num x d) embeddings to the MLP. Categorical features (if any) enter the MLP through embeddings of 8
dimensions, as in the task's plain ``mlp`` baseline; the backbone is the paper's MLP: blocks Linear -> ReLU ->
Dropout, then a linear head.

Defaults by name: ``PAPER`` holds the authors' package defaults (48 bins, 48 frequencies, sigma 0.01, d 24; the paper
tunes sigma, k, d, T and the MLP per dataset and gives no single setting); ``CPU`` the small ones used here (32 bins;
sigma chosen on the validation loss of a pilot, see the plugin's reproduce.py).

Deviations: no hyperparameter tuning (fixed CPU settings for every dataset); the frequencies are drawn from a plain
normal (the authors' package truncates it at 3 sigma); bins of a feature that has fewer distinct values than ``T + 1``
are fewer (the missing ones encode to 0).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo_task_tabular_ctr.table_baselines import CategoricalEmbeddings, mlp_blocks

__all__ = ["CPU", "PAPER", "PiecewiseLinearEncoding", "PeriodicEmbeddings", "NumEmbedMLP", "mlp_ple", "mlp_plr",
           "quantile_edges", "tree_edges"]

CPU: dict[str, Any] = {"n_bins": 32, "n_frequencies": 16, "sigma": 0.1, "d_embedding": 16, "width": 128, "depth": 2,
                       "dropout": 0.0}
PAPER: dict[str, Any] = {"n_bins": 48, "n_frequencies": 48, "sigma": 0.01, "d_embedding": 24, "width": 256,
                         "depth": 3, "dropout": 0.1}
PRESETS = {"cpu": CPU, "paper": PAPER}
EMBEDDINGS = ("ple", "plr", "pl", "p", "none")
BINS = ("quantile", "tree")


def quantile_edges(x: np.ndarray, n_bins: int) -> list[np.ndarray]:
    """Per column of ``x`` (N, n), the distinct training quantiles at ``t / n_bins``, t = 0..n_bins (Sec. 3.2)."""
    qs = np.quantile(x, np.linspace(0.0, 1.0, n_bins + 1), axis=0)
    return [np.unique(qs[:, j]) for j in range(x.shape[1])]


def tree_edges(x: np.ndarray, y: np.ndarray, n_bins: int, *, classification: bool,
               min_samples_leaf: int = 64, seed: int = 0) -> list[np.ndarray]:
    """Per column, the edges of the leaves of a decision tree fitted on (that feature, y) with at most ``n_bins``
    leaves: the column's minimum, the tree's thresholds and its maximum (Sec. 3.2, target-aware bins)."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    cls = DecisionTreeClassifier if classification else DecisionTreeRegressor
    out = []
    for j in range(x.shape[1]):
        col = x[:, j:j + 1]
        tree = cls(max_leaf_nodes=n_bins, min_samples_leaf=min(min_samples_leaf, max(1, len(col) // (2 * n_bins))),
                   random_state=seed).fit(col, y).tree_
        thresholds = tree.threshold[tree.children_left != tree.children_right]
        out.append(np.unique(np.concatenate([[col.min(), col.max()], thresholds])))
    return out


class PiecewiseLinearEncoding(nn.Module):
    """PLE (Eq. 1): ``x (B, n) -> (B, n, T)``. The edges are buffers (``set_edges``); until then every feature has
    the standard normal's quantiles as edges (the task standardises numeric features).

    >>> ple = PiecewiseLinearEncoding(1, 4)
    >>> ple.set_edges([np.array([0.0, 1.0, 2.0, 3.0, 4.0])])
    >>> ple(torch.tensor([[-1.0], [2.5], [9.0]]))[:, 0]
    tensor([[-1.0000,  0.0000,  0.0000,  0.0000],
            [ 1.0000,  1.0000,  0.5000,  0.0000],
            [ 1.0000,  1.0000,  1.0000,  6.0000]])
    """

    def __init__(self, n_num: int, n_bins: int) -> None:
        super().__init__()
        self.n_num, self.n_bins = int(n_num), int(n_bins)
        self.register_buffer("left", torch.zeros(self.n_num, self.n_bins))
        self.register_buffer("width", torch.ones(self.n_num, self.n_bins))
        self.register_buffer("n_active", torch.zeros(self.n_num, dtype=torch.long))
        normal = torch.distributions.Normal(0.0, 1.0)
        p = torch.linspace(0, 1, self.n_bins + 1)[1:-1]
        inner = normal.icdf(p).numpy() if self.n_bins > 1 else np.zeros(0)
        edges = np.concatenate([[-3.0], np.clip(inner, -2.99, 2.99), [3.0]])
        self.set_edges([edges] * self.n_num)

    def set_edges(self, edges: Sequence[np.ndarray]) -> None:
        """Per feature, increasing edges ``b_0 < ... < b_T'`` with ``T' <= n_bins``; bins past ``T'`` encode to 0."""
        if len(edges) != self.n_num:
            raise ValueError(f"PLE: {len(edges)} edge arrays for {self.n_num} features")
        left, width = torch.zeros(self.n_num, self.n_bins), torch.ones(self.n_num, self.n_bins)
        n_active = torch.zeros(self.n_num, dtype=torch.long)
        for j, e in enumerate(edges):
            e = np.asarray(e, dtype=np.float64)
            if len(e) - 1 > self.n_bins or np.any(np.diff(e) <= 0):
                raise ValueError(f"PLE: feature {j} needs at most {self.n_bins + 1} strictly increasing edges")
            k = len(e) - 1
            left[j, :k] = torch.as_tensor(e[:-1], dtype=torch.float32)
            width[j, :k] = torch.as_tensor(np.diff(e), dtype=torch.float32)
            n_active[j] = k
        self.left.copy_(left)
        self.width.copy_(width)
        self.n_active.copy_(n_active)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = torch.arange(self.n_bins, device=x.device)
        active = t[None, :] < self.n_active[:, None]  # (n, T)
        last = t[None, :] == (self.n_active[:, None] - 1)
        lo = torch.where(t[None, :] == 0, -math.inf, 0.0).expand(self.n_num, -1)
        hi = torch.where(last, math.inf, 1.0)
        r = (x[..., None] - self.left) / self.width
        return torch.minimum(torch.maximum(r, lo), hi) * active


class PeriodicEmbeddings(nn.Module):
    """Periodic embeddings (Eq. 2) with the optional Linear + ReLU of PLR: ``x (B, n) -> (B, n, d)`` (``d = 2k``
    without the linear layer).

    Args:
        n_num: numeric features.
        n_frequencies: ``k``.
        sigma: the frequencies' initial standard deviation (the paper's most important hyperparameter).
        d_embedding: the linear layer's output (None: no linear layer, the paper's "P").
        activation: ReLU after the linear layer (PLR) or not (PL).
        lite: one linear layer shared by all features.
    """

    def __init__(self, n_num: int, n_frequencies: int = CPU["n_frequencies"], sigma: float = CPU["sigma"],
                 d_embedding: int | None = CPU["d_embedding"], activation: bool = True, lite: bool = False) -> None:
        super().__init__()
        self.n_num, self.k, self.sigma = int(n_num), int(n_frequencies), float(sigma)
        self.lite, self.activation = lite, activation
        self.frequencies = nn.Parameter(torch.randn(self.n_num, self.k) * self.sigma)
        self.d_out = 2 * self.k if d_embedding is None else int(d_embedding)
        self.weight = self.bias = None
        self.shared = None
        if d_embedding is not None and lite:
            self.shared = nn.Linear(2 * self.k, self.d_out)
        elif d_embedding is not None:  # one Linear(2k, d) per feature, nn.Linear's initialisation
            bound = 1 / math.sqrt(2 * self.k)
            self.weight = nn.Parameter(torch.empty(self.n_num, 2 * self.k, self.d_out).uniform_(-bound, bound))
            self.bias = nn.Parameter(torch.empty(self.n_num, self.d_out).uniform_(-bound, bound))

    def periodic(self, x: torch.Tensor) -> torch.Tensor:
        """``[sin(2 pi c x), cos(2 pi c x)]``: (B, n) -> (B, n, 2k)."""
        v = 2 * math.pi * self.frequencies * x[..., None]
        return torch.cat([torch.sin(v), torch.cos(v)], dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        z = self.periodic(x)
        if self.shared is not None:
            z = self.shared(z)
        elif self.weight is not None:
            z = torch.einsum("bnf,nfd->bnd", z, self.weight) + self.bias
        else:
            return z
        return torch.relu(z) if self.activation else z


class NumEmbedMLP(nn.Module):
    """An MLP over embedded numerical features (``embedding``: "ple", "plr", "pl", "p" or "none": the plain MLP), on
    the ``tabular_ctr`` table contract ``forward(x_num (B, n_num), x_cat (B, n_cat)) -> (B,)`` or ``(B, d_out)``.

    >>> net = NumEmbedMLP(n_num=3, embedding="plr", d_embedding=4, n_frequencies=2, width=8)
    >>> net(torch.randn(5, 3), torch.zeros(5, 0, dtype=torch.long)).shape
    torch.Size([5])
    """

    input_kind = "table"

    def __init__(self, n_num: int = 10, cat_cardinalities: Sequence[int] = (), d_out: int = 1, embedding: str = "plr",
                 n_bins: int = CPU["n_bins"], bins: str = "quantile", n_frequencies: int = CPU["n_frequencies"],
                 sigma: float = CPU["sigma"], d_embedding: int = CPU["d_embedding"], lite: bool = False,
                 width: int = CPU["width"], depth: int = CPU["depth"], dropout: float = CPU["dropout"],
                 min_samples_leaf: int = 64) -> None:
        super().__init__()
        if embedding not in EMBEDDINGS:
            raise ValueError(f"tabular-num-embed: embedding={embedding!r}; choose from {EMBEDDINGS}")
        if bins not in BINS:
            raise ValueError(f"tabular-num-embed: bins={bins!r}; choose from {BINS}")
        if n_num < 1 or n_bins < 1 or n_frequencies < 1:
            raise ValueError(f"tabular-num-embed: n_num={n_num}, n_bins={n_bins}, n_frequencies={n_frequencies} must "
                             f"all be >= 1")
        self.n_num, self.cat_cardinalities, self.d_out = int(n_num), [int(k) for k in cat_cardinalities], int(d_out)
        self.embedding, self.bins, self.min_samples_leaf = embedding, bins, int(min_samples_leaf)
        if embedding == "ple":
            self.num = PiecewiseLinearEncoding(self.n_num, n_bins)
            d_num = self.n_num * n_bins
        elif embedding == "none":
            self.num = nn.Identity()
            d_num = self.n_num
        else:
            self.num = PeriodicEmbeddings(self.n_num, n_frequencies, sigma, None if embedding == "p" else d_embedding,
                                          activation=embedding == "plr", lite=lite)
            d_num = self.n_num * self.num.d_out
        self.cat = CategoricalEmbeddings(self.cat_cardinalities)
        self.mlp = mlp_blocks(d_num + self.cat.out_dim, width, depth, self.d_out, dropout)

    def prepare(self, x_num: torch.Tensor, y: torch.Tensor) -> None:
        """Fit the PLE bins on the training features (and target, for tree bins); a no-op for other embeddings."""
        if self.embedding != "ple":
            return
        x = x_num.double().numpy()
        if self.bins == "quantile":
            edges = quantile_edges(x, self.num.n_bins)
        else:
            edges = tree_edges(x, y.numpy(), self.num.n_bins, classification=not torch.is_floating_point(y),
                               min_samples_leaf=self.min_samples_leaf)
        self.num.set_edges(edges)

    def forward(self, x_num: torch.Tensor, x_cat: torch.Tensor) -> torch.Tensor:
        z = self.num(x_num).flatten(1)
        out = self.mlp(torch.cat([z, self.cat(x_cat)], dim=1))
        return out[:, 0] if self.d_out == 1 else out


def _build(embedding: str, preset: str, kw: dict[str, Any]) -> NumEmbedMLP:
    if preset not in PRESETS:
        raise ValueError(f"tabular-num-embed: preset={preset!r}; choose from {tuple(PRESETS)}")
    return NumEmbedMLP(**{"embedding": embedding, **PRESETS[preset], **kw})


def mlp_plr(*, preset: str = "cpu", **kw: Any) -> NumEmbedMLP:
    """MLP-PLR: periodic embeddings + per-feature Linear + ReLU, then the MLP (``preset="paper"``: package defaults)."""
    return _build("plr", preset, kw)


def mlp_ple(*, preset: str = "cpu", **kw: Any) -> NumEmbedMLP:
    """MLP-PLE: piecewise-linear encoding with quantile bins (``bins="tree"``: target-aware), then the MLP."""
    return _build("ple", preset, kw)
