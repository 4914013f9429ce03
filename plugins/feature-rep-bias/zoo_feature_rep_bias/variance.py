"""How much of a representation each feature explains (Lampinen et al. 2024), and the paper's kind of data set:
simple and complex binary features of random binary inputs, matched in role. The method follows the paper's abstract
and catalog entry 89; its full text was not read here.

For a layer's activations ``X`` (N, D), centred, and a feature ``f`` (N,) or (N, k), the variance share of ``f`` is
the R^2 of the multi-output linear regression of every unit on ``f`` (with intercept):

    share(f) = ||P_f X||_F^2 / ||X||_F^2,    P_f the projection on the centred columns of f,

the fraction of the total representation variance (summed over units) that a linear read-out of the feature
accounts for; 1 when the representation is an affine function of the feature, 0 when uncorrelated. The PCA view
(``pca``) gives the same per principal component: each component's share of variance and the R^2 of each feature
for that component, so "the top component is the simple feature" can be read off.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

KINDS = ("linear", "xor4")
BITS = {"linear": 5, "xor4": 4}


def _centred(x: np.ndarray) -> np.ndarray:
    return x - x.mean(0, keepdims=True)


def variance_share(x: np.ndarray, f: np.ndarray) -> float:
    """Share of the total variance of ``x`` (N, D) explained by a linear regression on ``f`` (N,) or (N, k)."""
    xc = _centred(np.asarray(x, dtype=np.float64))
    fc = _centred(np.asarray(f, dtype=np.float64).reshape(len(xc), -1))
    total = float(np.sum(xc ** 2))
    if total <= 0:
        raise ValueError("the representation is constant over the inputs: it has no variance to explain")
    if float(np.sum(fc ** 2)) <= 0:
        raise ValueError("a feature is constant over the inputs: it explains nothing and its share is undefined")
    beta, *_ = np.linalg.lstsq(fc, xc, rcond=None)
    return float(np.sum((fc @ beta) ** 2) / total)


def pca_shares(x: np.ndarray, features: Mapping[str, np.ndarray], n_pcs: int = 5) -> list[dict[str, Any]]:
    """The top ``n_pcs`` principal components: each one's share of the variance and each feature's R^2 on it."""
    xc = _centred(np.asarray(x, dtype=np.float64))
    u, s, _ = np.linalg.svd(xc, full_matrices=False)
    var = s ** 2 / max(float(np.sum(s ** 2)), 1e-300)
    out = []
    for i in range(min(n_pcs, len(s))):
        pc = u[:, i:i + 1] * s[i]
        out.append({"variance_share": float(var[i]),
                    "r2": {name: (variance_share(pc, f) if s[i] > 1e-12 else 0.0) for name, f in features.items()}})
    return out


def feature_variance_explained(acts: Any, *, features: Sequence[str] | None = None, layers: Sequence[str] | None = None,
                               n_pcs: int = 5, pool: str = "mean", out_dir: str | None = None) -> dict[str, Any]:
    """The ``feature_variance_explained`` tool: per layer, the share of representation variance explained by each
    feature (``acts.concepts``, all by default; the labels as one-hot classes when there are no concepts), and the
    top principal components' shares and feature R^2."""
    feats = _features(acts, features)
    names = list(layers) if layers else acts.names
    out: dict[str, Any] = {"features": list(feats), "layers": {}}
    for name in names:
        x = acts.matrix(name, min_samples=3, pool=pool)
        out["layers"][name] = {"share": {f: variance_share(x, v) for f, v in feats.items()},
                               "pca": pca_shares(x, feats, n_pcs)}
    if out_dir is not None:
        out["artifacts"] = {"shares": _plot(out["layers"], list(feats),
                                            os.path.join(out_dir, "feature_variance_explained.png"))}
    return out


def _features(acts: Any, wanted: Sequence[str] | None) -> dict[str, np.ndarray]:
    if acts.concepts:
        names = list(wanted) if wanted else list(acts.concepts)
        missing = [f for f in names if f not in acts.concepts]
        if missing:
            raise ValueError(f"no concept(s) {missing} in this ActivationSet; it has {sorted(acts.concepts)}")
        feats = {f: np.asarray(acts.concepts[f], dtype=np.float64) for f in names}
    elif acts.labels is not None:
        if wanted:
            raise ValueError(f"features={list(wanted)} names concepts, but this ActivationSet has only labels")
        labels = np.asarray(acts.labels)
        classes = np.unique(labels)
        if len(classes) < 2:
            raise ValueError("the labels take a single value: a feature needs at least two values to explain variance")
        feats = {"labels": (labels[:, None] == classes[None, :]).astype(np.float64)[:, 1:]}  # one-hot, drop one
    else:
        raise ValueError("feature_variance_explained needs features: concepts (N,) or (N, k) arrays, or labels")
    for f, v in feats.items():
        if not np.isfinite(v).all():
            raise ValueError(f"feature {f!r} holds NaN/inf values")
        if np.ptp(v.reshape(len(v), -1), axis=0).max() == 0:
            raise ValueError(f"feature {f!r} is constant over the inputs: it explains nothing")
    return feats


def make_features(n: int, kinds: Sequence[str] = ("linear", "xor4"), *, n_bits: int = 32,
                  seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Random inputs in {-1, +1}^n_bits and binary features of them matched in computational role: each feature is a
    balanced function of its own disjoint block of input bits, independent of the others, and (in the claim) each is
    one output of the network with the same loss weight. ``linear``: the majority of 5 bits (linearly separable);
    ``xor4``: the parity of 4 bits (no linear read-out at all). Returns ``(x (n, n_bits), y (n, len(kinds)))``."""
    for k in kinds:
        if k not in KINDS:
            raise ValueError(f"unknown feature kind {k!r}; choose from {list(KINDS)}")
    need = sum(BITS[k] for k in kinds)
    if need > n_bits:
        raise ValueError(f"features {list(kinds)} need {need} disjoint input bits; n_bits={n_bits}")
    rng = np.random.default_rng(seed)
    x = rng.choice(np.array([-1.0, 1.0]), size=(n, n_bits))
    ys, start = [], 0
    for k in kinds:
        block = x[:, start:start + BITS[k]]
        start += BITS[k]
        ys.append(block.sum(1) > 0 if k == "linear" else (block < 0).sum(1) % 2 == 1)
    return x.astype(np.float32), np.stack(ys, 1).astype(np.float32)


def _plot(layers: dict[str, dict[str, Any]], feats: list[str], path: str) -> str:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    names = list(layers)
    width = 0.8 / max(len(feats), 1)
    for i, f in enumerate(feats):
        ax.bar(np.arange(len(names)) + i * width, [layers[n]["share"][f] for n in names], width, label=f)
    ax.set_xticks(np.arange(len(names)) + 0.4 - width / 2, names, rotation=30, fontsize=7)
    ax.set_ylabel("share of variance explained")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    return save_figure(fig, path)
