"""The three measurements of Li, Michaud, Baek, Engels, Sun & Tegmark (2024), "The Geometry of Concepts: Sparse
Autoencoder Feature Structure" (arXiv:2410.19750), in numpy.

* §3 "atom" scale (crystals): a quadruple (a, b, c, d) of points is an analogy a:b::c:d; its edges are
  ``u = b - a`` and ``v = d - c``. ``parallelogram`` quality is ``1 - |u - v| / (|u| + |v|)`` (1 for an exact
  parallelogram, 0 when the edges cancel), ``trapezoid`` quality is ``cos(u, v)`` (parallel edges of any lengths);
  both are NaN for a degenerate quadruple (zero edges).
  Distractor directions (word length in the paper) are projected out with linear discriminant analysis: the
  directions maximising the variance of the whole point cloud (``C_b``) relative to the pooled within-relation
  covariance of the edge vectors (``C_w``): the top-k generalised eigenvectors of ``C_b w = lambda (C_w + reg) w``.
* §4 "brain" scale (lobes): features are clustered twice, by co-occurrence (phi coefficient of firing in the same
  window) and by geometry (cosine similarity of decoder vectors), both with spectral clustering; the agreement is
  the adjusted mutual information (scikit-learn's, as in the paper), against shuffled positions.
* §5 "galaxy" scale: the eigenvalues of the point cloud's covariance fall as a power law ``lambda_i ~ i^slope``;
  the clustering entropy is the entropy of a Gaussian with the cloud's covariance minus the cloud's k-nearest-
  neighbour (Kozachenko-Leonenko) entropy, per dimension (0 for a Gaussian cloud, large for a clustered one).

The paper's text could not be read in this session: the measurements follow the abstract, the catalog entry and
the summary of §4 (spectral clustering of phi-coefficient and cosine affinities, AMI); the exact quality formulas,
the LDA's covariances, the power-law fit range and the entropy estimator are this plugin's reading of them.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import digamma, gammaln

from zoo.activations import check_matrix


def check_points(x: Any, what: str = "points", *, min_rows: int = 2) -> np.ndarray:
    """``x`` as a finite (n, D) float64 array with at least ``min_rows`` rows, or a ValueError naming the problem."""
    return check_matrix(x, what, min_samples=min_rows, vector=False)


def check_quads(quads: Any, n: int) -> np.ndarray:
    """Analogy quadruples as an (Q, 4) int array of row indices into ``n`` points."""
    q = np.asarray(quads)
    if q.ndim != 2 or q.shape[1] != 4 or len(q) == 0:
        raise ValueError(f"quads must be a non-empty (Q, 4) array of point indices (a, b, c, d); got shape {q.shape}")
    if not np.issubdtype(q.dtype, np.integer):
        raise ValueError("quads must hold integer point indices")
    if q.min() < 0 or q.max() >= n:
        raise ValueError(f"quads index points 0..{n - 1}; got indices {int(q.min())}..{int(q.max())}")
    return q.astype(np.int64)


# --------------------------------------------------------------------------------------------- §3 crystals
def quad_quality(points: Any, quads: Any, projection: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Per quadruple a:b::c:d, the parallelogram quality ``1 - |u - v| / (|u| + |v|)`` and the trapezoid quality
    ``cos(u, v)`` of its edges u = b - a, v = d - c, after ``points @ projection`` when a projection is given."""
    x = check_points(points)
    q = check_quads(quads, len(x))
    if projection is not None:
        x = x @ projection
    u, v = x[q[:, 1]] - x[q[:, 0]], x[q[:, 3]] - x[q[:, 2]]
    nu, nv = np.linalg.norm(u, axis=1), np.linalg.norm(v, axis=1)
    tiny = 1e-9 * max(float(np.abs(x).max()), 1e-300)  # an edge this short is no edge: quality undefined (NaN)
    with np.errstate(invalid="ignore", divide="ignore"):
        para = np.where(nu + nv > tiny, 1.0 - np.linalg.norm(u - v, axis=1) / (nu + nv), np.nan)
        trap = np.where((nu > tiny) & (nv > tiny), (u * v).sum(1) / (nu * nv), np.nan)
    return {"parallelogram": para, "trapezoid": trap}


