"""Near-orthogonality tolerance and capacity (Guha 2026, "Representational Capacity: Geometric Limits on Feature
Representation in Transformer Language Models", arXiv:2606.02765).

Only the paper's abstract could be read here; the two formulas below are this plugin's reading of it:

- ``epsilon_estimate``: epsilon is "the boundary between meaningful token relationships and incidental similarity in the
  pairwise cosine similarity distribution". The incidental part is modelled as a Gaussian fitted robustly (median and
  MAD) to the off-diagonal cosines; epsilon is the largest |cosine| that Gaussian explains among the P pairs, i.e. its
  centre plus ``z * sigma`` with ``z`` the standard normal quantile at ``1 - 1 / (2 P)``. Pairs beyond it are the
  meaningful ones. Random Gaussian rows give sigma = 1/sqrt(d); orthonormal rows give sigma = 0 and epsilon = 0.
- ``capacity``: the JL count of epsilon-orthogonal directions in d dimensions solves ``d = C ln(k) / eps^2``, so
  ``k_JL = exp(d eps^2 / C)``; the adjusted formula makes the count depend on k/d instead of k, ``d = C ln(k/d) / eps^2``,
  so ``k_adj = d exp(d eps^2 / C)`` (no further parameter). ``C = 4`` by default: the union bound for random unit
  vectors, P(|cos| > eps) <= 2 exp(-d eps^2 / 2) over k^2 / 2 pairs.
- ``greedy_packing``: an empirical count of unit vectors in R^d with every pairwise |cosine| <= eps: an orthonormal
  basis first (d vectors, cosine 0), then random directions accepted greedily until a batch of candidates is accepted at
  a rate below ``stop_rate`` (the chance that a further random direction fits).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

DEFAULT_C = 4.0


def _unit_rows(e: np.ndarray, name: str = "E") -> np.ndarray:
    e = np.asarray(e, dtype=np.float64)
    if e.ndim != 2:
        raise ValueError(f"{name} has shape {e.shape}: epsilon_estimate needs a (V, d) matrix of V vectors")
    if e.shape[0] < 3:
        raise ValueError(f"{name} has {e.shape[0]} rows: the cosine distribution needs at least 3 vectors")
    if not np.isfinite(e).all():
        raise ValueError(f"{name} holds NaN/inf values; drop those rows before measuring")
    norms = np.linalg.norm(e, axis=1)
    if (norms == 0).any():
        raise ValueError(f"{name} has {int((norms == 0).sum())} all-zero rows: a cosine needs nonzero vectors")
    return e / norms[:, None]


def pairwise_cosines(e: np.ndarray) -> np.ndarray:
    """The V (V - 1) / 2 off-diagonal cosine similarities of the rows of ``e``."""
    u = _unit_rows(e)
    g = u @ u.T
    return g[np.triu_indices(len(u), 1)]


def _norm_ppf(p: float) -> float:
    """Standard normal quantile by bisection on erf (scipy-free)."""
    lo, hi = -40.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def epsilon_estimate(e: np.ndarray) -> dict[str, Any]:
    """Epsilon (the accepted deviation from orthogonality) of the rows of ``e`` (V, d), from the pairwise cosines.

    Returns ``eps``, the cosine distribution's ``mean``, ``std``, robust ``center`` and ``sigma`` (median, 1.4826 MAD),
    ``random_sigma`` = 1/sqrt(d) (what random directions would give), the ``z`` used, and ``meaningful_fraction`` (pairs
    with |cos - center| > eps - |center|)."""
    cos = pairwise_cosines(e)
    p = cos.size
    center = float(np.median(cos))
    sigma = float(1.4826 * np.median(np.abs(cos - center)))
    z = _norm_ppf(1 - 1 / (2 * p))
    eps = abs(center) + z * sigma
    d = int(np.asarray(e).shape[1])
    return {"eps": float(eps), "mean": float(cos.mean()), "std": float(cos.std()), "center": center, "sigma": sigma,
            "random_sigma": 1 / math.sqrt(d), "z": float(z), "pairs": int(p), "d": d,
            "meaningful_fraction": float(np.mean(np.abs(cos - center) > z * sigma)) if sigma > 0 else 0.0,
            "max_abs_cos": float(np.abs(cos).max())}


def capacity(d: int, eps: float, *, c: float = DEFAULT_C, k: float | None = None) -> dict[str, float]:
    """Capacity (number of eps-orthogonal directions) in ``d`` dimensions: plain JL ``exp(d eps^2 / c)`` and the
    k/d-adjusted ``d exp(d eps^2 / c)``, with their natural logs; with ``k`` vectors given, also the dimension each
    formula says ``k`` of them need (``c ln k / eps^2`` and ``c ln(k/d) / eps^2``)."""
    if d < 1 or not (0 < eps <= 1) or c <= 0:
        raise ValueError(f"capacity needs d >= 1, 0 < eps <= 1 and c > 0 (got d={d}, eps={eps}, c={c})")
    log_jl = d * eps**2 / c
    out = {"d": float(d), "eps": float(eps), "c": float(c), "log_jl": log_jl, "log_adjusted": log_jl + math.log(d),
           "jl": math.exp(min(log_jl, 700.0)), "adjusted": math.exp(min(log_jl + math.log(d), 700.0))}
    if k is not None:
        out["dim_needed_jl"] = c * math.log(k) / eps**2
        out["dim_needed_adjusted"] = c * max(math.log(k / d), 0.0) / eps**2
    return out


def greedy_packing(d: int, eps: float, *, seed: int = 0, batch: int = 256, stop_rate: float = 0.01,
                   max_vectors: int = 20000) -> int:
    """How many unit vectors in R^d with every pairwise |cosine| <= ``eps`` the greedy packing finds (see module)."""
    if d < 1 or not (0 < eps < 1):
        raise ValueError(f"greedy_packing needs d >= 1 and 0 < eps < 1 (got d={d}, eps={eps})")
    rng = np.random.default_rng(seed)
    kept = np.zeros((max_vectors + batch, d))
    kept[:d] = np.eye(d)
    n = d
    while n < max_vectors:
        cand = rng.standard_normal((batch, d))
        cand /= np.linalg.norm(cand, axis=1, keepdims=True)
        ok = np.abs(cand @ kept[:n].T).max(axis=1) <= eps
        accepted = 0
        for v in cand[ok]:
            if accepted and np.abs(kept[n - accepted:n] @ v).max() > eps:
                continue  # clashes with one accepted from this same batch
            kept[n] = v
            n += 1
            accepted += 1
        if accepted < stop_rate * batch:
            break
    return int(min(n, max_vectors))
