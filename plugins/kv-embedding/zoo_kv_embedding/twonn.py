"""Intrinsic dimensionality by TwoNN (Facco et al. 2017), and KV-Embedding's layer selection from it.

TwoNN needs only each point's two nearest neighbours: for points drawn from a d-dimensional manifold with locally
constant density, the ratio ``mu = r2 / r1`` of the second to the first neighbour distance follows a Pareto law
``P(mu) = d * mu^-(d+1)`` whatever the density: its distribution function gives ``-log(1 - F(mu)) = d log(mu)``,
a line through the origin. Facco et al. fit that line by least squares to the empirical distribution function,
leaving out the largest 10% of the ratios (points on the rim of the sample or in sparse regions), which
:func:`two_nn` does with ``discard``.

KV-Embedding re-routes the last token's keys and values at the layers where the representation is most compressed,
i.e. near the minimum of the intrinsic dimension over depth (:func:`select_layers`).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["two_nn", "select_layers"]


def two_nn(x: np.ndarray, *, discard: float = 0.1) -> float:
    """The TwoNN intrinsic dimension of the rows of ``x`` (N, D), Euclidean distances.

    Duplicate points (a zero first-neighbour distance) are left out; ``discard`` is the share of the largest
    ratios ``r2 / r1`` dropped before the estimate (Facco et al.'s 10%).

    >>> rng = np.random.default_rng(0)
    >>> plane = rng.standard_normal((2000, 2)) @ rng.standard_normal((2, 30))  # a 2-d plane inside 30-d
    >>> round(two_nn(plane))
    2
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or len(x) < 3:
        raise ValueError(f"two_nn needs an (N >= 3, D) array of points, got shape {x.shape}")
    sq = (x * x).sum(1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * x @ x.T, 0.0)
    np.fill_diagonal(d2, np.inf)
    near = np.partition(d2, 1, axis=1)[:, :2]
    r1, r2 = np.sqrt(near[:, 0]), np.sqrt(near[:, 1])
    keep = r1 > 1e-12 * max(1.0, float(np.sqrt(sq.max())))
    mu = np.sort(r2[keep] / r1[keep])
    n = len(mu)
    if n < 3:
        return float("nan")
    used = max(2, int(np.floor(n * (1.0 - discard))))
    x = np.log(mu[:used])
    y = -np.log(1.0 - np.arange(1, used + 1) / n)  # the empirical distribution function, F_i = i / n
    if (x * x).sum() <= 0:
        return float("nan")
    return float((x * y).sum() / (x * x).sum())


def select_layers(ids: Sequence[float], num_layers: int, candidates: Sequence[int]) -> list[int]:
    """``num_layers`` consecutive layers among ``candidates`` centred on the one of lowest intrinsic dimension.

    ``ids[l]`` is the intrinsic dimension of layer ``l``'s input (NaN ranks last). The window is shifted to stay
    inside the candidates (consecutive indices), so near the ends it is not centred.

    >>> select_layers([9.0, 7.0, 4.0, 5.0, 8.0], 3, range(1, 5))
    [1, 2, 3]
    >>> select_layers([9.0, 7.0, 6.0, 5.0, 4.0], 2, range(1, 5))
    [3, 4]
    """
    cand = sorted(candidates)
    if not cand:
        return []
    num_layers = max(0, min(num_layers, len(cand)))
    score = [np.inf if not np.isfinite(ids[c]) else ids[c] for c in cand]
    best = int(np.argmin(score))
    start = min(max(0, best - (num_layers - 1) // 2), len(cand) - num_layers)
    return cand[start:start + num_layers]
