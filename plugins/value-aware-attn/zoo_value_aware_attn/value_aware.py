"""Value-aware approximate attention (Gupta and Berant 2021, arXiv 2103.09857): how much better an r-sparse
approximation of attention gets when it is chosen for the attention OUTPUT rather than for the attention WEIGHTS.

For one query row ``a`` (a distribution over the ``n`` visible keys) and values ``V (n, d)``, the output is ``a V``.

* value-oblivious optimum (Sec. 3 of the paper): the r-sparse ``a~`` closest to ``a`` itself, which keeps the ``r``
  largest weights; sparse attention then renormalises them to sum to one (``renormalise=True``, what a top-r
  attention computes) or keeps them as they are (the exact minimiser of ``||a - a~||``; ``renormalise=False``).
* value-aware optimum: the r-sparse ``a~`` minimising ``||a V - a~ V||`` (any real weights on ``r`` keys): a sparse
  regression of the target ``a V`` on the rows of ``V``. It is solved exactly by enumerating every support when
  there are at most ``exhaustive_limit`` of them, and otherwise by the best of three candidate supports, each refined
  by single swaps until no swap helps: the top-r support, orthogonal matching pursuit's, and the support of the
  largest ``|a_j| ||v_j||``. Because the top-r support with least-squares weights is among the candidates, the
  value-aware error is never above the value-oblivious one (both variants).

Kernels (row-normalised, causal or not): ``softmax`` at temperature ``tau`` (``exp(q.k / (tau sqrt(d)))``; higher
``tau`` is less skewed), ``relu`` (``max(q.k, 0)``) and ``quadratic`` (``(q.k)^2``), the polynomial kernel.
The reported error of a set of rows is ``sqrt(sum ||(a - a~) V||^2 / sum ||a V||^2)`` (relative to the output).

What comes from where: the objective, the two optima and the claim (value-aware beats value-oblivious, more so for
less skewed kernels) from the abstract and catalog entry; the paper's own solver and its exact kernel list were not
readable here, so the solver above (exact for small supports, swap-refined otherwise) and the kernels are ours.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from math import comb
from typing import Any

import numpy as np

KERNELS = ("softmax", "relu", "quadratic")


def attention_weights(q: np.ndarray, k: np.ndarray, kernel: str = "softmax", temperature: float = 1.0,
                      causal: bool = True) -> np.ndarray:
    """Row-normalised attention ``A (..., T, T)`` of ``q, k (..., T, d)`` under ``kernel``.

    >>> a = attention_weights(np.ones((1, 3, 2)), np.ones((1, 3, 2)))
    >>> a[0].round(3).tolist()
    [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.333, 0.333, 0.333]]
    """
    scores = q @ np.swapaxes(k, -1, -2)
    t = scores.shape[-1]
    mask = np.tril(np.ones((t, t), dtype=bool)) if causal else np.ones((t, t), dtype=bool)
    if kernel == "softmax":
        s = scores / (temperature * np.sqrt(q.shape[-1]))
        s = np.where(mask, s, -np.inf)
        w = np.exp(s - s.max(-1, keepdims=True))
    elif kernel == "relu":
        w = np.where(mask, np.maximum(scores, 0.0), 0.0)
    elif kernel == "quadratic":
        w = np.where(mask, scores ** 2, 0.0)
    else:
        raise ValueError(f"unknown kernel {kernel!r}; choose from {KERNELS}")
    total = w.sum(-1, keepdims=True)
    return np.divide(w, total, out=np.zeros_like(w), where=total > 0)  # an all-zero relu row attends nowhere


def _top_support(a: np.ndarray, r: int) -> np.ndarray:
    return np.argsort(-a, axis=-1, kind="stable")[..., :r]  # ties to the earlier key, the same everywhere


def top_r(a: np.ndarray, r: int, renormalise: bool = True) -> np.ndarray:
    """The value-oblivious r-sparse approximation of each row of ``a``: its ``r`` largest weights (renormalised to the
    row's sum when ``renormalise``).

    >>> top_r(np.array([0.5, 0.3, 0.2]), 2).round(3).tolist(), top_r(np.array([0.5, 0.3, 0.2]), 2, False).tolist()
    ([0.625, 0.375, 0.0], [0.5, 0.3, 0.0])
    """
    if r >= a.shape[-1]:
        return a.copy()
    out = np.zeros_like(a)
    idx = _top_support(a, r)
    np.put_along_axis(out, idx, np.take_along_axis(a, idx, -1), -1)
    if renormalise:
        kept, total = out.sum(-1, keepdims=True), a.sum(-1, keepdims=True)
        out = np.divide(out * total, kept, out=np.zeros_like(out), where=kept > 0)
    return out


class _Regression:
    """Least squares of ``y`` on subsets of the rows of ``vs``, many supports at once (normal equations)."""

    def __init__(self, vs: np.ndarray, y: np.ndarray) -> None:
        self.gram, self.b, self.yy = vs @ vs.T, vs @ y, float(y @ y)
        self.ridge = 1e-10 * (np.trace(self.gram) / max(len(vs), 1) + 1e-30)  # keeps repeated values solvable

    def fit(self, supports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(squared residuals (m,), weights (m, r))`` for ``supports (m, r)``."""
        g = self.gram[supports[:, :, None], supports[:, None, :]]
        b = self.b[supports]
        w = np.linalg.solve(g + self.ridge * np.eye(supports.shape[1]), b[..., None])[..., 0]
        res = self.yy - 2 * (w * b).sum(-1) + np.einsum("mi,mij,mj->m", w, g, w)
        return np.maximum(res, 0.0), w


def _omp(reg: _Regression, vs: np.ndarray, y: np.ndarray, r: int) -> list[int]:
    support: list[int] = []
    res = y.copy()
    norms = np.linalg.norm(vs, axis=1) + 1e-12
    for _ in range(r):
        score = np.abs(vs @ res) / norms
        score[support] = -1.0
        support.append(int(score.argmax()))
        _, w = reg.fit(np.array([support]))
        res = y - w[0] @ vs[support]
    return support


def _swap(reg: _Regression, support: list[int], n: int, max_rounds: int = 50) -> tuple[float, list[int]]:
    """Single-swap local search from ``support``: replace one member by an outside key while that lowers the error."""
    best = float(reg.fit(np.array([support]))[0][0])
    for _ in range(max_rounds):
        outside = [j for j in range(n) if j not in support]
        trials = np.array([support[:i] + [j] + support[i + 1:] for i in range(len(support)) for j in outside])
        if not len(trials):
            break
        err, _ = reg.fit(trials)
        k = int(err.argmin())
        if err[k] >= best - 1e-12 * max(1.0, best):
            break
        best, support = float(err[k]), [int(x) for x in trials[k]]
    return best, support


def value_aware_row(a: np.ndarray, vs: np.ndarray, r: int, exhaustive_limit: int = 3000) -> tuple[np.ndarray, bool]:
    """The value-aware r-sparse approximation of one row ``a (n,)`` for values ``vs (n, d)``; returns ``(a~, exact)``
    (``exact``: every support was tried).

    >>> vs = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> approx, exact = value_aware_row(np.array([0.5, 0.5, 0.0]), vs, 1)   # a V = (0.5, 0.5) = 0.5 * v_3
    >>> approx.round(3).tolist(), exact
    ([0.0, 0.0, 0.5], True)
    """
    n = a.shape[0]
    if r >= n:
        return a.copy(), True
    y = a @ vs
    reg = _Regression(vs, y)
    if comb(n, r) <= exhaustive_limit:
        supports = np.array(list(combinations(range(n), r)))
        err, w = reg.fit(supports)
        k = int(err.argmin())
        support, weights, exact = supports[k], w[k], True
    else:
        starts = [[int(i) for i in _top_support(a, r)], _omp(reg, vs, y, r),
                  [int(i) for i in np.argsort(-np.abs(a) * np.linalg.norm(vs, axis=1), kind="stable")[:r]]]
        _, best = min(_swap(reg, s, n) for s in starts)
        support, weights, exact = np.array(best), reg.fit(np.array([best]))[1][0], False
    out = np.zeros_like(a)
    out[support] = weights
    # the value-oblivious approximations are r-sparse too: the optimum over all r-sparse rows is never worse
    for cand in (top_r(a, r, True), top_r(a, r, False)):
        if np.sum((y - cand @ vs) ** 2) < np.sum((y - out @ vs) ** 2):
            out = cand
    return out, exact


def sparse_errors(a: np.ndarray, v: np.ndarray, r: int, *, causal: bool = True,
                  exhaustive_limit: int = 3000) -> dict[str, float]:
    """Relative output errors of the r-sparse approximations of every row of ``a (N, T, T)`` with values ``v (N, T, d)``:
    ``oblivious`` (top-r renormalised), ``oblivious_raw`` (top-r as is), ``aware`` and ``exact_fraction`` (rows solved
    by enumeration)."""
    sq = {"oblivious": 0.0, "oblivious_raw": 0.0, "aware": 0.0}
    total, exact, rows = 0.0, 0, 0
    for i in range(a.shape[0]):
        for t in range(a.shape[1]):
            n = t + 1 if causal else a.shape[2]
            row, vs = a[i, t, :n], v[i, :n]
            y = row @ vs
            total += float(y @ y)
            for key, approx in (("oblivious", top_r(row, r, True)), ("oblivious_raw", top_r(row, r, False))):
                e = y - approx @ vs
                sq[key] += float(e @ e)
            approx, ok = value_aware_row(row, vs, r, exhaustive_limit)
            e = y - approx @ vs
            sq["aware"] += float(e @ e)
            exact, rows = exact + ok, rows + 1
    scale = max(total, 1e-300)
    out = {k: float(np.sqrt(s / scale)) for k, s in sq.items()}
    out["exact_fraction"] = exact / max(rows, 1)
    return out


def _kernel_list(kernels: Sequence[str], temperatures: Sequence[float]) -> list[tuple[str, str, float]]:
    out = []
    for kern in kernels:
        if kern == "softmax":
            out += [(f"softmax@{t:g}", "softmax", float(t)) for t in temperatures]
        elif kern in KERNELS:
            out.append((kern, kern, 1.0))
        else:
            raise ValueError(f"unknown kernel {kern!r}; choose from {KERNELS}")
    return out


def compare(q: Any, k: Any, v: Any, *, r: Sequence[int] = (2, 4, 8), kernels: Sequence[str] = KERNELS,
            temperatures: Sequence[float] = (0.5, 1.0, 2.0, 4.0), causal: bool = True,
            exhaustive_limit: int = 3000) -> dict[str, dict[str, float]]:
    """Value-oblivious vs value-aware r-sparse errors for ``q, k, v`` of shape ``(B, H, T, d)`` (or ``(N, T, d)``),
    per kernel (``softmax@tau`` for each temperature) and ``r``: ``{"<kernel>/r=<r>": {"oblivious", "oblivious_raw",
    "aware", "ratio" (aware / oblivious), "exact_fraction"}}``.

    >>> rng = np.random.default_rng(0)
    >>> q, k, v = (rng.standard_normal((1, 1, 6, 4)) for _ in range(3))
    >>> res = compare(q, k, v, r=(2,), kernels=("softmax",), temperatures=(1.0,))
    >>> res["softmax@1/r=2"]["aware"] <= res["softmax@1/r=2"]["oblivious"]
    True
    """
    arrays = []
    for name, x in (("q", q), ("k", k), ("v", v)):
        x = np.asarray(x.detach().cpu() if hasattr(x, "detach") else x, dtype=np.float64)
        if x.ndim == 4:
            x = x.reshape(-1, *x.shape[2:])
        if x.ndim != 3:
            raise ValueError(f"{name} has shape {x.shape}; expected (B, H, T, d) or (N, T, d)")
        arrays.append(x)
    q, k, v = arrays
    if q.shape != k.shape or q.shape[:2] != v.shape[:2]:
        raise ValueError(f"q {q.shape}, k {k.shape} and v {v.shape} must share (N, T) (and q, k their d)")
    out: dict[str, dict[str, float]] = {}
    for label, kern, tau in _kernel_list(kernels, temperatures):
        a = attention_weights(q, k, kern, tau, causal)
        for rr in r:
            if rr < 1:
                raise ValueError(f"r must be >= 1, got {rr}")
            res = sparse_errors(a, v, rr, causal=causal, exhaustive_limit=exhaustive_limit)
            res["ratio"] = res["aware"] / res["oblivious"] if res["oblivious"] > 0 else float("nan")
            out[f"{label}/r={rr}"] = res
    return out