def lda_projection(points: Any, pairs: Any, relations: Any, k: int, *, reg: float = 1e-2) -> np.ndarray:
    """§3's distractor removal: (D, k) directions maximising the cloud's variance over the within-relation variance
    of the edge vectors ``points[b] - points[a]`` of ``pairs`` (P, 2), grouped by ``relations`` (P,).

    ``C_b`` is the covariance of all points, ``C_w`` the pooled covariance of each relation's edges about that
    relation's mean edge, regularised by ``reg * trace(C_w) / D``; the columns are the top-k generalised
    eigenvectors, scaled so that ``W^T (C_w + reg) W = I`` (LDA's whitening).
    """
    x = check_points(points)
    p = np.asarray(pairs, dtype=np.int64)
    r = np.asarray(relations)
    if p.ndim != 2 or p.shape[1] != 2 or len(p) < 2:
        raise ValueError(f"pairs must be a (P >= 2, 2) array of point indices (a, b); got shape {p.shape}")
    if r.shape != (len(p),):
        raise ValueError(f"relations must hold one relation id per pair: shape ({len(p)},), got {r.shape}")
    d = x.shape[1]
    if not 1 <= int(k) <= d:
        raise ValueError(f"k (the LDA dimension) must be in 1..{d}; got {k}")
    e = x[p[:, 1]] - x[p[:, 0]]
    ec = np.empty_like(e)
    for g in np.unique(r):
        m = r == g
        ec[m] = e[m] - e[m].mean(0)
    cw = ec.T @ ec / max(len(e) - len(np.unique(r)), 1)
    cw += (reg * np.trace(cw) / d + 1e-12) * np.eye(d)
    xc = x - x.mean(0)
    cb = xc.T @ xc / max(len(x) - 1, 1)
    # generalised symmetric eigenproblem via the whitening of C_w
    ew, vw = np.linalg.eigh(cw)
    w_half = vw / np.sqrt(ew)
    ev, vb = np.linalg.eigh(w_half.T @ cb @ w_half)
    order = np.argsort(ev)[::-1][: int(k)]
    return w_half @ vb[:, order]


