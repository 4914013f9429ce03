"""The ``circle-fit`` and ``irreducibility`` analysis tools: each layer of an ``ActivationSet`` (a model's
activations over labelled inputs, or raw arrays as ``zoo.analyze("circle-fit", {"h": H}, labels=days)``) is read as N
points in D dimensions (tokens are mean-pooled)."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .circle import circle_fit, cluster_directions, mixture_index, separability_index, shuffled_circularity


def circle_tool(acts: Any, *, layers: Any = None, period: int | None = None, seed: int = 0,
                out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: the circle fit of the class means (see ``circle.circle_fit``) and the permuted-label null."""
    out: dict[str, Any] = {"layers": {}}
    fits = {}
    for name in acts.select(layers):
        x = acts.matrix(name, min_samples=3, needs_labels=True)
        fit = circle_fit(x, acts.labels, period)
        fits[name] = fit
        out["layers"][name] = {k: v for k, v in fit.items() if k not in ("basis", "center", "coords")}
        out["layers"][name]["shuffled_circularity"] = shuffled_circularity(x, acts.labels, fit["period"], seed=seed)
    if out_dir is not None:
        out["artifacts"] = {"circle": _plot(acts, fits, os.path.join(out_dir, "circle_fit.png"))}
    return out


def irreducibility_tool(acts: Any, *, layers: Any = None, eps: float = 0.1, bins: int = 10) -> dict[str, Any]:
    """Per layer: separability and epsilon-mixture indices of the top-2 PCA projection (class means' plane when the
    set has labels)."""
    out: dict[str, Any] = {"layers": {}}
    for name in acts.select(layers):
        x = acts.matrix(name, min_samples=10)
        if x.shape[1] < 2:
            raise ValueError(f"layer {name!r} has D = 1: irreducibility is measured on a 2-D projection (D >= 2)")
        if acts.labels is not None:
            fit = circle_fit(x, acts.labels)
            basis, pv = fit["basis"], fit["plane_variance"]
        else:
            xc = x - x.mean(0)
            _, s, vt = np.linalg.svd(xc, full_matrices=False)
            basis, pv = vt[:2].T, float((s[:2] ** 2).sum() / max((s ** 2).sum(), 1e-300))
        z = (x - x.mean(0)) @ basis
        out["layers"][name] = {"separability": separability_index(z, bins=bins), "mixture": mixture_index(z, eps=eps),
                               "eps": float(eps), "plane_variance": pv}
    return out


def clusters_tool(acts: Any, *, n_clusters: int, layers: Any = None, seed: int = 0) -> dict[str, Any]:
    """Per layer (read as N dictionary directions, e.g. an SAE decoder's rows): spectral clusters by |cosine|, with
    each cluster's size and the effective dimension (participation ratio) of its directions."""
    out: dict[str, Any] = {"layers": {}}
    for name in acts.select(layers):
        w = acts.matrix(name, min_samples=2)
        lab = cluster_directions(w, n_clusters, seed=seed)
        dims = []
        for j in range(int(n_clusters)):
            u = w[lab == j] / np.linalg.norm(w[lab == j], axis=1, keepdims=True)
            ev = np.linalg.svd(u, compute_uv=False) ** 2 if len(u) else np.zeros(1)
            dims.append(float(ev.sum() ** 2 / max((ev ** 2).sum(), 1e-300)) if len(u) else 0.0)
        out["layers"][name] = {"labels": lab, "sizes": np.bincount(lab, minlength=int(n_clusters)),
                               "effective_dims": dims}
    return out


def _plot(acts: Any, fits: dict[str, Any], path: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(fits), figsize=(3.6 * len(fits), 3.4), squeeze=False)
    for ax, (name, fit) in zip(axes[0], fits.items(), strict=True):
        z = (acts.matrix(name, min_samples=3) - fit["center"]) @ fit["basis"]
        ax.scatter(z[:, 0], z[:, 1], c=np.asarray(acts.labels), cmap="tab20", s=6, alpha=0.5)
        c = fit["coords"]
        ax.plot(np.r_[c[:, 0], c[:1, 0]], np.r_[c[:, 1], c[:1, 1]], "k-o", ms=3, lw=0.8)
        ax.set_title(f"{name}: circularity {fit['circularity']:.2f}", fontsize=8)
        ax.set_aspect("equal", "datalim")
    return save_figure(fig, path)


__all__ = ["circle_tool", "irreducibility_tool", "clusters_tool"]
