"""Kernel analysis (Montavon, Braun and Müller 2011, "Kernel Analysis of Deep Networks", JMLR 12, section 2).

A representation ``X`` (N, D) is good for a task when few leading components of its kernel PCA suffice to predict the
labels. With an RBF kernel ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))`` centred in feature space (``Kc = H K H``,
``H = I - 11'/N``) and its eigenvectors ``u_1, u_2, ...`` (largest eigenvalue first), the linear model on the top ``d``
components predicts the one-hot labels ``Y`` by projection, ``Y^_d = 1 mean(Y)' + U_d U_d' (Y - 1 mean(Y)')``. The
curve ``e(d)`` is its leave-one-out error; its area is taken on the paper's logarithmic d axis (the mean of
``e`` over ``log d`` from 1 to ``d_max``, trapezoids), so the few leading components weigh as much as the long tail.
``sigma`` is chosen for each ``d`` (from multiples of the median pairwise distance) to minimise that error, as the
paper selects the kernel scale. Because the fit is a projection,
leave-one-out residuals are exact and cheap: ``(y_i - y^_i) / (1 - h_ii)`` with ``h_ii = 1/N + sum_k u_ik^2``.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> s = rng.choice([-1.0, 1.0], 200)
>>> x = np.c_[4 * s + 0.3 * rng.standard_normal(200), rng.standard_normal((200, 4))]
>>> res = kernel_analysis_curve(x, (s > 0).astype(int), d_max=10)
>>> res["error"][0] < 0.05       # the labels are a function of the first principal direction: d = 1 suffices
True
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.linalg

SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)  # sigma = scale * median pairwise distance, the grid searched per d
LOSSES = ("error", "squared")


def _check(x: Any, labels: Any, d_max: int | None) -> tuple[np.ndarray, np.ndarray, int]:
    x = np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"kernel analysis needs features (N, D); got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError("kernel analysis: the features hold NaN/inf values; drop those inputs first")
    if labels is None:
        raise ValueError("kernel analysis needs labels (N,): pass labels= (zoo.activations(..., labels=y))")
    y = np.asarray(labels)
    if y.shape != (x.shape[0],):
        raise ValueError(f"labels has shape {y.shape}, expected ({x.shape[0]},): one class label per input")
    classes, codes = np.unique(y, return_inverse=True)
    if len(classes) < 2:
        raise ValueError("kernel analysis needs at least 2 classes among the labels")
    n = x.shape[0]
    if n < 10:
        raise ValueError(f"kernel analysis needs at least 10 inputs (leave-one-out over the kernel PCA); got {n}")
    limit = n // 2  # past N/2 components the leave-one-out leverages approach 1 and the estimate degenerates
    d_max = min(100, limit) if d_max is None else int(d_max)
    if not 1 <= d_max <= limit:
        raise ValueError(f"d_max={d_max}: kernel analysis takes 1 <= d_max <= N/2 = {limit} components")
    return x, codes, d_max


def sq_distances(x: np.ndarray) -> np.ndarray:
    """Pairwise squared Euclidean distances (N, N), clipped at 0."""
    sq = (x * x).sum(1)
    return np.maximum(sq[:, None] + sq[None, :] - 2.0 * x @ x.T, 0.0)


def median_distance(d2: np.ndarray) -> float:
    """The median distance between distinct inputs (the kernel scale's unit)."""
    off = d2[np.triu_indices(d2.shape[0], 1)]
    med = float(np.sqrt(np.median(off)))
    if med <= 0:
        raise ValueError("kernel analysis: more than half of the input pairs are identical; the RBF scale is undefined")
    return med


def kpca(d2: np.ndarray, sigma: float, d_max: int) -> np.ndarray:
    """The top ``d_max`` eigenvectors (N, d_max) of the centred RBF kernel of width ``sigma``."""
    k = np.exp(-d2 / (2.0 * sigma**2))
    k = k - k.mean(0, keepdims=True) - k.mean(1, keepdims=True) + k.mean()
    n = k.shape[0]
    w, u = scipy.linalg.eigh(k, subset_by_index=[n - d_max, n - 1])  # only the components the curve uses
    return u[:, np.argsort(w)[::-1]]


def loo_curves(u: np.ndarray, codes: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Leave-one-out classification error and squared loss (per input, summed over classes) of the projection onto
    the first d columns of ``u`` plus an intercept, for every d = 1..u.shape[1]."""
    n = len(codes)
    y = np.eye(n_classes)[codes]
    mean = y.mean(0)
    coef = u.T @ (y - mean)                                    # (d, C)
    fitted = mean + np.cumsum(u[:, :, None] * coef[None], 1)  # (N, d, C): the fit with 1..d components
    h = 1.0 / n + np.cumsum(u**2, 1)                           # (N, d): leverages of the projection
    resid = (y[:, None, :] - fitted) / np.maximum(1.0 - h, 1e-9)[..., None]
    loo = y[:, None, :] - resid
    error = (loo.argmax(-1) != codes[:, None]).mean(0)
    squared = (resid**2).sum(-1).mean(0)
    return error, squared


def log_area(curve: np.ndarray) -> float:
    """The mean of ``curve`` (values at d = 1, 2, ...) over log d: trapezoids on a log axis over its log length
    (a curve of one point is its value)."""
    curve = np.asarray(curve, dtype=np.float64)
    if len(curve) == 1:
        return float(curve[0])
    logd = np.log(np.arange(1, len(curve) + 1))
    return float(np.sum((curve[1:] + curve[:-1]) / 2 * np.diff(logd)) / logd[-1])


def kernel_analysis_curve(x: Any, labels: Any, *, d_max: int | None = None, scales: Sequence[float] = SCALES,
                          loss: str = "error") -> dict[str, Any]:
    """The kernel-analysis curve of features ``x`` (N, D) for ``labels`` (N,).

    Args:
        d_max: largest number of components (default min(100, N/2)).
        scales: kernel widths tried, in units of the median pairwise distance; each d keeps the best.
        loss: what the curve is and sigma minimises: "error" (leave-one-out misclassification rate) or "squared"
            (leave-one-out squared error of the one-hot prediction).

    Returns:
        ``{"d": [1..d_max], "curve": e(d), "error": ..., "squared": ..., "sigma": chosen width per d,
        "area": the mean of the curve over log d (0 = perfect from d = 1 on), "median_distance": ...}``.
    """
    if loss not in LOSSES:
        raise ValueError(f"unknown loss {loss!r}; choose from {list(LOSSES)}")
    if not scales or any(s <= 0 for s in scales):
        raise ValueError(f"scales must be positive multiples of the median distance; got {list(scales)}")
    x, codes, d_max = _check(x, labels, d_max)
    d2 = sq_distances(x)
    med = median_distance(d2)
    n_classes = int(codes.max()) + 1
    per_scale = [loo_curves(kpca(d2, s * med, d_max), codes, n_classes) for s in scales]
    errors = np.array([e for e, _ in per_scale])      # (scales, d)
    squares = np.array([q for _, q in per_scale])
    # sigma per d by the reported loss; ties (common for the error on small N) go to the lower squared loss
    key = errors + 1e-6 * squares / (squares.max() + 1e-12) if loss == "error" else squares
    best = key.argmin(0)
    cols = np.arange(d_max)
    error, squared = errors[best, cols], squares[best, cols]
    curve = error if loss == "error" else squared
    return {"d": list(range(1, d_max + 1)), "curve": curve.tolist(), "error": error.tolist(),
            "squared": squared.tolist(), "sigma": [float(scales[b] * med) for b in best], "area": log_area(curve),
            "median_distance": med, "loss": loss, "n": int(len(codes)), "classes": n_classes}
