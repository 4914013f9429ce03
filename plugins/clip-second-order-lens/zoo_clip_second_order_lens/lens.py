"""Statistics of second-order effects (numpy only): selectivity, the single-direction approximation and the sparse
text decomposition of that direction (Gandelsman et al. 2024, §4). Only the abstract and the official repository's
file list were read for this part: the energy-fraction selectivity and OMP are this plugin's reading of those
steps, not the paper's exact procedures.

The paper mean-ablates a neuron's second-order effect on all but its top images (by effect norm) and finds that
keeping <2% of the images preserves the zero-shot accuracy (§4.1, "effects are sparse across images"); it then
approximates the effect on those images by its first principal component (§4.2) and describes that direction by a
sparse code over the text embeddings of a large vocabulary (§4.3). Here, with the effect of neuron n on image I
written phi(I) and its mean over the images m:

* ``selectivity``: the smallest fraction of images whose deviations phi(I) - m (largest first) hold ``energy``
  (0.9) of the total squared deviation, i.e. of what mean-ablating all images would remove;
* ``direction``: the top singular direction v of the deviations over those significant images (signed so they
  project positively on it), and ``explained_significant`` the share of their squared deviation it captures;
* ``explained``: the same share for the top direction of the deviations over all images (not biased upwards by a
  small significant set: the rank-1 approximation of the whole effect);
* ``decompose``: orthogonal matching pursuit of v over the unit-normalised text embeddings, ``atoms`` terms.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def _check_effects(effects: Any, what: str = "effects") -> np.ndarray:
    e = np.asarray(effects, dtype=np.float64)
    if e.ndim == 2:
        e = e[:, None, :]
    if e.ndim != 3:
        raise ValueError(f"{what} has shape {e.shape}: expected (N images, D) for one neuron or (N, neurons, D)")
    if e.shape[0] < 10:
        raise ValueError(f"{what} has {e.shape[0]} images; selectivity needs at least 10")
    if e.shape[2] < 2:
        raise ValueError(f"{what} has D = {e.shape[2]}: the effects live in the joint embedding space (D >= 2)")
    if not np.isfinite(e).all():
        raise ValueError(f"{what} holds NaN/inf values; drop those images before measuring")
    return e


def selectivity(effects: Any, energy: float = 0.9) -> tuple[np.ndarray, np.ndarray]:
    """Per neuron: the fraction of images that carry ``energy`` of the squared deviation from the mean effect, and
    the boolean (N, neurons) mask of those significant images."""
    if not 0 < energy <= 1:
        raise ValueError(f"energy must be in (0, 1], got {energy}")
    e = _check_effects(effects)
    dev = np.linalg.norm(e - e.mean(0, keepdims=True), axis=2) ** 2  # (N, M)
    order = np.argsort(-dev, axis=0, kind="stable")
    sorted_dev = np.take_along_axis(dev, order, 0)
    total = sorted_dev.sum(0)
    cum = np.cumsum(sorted_dev, 0) / np.where(total > 0, total, 1.0)
    k = np.minimum((cum < energy - 1e-12).sum(0) + 1, e.shape[0])  # images needed
    k = np.where(total > 0, k, 0)
    mask = np.zeros_like(dev, dtype=bool)
    for j in range(e.shape[1]):
        mask[order[: k[j], j], j] = True
    return k / e.shape[0], mask


def directions(effects: Any, mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Per neuron: the top singular direction (neurons, D) of the deviations from the mean effect over the images of
    ``mask`` (all when None), signed towards the mean deviation there, and the share of squared deviation it
    explains (neurons,)."""
    e = _check_effects(effects)
    dev = e - e.mean(0, keepdims=True)
    n, m, d = e.shape
    vs, ex = np.zeros((m, d)), np.zeros(m)
    for j in range(m):
        rows = dev[:, j] if mask is None else dev[mask[:, j], j]
        if len(rows) == 0 or not np.any(rows):
            continue
        _, s, vt = np.linalg.svd(rows, full_matrices=False)
        v = vt[0]
        proj = rows @ v
        if proj.sum() < 0:
            v = -v
        vs[j], ex[j] = v, s[0] ** 2 / (s ** 2).sum()
    return vs, ex


def omp(direction: Any, dictionary: Any, atoms: int = 5) -> tuple[np.ndarray, np.ndarray, float]:
    """Orthogonal matching pursuit of ``direction`` (D,) over the rows of ``dictionary`` (K, D), unit-normalised:
    the chosen row indices, their least-squares coefficients and the residual's share of the squared norm."""
    y = np.asarray(direction, dtype=np.float64)
    dic = np.asarray(dictionary, dtype=np.float64)
    if dic.ndim != 2 or dic.shape[1] != y.shape[-1]:
        raise ValueError(f"the text dictionary must be (K, {y.shape[-1]}) (one embedding per text), got {dic.shape}")
    if not np.isfinite(dic).all():
        raise ValueError("the text dictionary holds NaN/inf values")
    norms = np.linalg.norm(dic, axis=1)
    if (norms == 0).any():
        raise ValueError(f"text embeddings {np.nonzero(norms == 0)[0][:5].tolist()} are zero vectors")
    if not 1 <= atoms <= len(dic):
        raise ValueError(f"atoms must be in 1..{len(dic)} (the dictionary size), got {atoms}")
    dic = dic / norms[:, None]
    chosen: list[int] = []
    coef = np.zeros(0)
    r = y.copy()
    base = max(float(y @ y), 1e-300)
    for _ in range(atoms):
        if r @ r <= 1e-24 * base:
            break
        scores = np.abs(dic @ r)
        scores[chosen] = -1
        chosen.append(int(np.argmax(scores)))
        sub = dic[chosen].T
        coef, *_ = np.linalg.lstsq(sub, y, rcond=None)
        r = y - sub @ coef
    return np.array(chosen, dtype=int), coef, float(r @ r / base)


def lens_statistics(effects: Any, *, energy: float = 0.9) -> dict[str, np.ndarray]:
    """Per neuron: mean effect norm, selectivity, direction and its explained share (all of the above)."""
    e = _check_effects(effects)
    frac, mask = selectivity(e, energy)
    v, ex_sig = directions(e, mask)
    _, ex = directions(e)
    return {"mean_norm": np.linalg.norm(e, axis=2).mean(0), "selectivity": frac, "mask": mask, "direction": v,
            "explained": ex, "explained_significant": ex_sig}
