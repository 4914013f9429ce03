"""Similarity of two representations of the same N inputs: CKA, CCA and RSA (numpy only, torch-free).

Every function takes (N, D) arrays whose rows are the same inputs in the same order (features may differ,
D_x != D_y is fine) and validates them: 2-D, finite, the same N, at least the samples the statistic needs; the
error says which requirement failed.

- ``linear_cka`` (Kornblith et al. 2019): HSIC(K, L) / sqrt(HSIC(K, K) HSIC(L, L)) with linear kernels, computed
  from feature covariances; ``debiased=True`` uses the unbiased HSIC estimator (Song et al. 2012, as used for CKA
  by Nguyen et al. 2021), which removes the upward bias of CKA when D is large compared to N.
- ``rbf_cka``: the same with Gaussian kernels, bandwidth ``sigma_frac`` times the median pairwise distance.
- ``cca_similarity``: mean canonical correlation; with ``k`` both sides are first reduced to their top ``k``
  principal components (SVCCA, Raghu et al. 2017).
- ``rdm`` / ``rsa``: representational dissimilarity matrices and their rank (or linear) correlation over the upper
  triangle (Kriegeskorte et al. 2008).

>>> import numpy as np
>>> x = np.random.default_rng(0).normal(size=(50, 8))
>>> round(linear_cka(x, 3 * x), 6), round(rsa(x, x), 6)
(1.0, 1.0)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zoo.activations import check_matrix

__all__ = ["linear_cka", "rbf_cka", "cca_similarity", "rdm", "rsa", "check_pair", "check_matrix"]

_EPS = 1e-12


def check_pair(x: Any, y: Any, *, min_samples: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """Both checked by ``check_matrix`` and holding the same N inputs."""
    a = check_matrix(x, "X", min_samples=min_samples)
    b = check_matrix(y, "Y", min_samples=min_samples)
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"X has {a.shape[0]} samples and Y has {b.shape[0]}: both must hold the same inputs "
                         "(rows) in the same order")
    return a, b


def _center(x: np.ndarray) -> np.ndarray:
    return x - x.mean(axis=0, keepdims=True)


def _hsic_unbiased(k: np.ndarray, m: np.ndarray) -> float:
    """The unbiased HSIC estimator of Song et al. (2012) for Gram matrices with zeroed diagonals."""
    n = k.shape[0]
    k = k.copy()
    m = m.copy()
    np.fill_diagonal(k, 0.0)
    np.fill_diagonal(m, 0.0)
    ones_k = k.sum(axis=0)
    ones_m = m.sum(axis=0)
    term = (k * m).sum() + ones_k.sum() * ones_m.sum() / ((n - 1) * (n - 2)) - 2.0 * ones_k @ ones_m / (n - 2)
    return float(term / (n * (n - 3)))


def _cka_from_grams(k: np.ndarray, m: np.ndarray, debiased: bool) -> float:
    if debiased:
        kk, mm, km = _hsic_unbiased(k, k), _hsic_unbiased(m, m), _hsic_unbiased(k, m)
    else:
        h = np.eye(k.shape[0]) - 1.0 / k.shape[0]
        kc, mc = h @ k @ h, h @ m @ h
        kk, mm, km = (kc * kc).sum(), (mc * mc).sum(), (kc * mc).sum()
    if kk <= _EPS or mm <= _EPS:
        raise ValueError("a representation is constant across the inputs (zero variance): CKA is undefined")
    return float(km / np.sqrt(kk * mm))


def linear_cka(x: Any, y: Any, *, debiased: bool = False) -> float:
    """Linear CKA in [0, 1] (debiased: may be slightly negative near 0). Needs N >= 2 (N >= 4 when debiased).

    Invariant to orthogonal transforms and isotropic scaling of either side, not to arbitrary invertible linear maps.
    """
    a, b = check_pair(x, y, min_samples=4 if debiased else 2)
    a, b = _center(a), _center(b)
    if debiased:
        return _cka_from_grams(a @ a.T, b @ b.T, True)
    # ||Y^T X||_F^2 / (||X^T X||_F ||Y^T Y||_F): feature-space form, cheap when D << N
    num = np.linalg.norm(b.T @ a) ** 2
    den = np.linalg.norm(a.T @ a) * np.linalg.norm(b.T @ b)
    if den <= _EPS:
        raise ValueError("a representation is constant across the inputs (zero variance): CKA is undefined")
    return float(num / den)


def _rbf_gram(x: np.ndarray, sigma_frac: float) -> np.ndarray:
    sq = (x * x).sum(axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * x @ x.T, 0.0)
    med = np.median(np.sqrt(d2[np.triu_indices(x.shape[0], 1)]))
    if med <= _EPS:
        raise ValueError("a representation is constant across the inputs (median distance 0): RBF CKA is undefined")
    return np.exp(-d2 / (2.0 * (sigma_frac * med) ** 2))


def rbf_cka(x: Any, y: Any, sigma_frac: float = 0.5, *, debiased: bool = False) -> float:
    """CKA with Gaussian kernels of bandwidth ``sigma_frac`` x the median pairwise distance (Kornblith et al. 2019).
    Needs N >= 3 (N >= 4 when debiased)."""
    if not sigma_frac > 0:
        raise ValueError(f"sigma_frac must be > 0, got {sigma_frac}")
    a, b = check_pair(x, y, min_samples=4 if debiased else 3)
    return _cka_from_grams(_rbf_gram(a, sigma_frac), _rbf_gram(b, sigma_frac), debiased)


def _whiten_basis(x: np.ndarray, what: str, tol: float = 1e-10) -> np.ndarray:
    """An orthonormal basis (N, r) of the centred column space of ``x``, dropping directions without variance."""
    u, s, _ = np.linalg.svd(x, full_matrices=False)
    keep = s > tol * max(s[0], _EPS) if s.size else np.zeros(0, bool)
    if not keep.any():
        raise ValueError(f"{what} is constant across the inputs (zero variance): CCA is undefined")
    return u[:, keep]


def _pca(x: np.ndarray, k: int) -> np.ndarray:
    u, s, _ = np.linalg.svd(x, full_matrices=False)
    return u[:, :k] * s[:k]


def cca_canonical_correlations(x: Any, y: Any, k: int | None = None) -> np.ndarray:
    """The canonical correlations (descending) of X and Y; with ``k``, after reducing each to its top-k principal
    components (SVCCA). Needs more samples than the number of canonical directions (N > min(rank X, rank Y))."""
    a, b = check_pair(x, y, min_samples=3)
    a, b = _center(a), _center(b)
    if k is not None:
        if int(k) < 1:
            raise ValueError(f"k must be >= 1 principal components, got {k}")
        a, b = _pca(a, int(k)), _pca(b, int(k))
    qa, qb = _whiten_basis(a, "X"), _whiten_basis(b, "Y")
    n = a.shape[0]
    dims = min(qa.shape[1], qb.shape[1])
    if dims >= n - 1:
        raise ValueError(f"CCA of {dims} directions needs more than {dims + 1} samples (got N={n}); with fewer, "
                         "every correlation is 1 by construction: use more inputs or pass k= (SVCCA) to reduce D")
    rho = np.linalg.svd(qa.T @ qb, compute_uv=False)[:dims]
    return np.clip(rho, 0.0, 1.0)


def cca_similarity(x: Any, y: Any, k: int | None = None) -> float:
    """Mean canonical correlation in [0, 1] (SVCCA with ``k`` principal components first when given)."""
    return float(cca_canonical_correlations(x, y, k).mean())


def rdm(x: Any, metric: str = "correlation") -> np.ndarray:
    """The (N, N) representational dissimilarity matrix: 1 - Pearson correlation between input patterns
    ("correlation", needs D >= 2 and no constant row) or Euclidean distance ("euclidean"). Needs N >= 3."""
    a = check_matrix(x, "X", min_samples=3)
    if metric == "correlation":
        if a.shape[1] < 2:
            raise ValueError("the correlation RDM needs at least 2 features per input (D >= 2); use metric='euclidean'")
        c = a - a.mean(axis=1, keepdims=True)
        norm = np.linalg.norm(c, axis=1)
        if (norm <= _EPS).any():
            raise ValueError(f"{int((norm <= _EPS).sum())} inputs have a constant pattern across features: their "
                             "correlation is undefined; use metric='euclidean'")
        c = c / norm[:, None]
        d = 1.0 - c @ c.T
    elif metric == "euclidean":
        sq = (a * a).sum(axis=1)
        d = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2.0 * a @ a.T, 0.0))
    else:
        raise ValueError(f"unknown RDM metric {metric!r}; choose 'correlation' or 'euclidean'")
    np.fill_diagonal(d, 0.0)
    return (d + d.T) / 2.0


def _rank(v: np.ndarray) -> np.ndarray:
    """Average ranks (ties share their mean rank), as Spearman's correlation needs (vectorised)."""
    order = np.argsort(v, kind="mergesort")
    sv = v[order]
    new = np.concatenate([[True], sv[1:] != sv[:-1]])
    starts = np.flatnonzero(new)
    counts = np.diff(np.concatenate([starts, [len(v)]]))
    ranks = np.empty(len(v), dtype=np.float64)
    ranks[order] = (starts + (counts - 1) / 2.0)[np.cumsum(new) - 1]
    return ranks


