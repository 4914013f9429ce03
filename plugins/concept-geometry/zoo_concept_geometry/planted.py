"""Planted known-answer data for the three measurements (numpy, seeded)."""
from __future__ import annotations

import numpy as np


def planted_crystals(n_subjects: int = 12, n_attributes: int = 3, d: int = 32, n_distractor: int = 4,
                     distractor_scale: float = 10.0, noise: float = 0.02, seed: int = 0
                     ) -> dict[str, np.ndarray]:
    """Points ``s_x + a_T + G z_{x,T}``: subject x plus attribute T (exact parallelograms) plus a large distractor
    ``G z`` in a random ``n_distractor``-dim subspace, drawn afresh for every point (like word length, unrelated to
    the relation). Quadruples (x,T1):(x,T2)::(y,T1):(y,T2) with relation (T1, T2); ``fit`` marks those of the first
    half of the subjects (the LDA's), the rest are held out."""
    rng = np.random.default_rng(seed)
    s = rng.standard_normal((n_subjects, d))
    a = 2.0 * rng.standard_normal((n_attributes, d))
    g, _ = np.linalg.qr(rng.standard_normal((d, n_distractor)))
    idx = np.arange(n_subjects * n_attributes).reshape(n_subjects, n_attributes)
    pts = (s[:, None] + a[None]).reshape(-1, d)
    pts = pts + distractor_scale * rng.standard_normal((len(pts), n_distractor)) @ g.T
    pts = pts + noise * rng.standard_normal(pts.shape)
    quads, rel, fit = [], [], []
    r = 0
    half = n_subjects // 2
    for t1 in range(n_attributes):
        for t2 in range(t1 + 1, n_attributes):
            for x in range(n_subjects):
                for y in range(x + 1, n_subjects):
                    if (x < half) != (y < half):
                        continue
                    quads.append((idx[x, t1], idx[x, t2], idx[y, t1], idx[y, t2]))
                    rel.append(r)
                    fit.append(x < half)
            r += 1
    return {"points": pts, "quads": np.asarray(quads), "relations": np.asarray(rel), "fit": np.asarray(fit),
            "distractor_basis": g}


def planted_power_law(alpha: float, n: int = 20000, d: int = 32, seed: int = 0) -> np.ndarray:
    """Gaussian points whose covariance eigenvalues are ``i^-alpha`` (i = 1..d) in a random orthonormal basis."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    return (rng.standard_normal((n, d)) * np.arange(1, d + 1) ** (-alpha / 2)) @ q.T


def planted_lobes(n_lobes: int = 4, per_lobe: int = 15, d: int = 24, windows: int = 400, spread: float = 0.3,
                  seed: int = 0) -> dict[str, np.ndarray]:
    """Features in ``n_lobes`` lobes: decoder rows near one random direction per lobe, and firing windows in which
    one lobe is "on" (its features fire with probability 0.6, others with 0.02): co-occurrence and geometry agree."""
    rng = np.random.default_rng(seed)
    centers = rng.standard_normal((n_lobes, d))
    lobe = np.repeat(np.arange(n_lobes), per_lobe)
    dec = centers[lobe] + spread * rng.standard_normal((len(lobe), d))
    dec /= np.linalg.norm(dec, axis=1, keepdims=True)
    on = rng.integers(0, n_lobes, windows)
    p = np.where(lobe[None, :] == on[:, None], 0.6, 0.02)
    return {"decoder": dec, "fired": rng.random(p.shape) < p, "lobe": lobe}
