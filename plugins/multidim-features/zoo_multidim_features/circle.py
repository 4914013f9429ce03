"""Circle fits and irreducibility measures of multi-dimensional features (numpy only).

Engels et al. 2024, "Not All Language Model Features Are One-Dimensionally Linear" (arXiv 2405.14860):

* §3 (definitions 2-3, as this plugin reads them): a feature f (here: a 2-D projection) is reducible when it is
  *separable* (a rotation splits it into independent parts a, b) or a *mixture* (most of its mass lies on a lower-
  dimensional feature). The **separability index** is ``S(f) = min over rotations of I(a; b)`` (mutual information,
  histogram estimate, nats) and the **epsilon-mixture index** is ``M_eps(f) = max over v, c of P(|v.f + c| < eps)``
  subject to ``E[(v.f + c)^2] = 1``. An irreducible feature has high S and low M (a circle: S high, M low; two
  independent Gaussians: S near 0; half the points on each of two axes: M near 1/2). M is scale-free, so a noisy line
  scores low too: a line is told apart by the plane's ``aspect`` near 0 in ``circle_fit``. The indices' exact form is
  this plugin's reading (only the abstract and the catalog entry were available).
* §5 (circles for weekday / month arithmetic): the hidden states of day (month) inputs, averaged per class, lie on a
  circle in the top-2 PCA plane ordered by the class index; ``circle_fit`` measures that (plane variance, the angles'
  agreement with ``phi + s * m * 2 pi k / P``, radius spread), and ``rotate_in_plane`` is the rotation used by the
  intervention (``intervene.py``).

The circularity score (mean resultant length of the angle residuals, maximised over the winding m and orientation s),
the permuted-label null and the rotation intervention are this plugin's operationalisation; the paper's own
intervention patches the circle subspace with a target point (from the abstract and catalog entry; the paper's code
was not read).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from zoo.activations import check_matrix


def _check_points(x: Any, what: str = "x", min_rows: int = 3) -> np.ndarray:
    return check_matrix(x, what, min_samples=min_rows, vector=False)


def class_means(x: Any, labels: Any, period: int | None = None) -> tuple[np.ndarray, int]:
    """Per-class means (P, D) of integer labels 0..P-1 (``period`` P; default max label + 1); every class needs a point."""
    x = _check_points(x)
    lab = np.asarray(labels)
    if lab.shape != (x.shape[0],):
        raise ValueError(f"labels has shape {lab.shape}, expected ({x.shape[0]},): one integer label per point")
    if not np.issubdtype(lab.dtype, np.integer):
        if not np.all(np.mod(lab, 1) == 0):
            raise ValueError("labels must be integers 0..P-1 (the position on the cycle: weekday, month, ...)")
        lab = lab.astype(np.int64)
    p = int(lab.max()) + 1 if period is None else int(period)
    if p < 3:
        raise ValueError(f"a circle needs a period of at least 3 classes, got {p}")
    if lab.min() < 0 or lab.max() >= p:
        raise ValueError(f"labels must lie in 0..{p - 1} (period {p}); got {int(lab.min())}..{int(lab.max())}")
    missing = [k for k in range(p) if not (lab == k).any()]
    if missing:
        raise ValueError(f"classes {missing} have no points; every class 0..{p - 1} needs at least one")
    return np.stack([x[lab == k].mean(0) for k in range(p)]), p


def circularity(angles: np.ndarray, period: int | None = None) -> dict[str, float]:
    """How well angles theta_k (k = 0..P-1) follow ``phi + s * m * 2 pi k / P``: the largest mean resultant length
    ``|mean_k exp(i (theta_k - s m 2 pi k / P))|`` over windings m = 1..P//2 and orientations s = +-1 (1: a regular
    ordered P-gon; about 1/sqrt(P) for random angles). Returns circularity, winding, sign, phase and step (s m 2 pi / P,
    the angle that moves class k to k + 1)."""
    th = np.asarray(angles, dtype=np.float64)
    p = len(th) if period is None else int(period)
    k = np.arange(p)
    best = (-1.0, 1, 1, 0.0)
    for m in range(1, p // 2 + 1):
        for s in (1, -1):
            z = np.exp(1j * (th - s * m * 2 * np.pi * k / p)).mean()
            if abs(z) > best[0] + 1e-12:
                best = (float(abs(z)), m, s, float(np.angle(z)))
    r, m, s, phi = best
    return {"circularity": r, "winding": float(m), "sign": float(s), "phase": phi, "step": s * m * 2 * np.pi / p}


def circle_fit(x: Any, labels: Any, period: int | None = None) -> dict[str, Any]:
    """Fit a circle to the class means of ``x`` (N, D) with cyclic labels 0..P-1 in their top-2 PCA plane.

    Returns plain numbers (``plane_variance``: share of the class means' variance in the plane; ``point_variance``:
    share of all points' variance in it; ``aspect``: the second axis' variance over the first's, near 1 for a circle
and near 0 for a line; ``circularity`` etc. from ``circularity``; ``radius_cv``: std / mean of the
    class means' radii about the centre; ``angle_rmse``: RMS wrapped error of the angles against the fitted
    progression) and arrays (``basis`` (D, 2), ``center`` (D,), ``angles`` (P,), ``coords`` (P, 2)).
    """
    x = _check_points(x)
    means, p = class_means(x, labels, period)
    center = means.mean(0)
    _, s, vt = np.linalg.svd(means - center, full_matrices=False)
    total = float((s ** 2).sum())
    if total <= 0:
        raise ValueError("all class means coincide: there is no plane to fit a circle in")
    basis = vt[:2].T if vt.shape[0] >= 2 else np.pad(vt.T, ((0, 0), (0, 1)))
    coords = (means - center) @ basis
    angles = np.arctan2(coords[:, 1], coords[:, 0])
    fit = circularity(angles, p)
    pred = fit["phase"] + fit["sign"] * fit["winding"] * 2 * np.pi * np.arange(p) / p
    err = np.angle(np.exp(1j * (angles - pred)))
    radii = np.linalg.norm(coords, axis=1)
    xc = x - x.mean(0)
    pv = float(((xc @ basis) ** 2).sum() / max((xc ** 2).sum(), 1e-300))
    aspect = float(s[1] ** 2 / s[0] ** 2) if len(s) > 1 else 0.0
    return {"period": p, "plane_variance": float((s[:2] ** 2).sum() / total), "point_variance": pv, "aspect": aspect,
            **fit,
            "radius_cv": float(radii.std() / max(radii.mean(), 1e-300)), "angle_rmse": float(np.sqrt((err ** 2).mean())),
            "basis": basis, "center": center, "angles": angles, "coords": coords}


def shuffled_circularity(x: Any, labels: Any, period: int | None = None, *, seed: int = 0, n_perm: int = 20) -> float:
    """The null: ``circle_fit``'s circularity averaged over ``n_perm`` seeded permutations of the labels among the
    points (with P classes and P - 1 winding/orientation choices, chance circularity is far from 0)."""
    lab = np.asarray(labels)
    rng = np.random.default_rng(seed)
    return float(np.mean([circle_fit(x, rng.permutation(lab), period)["circularity"] for _ in range(n_perm)]))


def _mutual_information(a: np.ndarray, b: np.ndarray, bins: int) -> float:
    h, _, _ = np.histogram2d(a, b, bins=bins)
    pxy = h / h.sum()
    px, py = pxy.sum(1, keepdims=True), pxy.sum(0, keepdims=True)
    nz = pxy > 0
    return float((pxy[nz] * np.log(pxy[nz] / (px @ py)[nz])).sum())


def separability_index(z: Any, *, bins: int = 10, n_angles: int = 45) -> float:
    """Engels et al. §3's separability index of a 2-D feature ``z`` (N, 2): the smallest mutual information (nats,
    ``bins`` x ``bins`` histogram) between the two coordinates over ``n_angles`` rotations in [0, pi/2)."""
    z = _check_points(z, "z", min_rows=10)
    if z.shape[1] != 2:
        raise ValueError(f"separability_index takes a 2-D feature (N, 2), got {z.shape}")
    if bins < 2 or n_angles < 1:
        raise ValueError("bins must be >= 2 and n_angles >= 1")
    z = z - z.mean(0)
    best = np.inf
    for t in np.linspace(0, np.pi / 2, n_angles, endpoint=False):
        c, s = np.cos(t), np.sin(t)
        best = min(best, _mutual_information(c * z[:, 0] + s * z[:, 1], -s * z[:, 0] + c * z[:, 1], bins))
    return float(best)


def mixture_index(z: Any, *, eps: float = 0.1, n_angles: int = 90, n_offsets: int = 101) -> float:
    """Engels et al. §3's epsilon-mixture index of a 2-D feature ``z`` (N, 2): the largest fraction of points within
    ``eps`` of a line, ``max P(|v.z + c| < eps)`` with ``E[(v.z + c)^2] = 1`` (grid: ``n_angles`` directions u,
    ``n_offsets`` offsets t at quantiles of u.z; v.z + c = (u.z - t) / rms(u.z - t))."""
    z = _check_points(z, "z", min_rows=10)
    if z.shape[1] != 2:
        raise ValueError(f"mixture_index takes a 2-D feature (N, 2), got {z.shape}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    best = 0.0
    for t in np.linspace(0, np.pi, n_angles, endpoint=False):
        g = z @ np.array([np.cos(t), np.sin(t)])
        for off in np.quantile(g, np.linspace(0, 1, n_offsets)):
            d = g - off
            rms = np.sqrt((d ** 2).mean())
            if rms <= 0:
                return 1.0
            best = max(best, float((np.abs(d) < eps * rms).mean()))
    return best


def rotation_matrix(basis: Any, angle: float) -> np.ndarray:
    """The (D, D) linear part of a rotation by ``angle`` inside the plane spanned by the orthonormal ``basis`` (D, 2):
    ``I + B (R - I) B^T`` (the orthogonal complement is left alone)."""
    b = np.asarray(basis, dtype=np.float64)
    if b.ndim != 2 or b.shape[1] != 2:
        raise ValueError(f"basis must be (D, 2), got {b.shape}")
    if not np.allclose(b.T @ b, np.eye(2), atol=1e-6):
        raise ValueError("basis columns must be orthonormal")
    r = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
    return np.eye(b.shape[0]) + b @ (r - np.eye(2)) @ b.T


def rotate_in_plane(h: Any, basis: Any, center: Any, angle: float) -> np.ndarray:
    """Rotate points ``h`` (N, D) by ``angle`` about ``center`` inside the plane of ``basis`` (D, 2)."""
    h = np.asarray(h, dtype=np.float64)
    c = np.asarray(center, dtype=np.float64)
    return c + (h - c) @ rotation_matrix(basis, angle).T


def random_plane(dim: int, *, seed: int = 0) -> np.ndarray:
    """A uniformly random orthonormal (dim, 2) basis (the control plane)."""
    q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, 2)))
    return q


def cluster_directions(w: Any, n_clusters: int, *, seed: int = 0, n_init: int = 10) -> np.ndarray:
    """§4's first step: cluster dictionary directions (SAE decoder rows, (N, D)) by their cosine similarity, so that
    directions spanning one multi-dimensional feature land together. Spectral clustering: affinity ``|cos|`` (zero
    diagonal), the symmetric normalised affinity's top ``n_clusters`` eigenvectors, rows normalised, k-means
    (``n_init`` seeded restarts). Returns (N,) cluster ids 0..n_clusters-1 (the paper's similarity and clustering
    settings were not read; this is the standard construction)."""
    w = _check_points(w, "w", min_rows=2)
    k = int(n_clusters)
    if not 1 <= k <= w.shape[0]:
        raise ValueError(f"n_clusters must be in 1..{w.shape[0]} (the number of directions), got {n_clusters}")
    norms = np.linalg.norm(w, axis=1)
    if (norms == 0).any():
        raise ValueError("w holds all-zero rows (dead dictionary directions): drop them first")
    u = w / norms[:, None]
    a = np.abs(u @ u.T)
    np.fill_diagonal(a, 0.0)
    d = a.sum(1)
    dinv = 1.0 / np.sqrt(np.maximum(d, 1e-12))
    _, vecs = np.linalg.eigh(dinv[:, None] * a * dinv[None, :])
    emb = vecs[:, -k:]
    emb = emb / np.maximum(np.linalg.norm(emb, axis=1, keepdims=True), 1e-12)
    rng = np.random.default_rng(seed)
    best, best_inertia = np.zeros(len(emb), dtype=np.int64), np.inf
    for _ in range(n_init):
        cent = emb[rng.choice(len(emb), k, replace=False)]
        for _ in range(100):
            lab = ((emb[:, None] - cent[None]) ** 2).sum(-1).argmin(1)
            new = np.stack([emb[lab == j].mean(0) if (lab == j).any() else cent[j] for j in range(k)])
            if np.allclose(new, cent):
                break
            cent = new
        inertia = float(((emb - cent[lab]) ** 2).sum())
        if inertia < best_inertia:
            best, best_inertia = lab, inertia
    return best
