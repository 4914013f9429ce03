"""Linear factorisation of representations (Uselis et al. 2026, "Compositional Generalization Requires Linear,
Orthogonal Representations in Vision Embedding Models", arXiv 2602.24264).

§3-4 of the paper: compositional generalisation under standard training needs z(c_1..c_k) = sum_i u_i(c_i) (linear
factorisation) with the per-concept factors orthogonal across concepts; §5 measures, on embeddings with known
concepts,

- the **linear-factorisation R^2**: centre the embeddings (X_c = X - mean), take each concept value's mean of X_c as
  its factor u_i(c), rebuild every sample as sum_i u_i(c_i) and report 1 - SSE / SST (``r2``; also after whitening
  the embeddings, ``r2_whitened``);
- the **rank of each concept's factors**: the number of singular directions holding 95% of the variance of the
  value means (``k95``);
- the **orthogonality**: mean |cosine| between value means of different concepts (``cross_abs_cos``) against that
  within a concept (``same_abs_cos``).

These three follow our reading of the official analysis code (github.com/oshapio/necessary-compositionality,
``analyse_embeddings_probes.py``); the least-squares additive fit on one-hot concepts (``r2_lstsq``, which equals
``r2`` for balanced data) and the principal angles between the concepts' factor spans come from the catalog entry.
The correlation of these scores with held-out-combination accuracy across models is the claim (``reproduce.py``).
"""
from __future__ import annotations

from itertools import combinations
from typing import Any

import numpy as np


def check_inputs(x: Any, concepts: Any) -> tuple[np.ndarray, np.ndarray]:
    """(x (N, D) float64, concepts (N, k) int64), validated."""
    x = np.asarray(x, dtype=np.float64)
    c = np.asarray(concepts)
    if c.ndim == 1:
        c = c[:, None]
    if x.ndim != 2:
        raise ValueError(f"embeddings must be (N, D); got shape {x.shape}")
    if c.ndim != 2 or len(c) != len(x):
        raise ValueError(f"concept labels must be (N, k) with N = {len(x)} rows; got shape {c.shape}")
    if not np.isfinite(x).all():
        raise ValueError("the embeddings hold NaN/inf values; drop those samples first")
    if not np.issubdtype(c.dtype, np.integer) and not np.all(np.mod(c, 1) == 0):
        raise ValueError("concept labels must be integers (value indices 0..n_i - 1)")
    c = c.astype(np.int64)
    if c.min() < 0:
        raise ValueError("concept labels must be >= 0")
    if len(x) < 4:
        raise ValueError(f"linear factorisation needs at least 4 samples; got {len(x)}")
    for i in range(c.shape[1]):
        if len(np.unique(c[:, i])) < 2:
            raise ValueError(f"concept {i} takes a single value: every concept needs at least 2 values")
    return x, c


def value_means(xc: np.ndarray, c: np.ndarray) -> list[np.ndarray]:
    """Per concept i: (n_i, D) means of the centred embeddings per value (rows of absent values are zero)."""
    out = []
    for i in range(c.shape[1]):
        n = int(c[:, i].max()) + 1
        m = np.zeros((n, xc.shape[1]))
        for v in range(n):
            sel = c[:, i] == v
            if sel.any():
                m[v] = xc[sel].mean(0)
        out.append(m)
    return out


def _r2(xc: np.ndarray, fitted: np.ndarray) -> float:
    sst = float((xc ** 2).sum())
    return 1.0 - float(((xc - fitted) ** 2).sum()) / max(sst, 1e-300)


def linear_factorization(x: Any, concepts: Any) -> dict[str, Any]:
    """R^2 of the per-concept additive decomposition (value means of the centred data, summed), the same after
    whitening, and the least-squares additive fit's R^2."""
    x, c = check_inputs(x, concepts)
    xc = x - x.mean(0)
    means = value_means(xc, c)
    fitted = sum(m[c[:, i]] for i, m in enumerate(means))
    # whitening (the official code's second number): every principal direction scaled to unit variance
    _, s, vt = np.linalg.svd(xc, full_matrices=False)
    keep = s > 1e-8 * max(s.max(initial=0.0), 1e-300)
    w = vt[keep].T / (s[keep] / np.sqrt(max(len(x) - 1, 1)))
    xw, fw = xc @ w, fitted @ w
    # least squares on one-hot concepts (sum-to-zero coding)
    cols = [np.ones((len(x), 1))]
    for i in range(c.shape[1]):
        n = int(c[:, i].max()) + 1
        code = np.vstack([np.eye(n - 1), -np.ones((1, n - 1))])
        cols.append(code[c[:, i]])
    design = np.hstack(cols)
    coef, *_ = np.linalg.lstsq(design, x, rcond=None)
    return {"r2": _r2(xc, fitted), "r2_whitened": _r2(xw, fw), "r2_lstsq": _r2(xc, design @ coef - x.mean(0)),
            "means": means}


