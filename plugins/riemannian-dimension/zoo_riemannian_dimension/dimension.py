"""Pointwise Riemannian Dimension of a fully connected net from its layers' feature spectra, and the bounds (numpy).

Li & Xu, "Pointwise Generalization in Deep Neural Networks" (arXiv:2605.18598), §3 (the Riemannian Dimension) and §4
(the bounds). Only the paper's abstract could be read here (its HTML was not retrievable: only its first page and
table of contents), so the formula below is a RECONSTRUCTION from the abstract, the catalog entry and the paper's
section titles ("pointwise Riemannian Dimension, derived from the eigenvalues of the learned feature representations
across layers"; "ellipsoidal covering of the Grassmannian"), not the paper's own definition:

1. Layer spectra. For the feature matrix ``H_l`` (N, D_l) of layer l on the N training inputs (``H_0`` = the network
   input), ``lambda_{l,i}`` are the eigenvalues of the centred covariance ``H_l^T H_l / N`` (descending).
2. Spectral (effective) dimension at resolution eps (relative to the trace; default eps = 1/N, the smallest share of
   the energy an N-sample covariance resolves): ``r_l = sum_i p_i / (p_i + eps)`` with ``p_i = lambda_i / sum_j
   lambda_j`` -- the ridge degrees of freedom, the standard soft count of the ellipsoid axes longer than the covering
   scale. ``r_l -> rank`` as eps -> 0; a rank-k spectrum with equal eigenvalues gives exactly ``k / (1 + k eps)``.
   ``form="hard"`` counts ``#{p_i > eps}`` instead.
3. Pointwise Riemannian Dimension: on the sample, layer l's weight (and bias) acts only from the r_{l-1}-dimensional
   effective feature subspace of its input to the r_l-dimensional one of its output, so the hypothesis around the
   trained point is ``d_R = sum_l (r_{l-1} + 1) r_l`` free coordinates, against the model size ``P = sum_l (D_{l-1}
   + 1) D_l`` (the same count with the widths).
4. Bounds, all for the same N and confidence delta. Dimension-based (used for both d_R and P, the size baseline; the
   standard covering/VC bound, e.g. Mohri et al., Foundations of ML, Cor. 3.19):
   ``gap <= sqrt(2 d max(1, ln(e N / d)) / N) + sqrt(ln(1/delta) / (2 N))``.
   Norm-based baseline (Golowich, Rakhlin & Shamir 2018, Thm 1, the Frobenius-norm product bound, for the ramp loss
   at margin gamma; biases absorbed as an extra input column): ``gap <= 2 B (sqrt(2 L ln 2) + 1) prod_l ||[W_l b_l]||_F
   / (gamma sqrt(N)) + 3 sqrt(ln(2/delta) / (2 N))`` with B the largest augmented input norm. The multi-class factor
   of that bound is left out (in the baseline's favour).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from zoo.activations import check_matrix

FORMS = ("ridge", "hard")


def _check_matrix(x: Any, what: str, min_samples: int = 2) -> np.ndarray:
    return check_matrix(x, what, min_samples=min_samples, vector=False)


def spectrum(h: Any, *, center: bool = True) -> np.ndarray:
    """Eigenvalues (descending, clipped at 0) of the (centred) feature covariance ``H^T H / N`` of ``h`` (N, D)."""
    x = _check_matrix(h, "the feature matrix")
    if center:
        x = x - x.mean(axis=0, keepdims=True)
    n, d = x.shape
    # the nonzero eigenvalues of H^T H / N equal those of H H^T / N: use the smaller side
    s = np.linalg.svd(x, compute_uv=False) if min(n, d) > 0 else np.zeros(0)
    lam = np.clip(s**2 / n, 0.0, None)
    out = np.zeros(d)
    out[: lam.size] = np.sort(lam)[::-1][:d]
    return out


def effective_dimension(eigs: Any, eps: float, *, form: str = "ridge") -> float:
    """The spectral dimension of eigenvalues ``eigs`` at relative resolution ``eps`` (see the module docstring)."""
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; choose from {list(FORMS)}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0 (a resolution relative to the trace), got {eps}")
    lam = np.clip(np.asarray(eigs, dtype=np.float64), 0.0, None)
    total = lam.sum()
    if total <= 0:
        return 0.0  # constant features carry no direction
    p = lam / total
    if form == "hard":
        return float((p > eps).sum())
    return float((p / (p + eps)).sum())


def dimension_bound(d: float, n: int, delta: float = 0.05) -> float:
    """``sqrt(2 d max(1, ln(e n / d)) / n) + sqrt(ln(1/delta) / (2 n))``: the gap bound of a d-dimensional class."""
    _check_n_delta(n, delta)
    if d < 0:
        raise ValueError(f"dimension must be >= 0, got {d}")
    lg = max(1.0, math.log(math.e * n / d)) if d > 0 else 1.0
    return math.sqrt(2.0 * d * lg / n) + math.sqrt(math.log(1.0 / delta) / (2.0 * n))


def norm_bound(weights: Sequence[Any], biases: Sequence[Any] | None, *, input_norm: float, margin: float, n: int,
               delta: float = 0.05) -> float:
    """The Frobenius-product (Golowich et al. 2018) margin bound of a bias-augmented FC net (module docstring)."""
    _check_n_delta(n, delta)
    if not margin > 0:
        raise ValueError(f"margin must be > 0, got {margin}")
    if not weights:
        raise ValueError("norm_bound needs the layers' weight matrices (out, in), input first")
    prod = 1.0
    for i, w in enumerate(weights):
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 2:
            raise ValueError(f"weight {i} has shape {w.shape}; a fully connected layer's weight is (out, in)")
        b = np.zeros(w.shape[0]) if biases is None or biases[i] is None else np.asarray(biases[i], dtype=np.float64)
        prod *= math.sqrt(float((w**2).sum() + (b**2).sum()))
    depth = len(weights)
    return (2.0 * input_norm * (math.sqrt(2.0 * depth * math.log(2.0)) + 1.0) * prod / (margin * math.sqrt(n))
            + 3.0 * math.sqrt(math.log(2.0 / delta) / (2.0 * n)))


def _check_n_delta(n: int, delta: float) -> None:
    if int(n) < 1:
        raise ValueError(f"n (the number of training samples) must be >= 1, got {n}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def riemannian_dimension(features: Sequence[Any], *, eps: float | None = None, form: str = "ridge",
                         delta: float = 0.05, center: bool = True) -> dict[str, Any]:
    """The pointwise Riemannian Dimension of a net whose layer features, in forward order and input first, are
    ``features`` (each (N, D_l), the same N inputs), with its bound and the size-based one.

    Returns ``{n, eps, widths, ranks (r_l), compression (r_l / D_l), spectra, layer_dims ((r_{l-1}+1) r_l), dim
    (d_R), params (P), dim_bound, size_bound, log10_size_over_dim}``.
    """
    if len(features) < 2:
        raise ValueError(f"need at least 2 layers of features (the input and one layer's output), got {len(features)}")
    mats = [_check_matrix(h, f"layer {i}", min_samples=3) for i, h in enumerate(features)]
    ns = {m.shape[0] for m in mats}
    if len(ns) != 1:
        raise ValueError(f"every layer must hold the same N inputs; got {[m.shape[0] for m in mats]}")
    n = ns.pop()
    e = 1.0 / n if eps is None else float(eps)
    spectra = [spectrum(m, center=center) for m in mats]
    ranks = [effective_dimension(s, e, form=form) for s in spectra]
    widths = [m.shape[1] for m in mats]
    layer_dims = [(ranks[i - 1] + 1.0) * ranks[i] for i in range(1, len(mats))]
    params = sum((widths[i - 1] + 1) * widths[i] for i in range(1, len(mats)))
    d_r = float(sum(layer_dims))
    db, sb = dimension_bound(d_r, n, delta), dimension_bound(params, n, delta)
    return {"n": n, "eps": e, "form": form, "widths": widths, "ranks": ranks,
            "compression": [r / w for r, w in zip(ranks, widths, strict=True)], "spectra": [s.tolist() for s in spectra],
            "layer_dims": layer_dims, "dim": d_r, "params": int(params), "dim_bound": db, "size_bound": sb,
            "log10_size_over_dim": math.log10(sb / db)}


__all__ = ["FORMS", "spectrum", "effective_dimension", "dimension_bound", "norm_bound", "riemannian_dimension"]
