"""Neuron- and layer-level similarity between models' representations (numpy only).

The paper (catalog 98; an inter-/intra-model similarity analysis of wav2vec2/HuBERT speech SSL models, following
Wu et al. 2020's neuron-level and representation-level measures) compares models at several levels of
localisation. Implemented here:

- neuron level (``neuron_alignment``): for every neuron of layer A, the largest absolute Pearson correlation with
  any neuron of layer B over the same inputs; averaged over A's neurons ("maxsim"), and the same from B to A. High
  only when individual neurons are duplicated across the models (a localised concept found again).
- layer level (``layer_matrix``): a representation-level similarity (linear or RBF CKA, mean CCA, SVCCA, RSA) for
  every pair of layers; high when the layers span similar subspaces, whatever the basis.

The paper's attention-map similarity and the pretrained vs fine-tuned comparison are not implemented (no
attention maps in the small check).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zoo_task_rep_metrics import similarity as sim

METHODS = ("linear_cka", "debiased_cka", "rbf_cka", "cca", "svcca", "rsa")
MIN_SAMPLES = {"linear_cka": 2, "debiased_cka": 4, "rbf_cka": 3, "cca": 3, "svcca": 3, "rsa": 3}
VAR_EPS = 1e-10  # a neuron whose variance over the inputs is below this is "dead": it has no correlation


def _standardise(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns to zero mean and unit norm (so Z_a^T Z_b is the correlation matrix); and the live-column mask."""
    c = x - x.mean(axis=0, keepdims=True)
    norm = np.sqrt((c * c).sum(axis=0))
    live = norm > np.sqrt(VAR_EPS * x.shape[0])
    return c[:, live] / norm[live], live


def neuron_correlations(x: Any, y: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|Pearson correlation| between every live neuron of X and of Y, (D_x live, D_y live), and the live masks.
    Needs N >= 3 and at least one neuron that varies on each side."""
    a, b = sim.check_pair(x, y, min_samples=3)
    za, la = _standardise(a)
    zb, lb = _standardise(b)
    for what, live in (("X", la), ("Y", lb)):
        if not live.any():
            raise ValueError(f"{what}: every neuron is constant over the inputs; neuron correlations are undefined")
    return np.abs(za.T @ zb), la, lb


def neuron_alignment_pair(x: Any, y: Any, threshold: float = 0.9) -> dict[str, float]:
    """Max-correlation alignment of two layers: ``maxcorr_xy`` (mean over X's live neurons of their best |r| in Y),
    ``maxcorr_yx``, ``maxcorr`` (their mean), ``matched_xy``/``matched_yx`` (fraction of neurons whose best |r| >=
    ``threshold``), ``median_xy``, and ``dead_x``/``dead_y`` (constant neurons, left out)."""
    r, la, lb = neuron_correlations(x, y)
    best_x, best_y = r.max(axis=1), r.max(axis=0)
    return {"maxcorr": float((best_x.mean() + best_y.mean()) / 2), "maxcorr_xy": float(best_x.mean()),
            "maxcorr_yx": float(best_y.mean()), "median_xy": float(np.median(best_x)),
            "matched_xy": float((best_x >= threshold).mean()), "matched_yx": float((best_y >= threshold).mean()),
            "dead_x": int((~la).sum()), "dead_y": int((~lb).sum())}


def layer_score(x: Any, y: Any, method: str = "linear_cka", *, k: int | None = None, sigma_frac: float = 0.5) -> float:
    """One representation-level similarity of two layers (``METHODS``); ``k``: SVCCA's principal components (default
    ``svcca_k``)."""
    if method == "linear_cka":
        return sim.linear_cka(x, y)
    if method == "debiased_cka":
        return sim.linear_cka(x, y, debiased=True)
    if method == "rbf_cka":
        return sim.rbf_cka(x, y, sigma_frac)
    if method == "cca":
        return sim.cca_similarity(x, y)
    if method == "svcca":
        return sim.cca_similarity(x, y, k=k or svcca_k(x, y))
    if method == "rsa":
        return sim.rsa(x, y)
    raise ValueError(f"unknown layer-similarity method {method!r}; choose from {list(METHODS)}")


def svcca_k(x: Any, y: Any, cap: int = 20) -> int:
    """SVCCA's default number of principal components: ``cap``, at most the smaller width and N // 4 (so the CCA
    has several samples per direction)."""
    n = np.asarray(x).shape[0]
    d = min(np.asarray(x).reshape(n, -1).shape[1], np.asarray(y).reshape(n, -1).shape[1])
    return max(1, min(cap, d, n // 4))


def layer_matrix(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray], method: str = "linear_cka",
                 **kw: Any) -> np.ndarray:
    """(len(a), len(b)) matrix of ``layer_score`` between every layer of ``a`` and every layer of ``b``."""
    if method not in METHODS:
        raise ValueError(f"unknown layer-similarity method {method!r}; choose from {list(METHODS)}")
    return np.array([[layer_score(xa, xb, method, **kw) for xb in b.values()] for xa in a.values()])