def k_at(s: np.ndarray, threshold: float = 0.95) -> int:
    """Number of singular directions holding ``threshold`` of the variance."""
    var = np.asarray(s, dtype=np.float64) ** 2
    if var.sum() <= 0:
        return 0
    return int(min(np.searchsorted(np.cumsum(var) / var.sum(), threshold - 1e-12) + 1, len(var)))


def _unit(m: np.ndarray) -> np.ndarray:
    return m / (np.linalg.norm(m, axis=1, keepdims=True) + 1e-9)


def factor_geometry(means: list[np.ndarray], counts: list[np.ndarray] | None = None) -> dict[str, Any]:
    """Per-concept factor rank (k95 of its value means, out of n_i - 1 possible) and cross-concept orthogonality:
    mean |cos| between value means across concepts vs within, and principal angles between the factor spans."""
    ms = [m[np.linalg.norm(m, axis=1) > 0] if counts is None else m[counts[i] > 0] for i, m in enumerate(means)]
    k95 = [k_at(np.linalg.svd(m, compute_uv=False)) if len(m) else 0 for m in ms]
    same = [np.abs(_unit(m) @ _unit(m).T)[~np.eye(len(m), dtype=bool)] for m in ms if len(m) > 1]
    cross, angles = [], {}
    for i, j in combinations(range(len(ms)), 2):
        cross.append(np.abs(_unit(ms[i]) @ _unit(ms[j]).T).ravel())
        qa, qb = _span(ms[i]), _span(ms[j])
        if qa.shape[1] and qb.shape[1]:
            sv = np.clip(np.linalg.svd(qa.T @ qb, compute_uv=False), 0, 1)
            angles[f"{i}-{j}"] = np.degrees(np.arccos(sv)).tolist()
    all_angles = [a for v in angles.values() for a in v]
    return {"k95": k95, "max_rank": [max(len(m) - 1, 0) for m in ms],
            "same_abs_cos": float(np.mean(np.concatenate(same))) if same else float("nan"),
            "cross_abs_cos": float(np.mean(np.concatenate(cross))) if cross else float("nan"),
            "principal_angles": angles, "min_angle": float(min(all_angles)) if all_angles else 90.0,
            "mean_angle": float(np.mean(all_angles)) if all_angles else 90.0}


def _span(m: np.ndarray) -> np.ndarray:
    u, s, _ = np.linalg.svd(m.T, full_matrices=False)
    return u[:, s > 1e-8 * max(s.max(initial=0.0), 1e-300)]


def analyse(x: Any, concepts: Any) -> dict[str, Any]:
    """Linear factorisation and factor geometry of embeddings ``x`` (N, D) with concept labels (N, k)."""
    x, c = check_inputs(x, concepts)
    lf = linear_factorization(x, c)
    counts = [np.bincount(c[:, i], minlength=len(m)) for i, m in enumerate(lf["means"])]
    geo = factor_geometry(lf["means"], counts)
    return {"n": len(x), "dim": x.shape[1], "n_concepts": c.shape[1], "r2": lf["r2"], "r2_whitened": lf["r2_whitened"],
            "r2_lstsq": lf["r2_lstsq"], **geo}


def rank_correlation(a: Any, b: Any) -> float:
    """Spearman correlation (average ranks for ties) of two equally long sequences."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if len(a) != len(b) or len(a) < 3:
        raise ValueError(f"a rank correlation needs two sequences of equal length >= 3; got {len(a)} and {len(b)}")

    def ranks(v: np.ndarray) -> np.ndarray:
        order = np.argsort(v, kind="mergesort")
        r = np.empty(len(v))
        r[order] = np.arange(len(v), dtype=np.float64)
        for val in np.unique(v):
            r[v == val] = r[v == val].mean()
        return r

    ra, rb = ranks(a), ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    den = np.sqrt((ra ** 2).sum() * (rb ** 2).sum())
    return float((ra * rb).sum() / den) if den > 0 else 0.0


__all__ = ["analyse", "linear_factorization", "factor_geometry", "value_means", "rank_correlation", "k_at",
           "check_inputs"]