def random_projection(d: int, k: int, seed: int = 0) -> np.ndarray:
    """A (d, k) orthonormal projection onto a random k-dimensional subspace (the control for ``lda_projection``)."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, int(k))))
    return q


# ------------------------------------------------------------------------------------------------ §4 lobes
def phi_cooccurrence(active: Any) -> np.ndarray:
    """Phi coefficient between every pair of features from a boolean (windows, F) firing matrix (a feature fires in a
    window when it is active on any of its tokens). Features that always or never fire get phi 0."""
    a = np.asarray(active)
    if a.ndim != 2 or a.shape[0] < 2:
        raise ValueError(f"active must be a (windows >= 2, features) boolean array; got shape {a.shape}")
    a = a.astype(np.float64) > 0
    n = a.shape[0]
    a = a.astype(np.float64)
    p = a.mean(0)
    n11 = a.T @ a / n
    den = np.sqrt(np.outer(p * (1 - p), p * (1 - p)))
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = (n11 - np.outer(p, p)) / den
    phi[~np.isfinite(phi)] = 0.0
    np.fill_diagonal(phi, 1.0)
    return phi


def spectral_labels(affinity: np.ndarray, n_clusters: int, seed: int = 0) -> np.ndarray:
    """Spectral clustering of a symmetric affinity matrix (negative entries clipped to 0)."""
    from sklearn.cluster import SpectralClustering

    a = np.clip(np.asarray(affinity, dtype=np.float64), 0.0, None)
    a = (a + a.T) / 2 + 1e-6  # keep the graph connected
    if not 2 <= int(n_clusters) < len(a):
        raise ValueError(f"n_clusters must be in 2..{len(a) - 1} for {len(a)} features; got {n_clusters}")
    sc = SpectralClustering(int(n_clusters), affinity="precomputed", random_state=seed, assign_labels="kmeans")
    return sc.fit_predict(a)


def cosine_affinity(decoder: Any) -> np.ndarray:
    w = check_points(decoder, "decoder")
    u = w / np.maximum(np.linalg.norm(w, axis=1, keepdims=True), 1e-300)
    return u @ u.T


def spatial_modularity(decoder: Any, cooccurrence: Any, n_clusters: int, *, seed: int = 0,
                       n_shuffles: int = 10) -> dict[str, Any]:
    """§4: AMI between co-occurrence clusters (spectral on ``cooccurrence`` (F, F), e.g. phi) and geometric clusters
    (spectral on the decoder rows' cosine similarity), and the same AMI with the decoder rows shuffled among the
    features (random positions; mean over ``n_shuffles``)."""
    from sklearn.metrics import adjusted_mutual_info_score as ami

    w = check_points(decoder, "decoder", min_rows=3)
    c = np.asarray(cooccurrence, dtype=np.float64)
    if c.shape != (len(w), len(w)):
        raise ValueError(f"cooccurrence must be ({len(w)}, {len(w)}), one row and column per decoder row; "
                         f"got {c.shape}")
    if not np.isfinite(c).all():
        raise ValueError("cooccurrence holds NaN/inf values")
    lab_c = spectral_labels(c, n_clusters, seed)
    lab_g = spectral_labels(cosine_affinity(w), n_clusters, seed)
    rng = np.random.default_rng(seed + 1)
    shuffled = [ami(lab_c, spectral_labels(cosine_affinity(w[rng.permutation(len(w))]), n_clusters, seed))
                for _ in range(int(n_shuffles))]
    return {"ami": float(ami(lab_c, lab_g)), "ami_shuffled": float(np.mean(shuffled)),
            "ami_shuffled_std": float(np.std(shuffled)), "cooc_labels": lab_c, "geom_labels": lab_g}


# ----------------------------------------------------------------------------------------------- §5 galaxy
def eigen_spectrum(points: Any) -> np.ndarray:
    """Eigenvalues of the covariance of the point cloud, largest first."""
    x = check_points(points, min_rows=3)
    xc = x - x.mean(0)
    s = np.linalg.svd(xc, compute_uv=False)
    return s ** 2 / (len(x) - 1)


def power_law_slope(points: Any, *, lo: int = 1, hi: int | None = None) -> dict[str, Any]:
    """The least-squares slope of log eigenvalue against log rank over ranks ``lo..hi`` (1-based; default hi: half
    the non-zero eigenvalues, where finite-sample noise is small): ``lambda_i ~ i^slope`` (negative)."""
    ev = eigen_spectrum(points)
    ev = ev[ev > ev[0] * 1e-12]
    hi = max(lo + 2, len(ev) // 2) if hi is None else int(hi)
    if not 1 <= lo < hi <= len(ev) or hi - lo < 2:
        raise ValueError(f"power-law fit needs 1 <= lo < hi <= {len(ev)} (non-zero eigenvalues) with >= 3 ranks; "
                         f"got lo={lo}, hi={hi}")
    rank = np.arange(lo, hi + 1)
    y = np.log(ev[lo - 1: hi])
    slope, icpt = np.polyfit(np.log(rank), y, 1)
    resid = y - (slope * np.log(rank) + icpt)
    r2 = 1.0 - resid.var() / max(y.var(), 1e-300)
    return {"slope": float(slope), "r2": float(r2), "eigenvalues": ev, "lo": lo, "hi": hi}


def knn_entropy(points: Any, k: int = 5) -> float:
    """Kozachenko-Leonenko k-nearest-neighbour estimate of the differential entropy (nats) of a point cloud."""
    from scipy.spatial import cKDTree

    x = check_points(points, min_rows=int(k) + 2)
    n, d = x.shape
    dist, _ = cKDTree(x).query(x, k=int(k) + 1)
    eps = np.maximum(dist[:, -1], 1e-300)
    log_vd = d / 2 * np.log(np.pi) - gammaln(d / 2 + 1)
    return float(digamma(n) - digamma(int(k)) + log_vd + d * np.mean(np.log(eps)))


def clustering_entropy(points: Any, *, k: int = 5, dims: int | None = 10) -> dict[str, float]:
    """§5.2's clustering measure: Gaussian entropy with the cloud's covariance minus its kNN entropy, per dimension,
    on the top ``dims`` principal components (the kNN estimator is unreliable in many dimensions; None: all)."""
    x = check_points(points, min_rows=int(k) + 2)
    xc = x - x.mean(0)
    if dims is not None and dims < x.shape[1]:
        _, _, vt = np.linalg.svd(xc, full_matrices=False)
        xc = xc @ vt[: int(dims)].T
    d = xc.shape[1]
    cov = np.atleast_2d(np.cov(xc.T))
    sign, logdet = np.linalg.slogdet(cov)
    if sign <= 0:
        raise ValueError("the point cloud is degenerate (singular covariance): fewer dims= or more points needed")
    h_gauss = 0.5 * (d * np.log(2 * np.pi * np.e) + logdet)
    h_knn = knn_entropy(xc, k)
    return {"clustering_entropy": float((h_gauss - h_knn) / d), "h_gauss": float(h_gauss), "h_knn": h_knn,
            "dims": int(d)}