def _pearson(a: np.ndarray, b: np.ndarray) -> float:
    a = a - a.mean()
    b = b - b.mean()
    den = np.sqrt((a * a).sum() * (b * b).sum())
    if den <= _EPS:
        raise ValueError("an RDM is constant over its upper triangle (all inputs equally dissimilar): RSA is undefined")
    return float((a * b).sum() / den)


def rsa(x: Any, y: Any, method: str = "spearman", *, metric: str = "correlation") -> float:
    """Correlation between the upper triangles of the RDMs of X and Y ("spearman" or "pearson"); X and Y may be
    (N, D) representations or (N, N) RDMs already (pass ``metric="precomputed"``). Needs N >= 3."""
    if method not in ("spearman", "pearson"):
        raise ValueError(f"unknown RSA method {method!r}; choose 'spearman' or 'pearson'")
    if metric == "precomputed":
        a, b = check_pair(x, y, min_samples=3)
        for what, m in (("X", a), ("Y", b)):
            if m.shape[0] != m.shape[1]:
                raise ValueError(f"{what} has shape {m.shape}; a precomputed RDM is square (N, N)")
    else:
        check_pair(x, y, min_samples=3)
        a, b = rdm(x, metric), rdm(y, metric)
    iu = np.triu_indices(a.shape[0], 1)
    u, v = a[iu], b[iu]
    if method == "spearman":
        u, v = _rank(u), _rank(v)
    return _pearson(u, v)
