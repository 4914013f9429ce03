"""The ``concept-crystals``, ``concept-lobes`` and ``concept-galaxy`` analysis tools: each layer of an
``ActivationSet`` (a model's activations, or raw arrays: ``zoo.analyze("concept-galaxy", {"W_dec": W})``) is read
as a point cloud, one point per row."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .geometry import (
    check_quads,
    clustering_entropy,
    lda_projection,
    phi_cooccurrence,
    power_law_slope,
    quad_quality,
    spatial_modularity,
)


def discover_quads(points: np.ndarray, n_relations: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The paper's crystal search, small: cluster the edge vectors b - a of every pair a < b (K-means on the
    edges), and pair up edges of the same cluster into quadruples a:b::c:d (disjoint pairs only)."""
    from sklearn.cluster import KMeans

    n = len(points)
    ab = np.array([(a, b) for a in range(n) for b in range(a + 1, n)])
    if len(ab) < 2 * int(n_relations) or int(n_relations) < 1:
        raise ValueError(f"{n} points give {len(ab)} edges: too few for n_relations={n_relations} (need >= 2 edges "
                         "per relation; use more points or fewer relations)")
    edges = points[ab[:, 1]] - points[ab[:, 0]]
    lab = KMeans(int(n_relations), n_init=4, random_state=seed).fit_predict(edges)
    quads, rel = [], []
    for r in range(int(n_relations)):
        members = ab[lab == r]
        for i in range(len(members)):
            for j in range(i + 1, len(members)):
                if len({*members[i], *members[j]}) == 4:
                    quads.append((*members[i], *members[j]))
                    rel.append(r)
    if not quads:
        raise ValueError("no edge cluster holds two disjoint pairs: no quadruple found; use more points")
    return np.asarray(quads), np.asarray(rel)


def crystals_tool(acts: Any, *, quads: Any = None, relations: Any = None, fit: Any = None, k: int = 8,
                  reg: float = 1e-2, n_relations: int = 6, layers: Any = None, seed: int = 0,
                  out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: parallelogram and trapezoid quality of analogy quadruples before and after LDA distractor removal.

    ``quads`` (Q, 4) index the layer's rows (a, b, c, d); ``relations`` (Q,) group them (default: one relation);
    ``fit`` (Q,) booleans choose the quadruples whose edges fit the LDA (default all: in-sample, as a discovery).
    Without ``quads`` the points are the class means (with labels) or the rows, and quadruples are discovered by
    clustering their edge vectors into ``n_relations`` relations (``discover_quads``).
    """
    out: dict[str, Any] = {"layers": {}}
    hists = {}
    for name in acts.select(layers):
        x = acts.matrix(name, min_samples=4)
        if quads is None:
            if acts.labels is not None:
                lab = np.asarray(acts.labels)
                classes = np.unique(lab)
                x = np.stack([x[lab == c].mean(0) for c in classes])
            q, rel = discover_quads(x, n_relations, seed)
        else:
            q = check_quads(quads, len(x))
            rel = np.zeros(len(q), dtype=np.int64) if relations is None else np.asarray(relations)
            if rel.shape != (len(q),):
                raise ValueError(f"relations must hold one id per quadruple: shape ({len(q)},), got {rel.shape}")
        f = np.ones(len(q), bool) if fit is None else np.asarray(fit, dtype=bool)
        if f.shape != (len(q),) or not f.any():
            raise ValueError(f"fit must be ({len(q)},) booleans with at least one True")
        pairs = np.concatenate([q[f][:, :2], q[f][:, 2:]])
        prel = np.concatenate([rel[f], rel[f]])
        kk = min(int(k), x.shape[1])
        w = lda_projection(x, pairs, prel, kk, reg=reg)
        ev = ~f if (~f).any() else f
        raw, lda = quad_quality(x, q[ev]), quad_quality(x, q[ev], w)
        hists[name] = (raw["parallelogram"], lda["parallelogram"])
        out["layers"][name] = {"parallelogram_raw": float(np.nanmean(raw["parallelogram"])),
                               "parallelogram_lda": float(np.nanmean(lda["parallelogram"])),
                               "trapezoid_raw": float(np.nanmean(raw["trapezoid"])),
                               "trapezoid_lda": float(np.nanmean(lda["trapezoid"])),
                               "n_quads": int(ev.sum()), "held_out": bool((~f).any()), "k": kk}
    if out_dir is not None:
        out["artifacts"] = {"crystals": _plot_hist(hists, os.path.join(out_dir, "concept_crystals.png"))}
    return out


def _sae_universe(x: np.ndarray, *, n_features: int, l1: float, steps: int, seed: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Train an SAE on the tokens of x ((N, D) or (N, T, D); each input is a co-occurrence window): returns the
    decoder rows (F, D) and the (N, F) window firing matrix."""
    from .sae import sae_codes, train_sae

    tokens = x.reshape(-1, x.shape[-1])
    sae, scale = train_sae(tokens, n_features=n_features, l1=l1, steps=steps, seed=seed)
    codes = sae_codes(sae, tokens, scale).reshape(x.shape[0], -1, int(n_features))
    return sae.w_dec.detach().double().numpy(), (codes > 0).any(1)


def _raw(acts: Any, name: str) -> np.ndarray:
    x = np.asarray(acts[name], dtype=np.float64)
    acts.matrix(name, min_samples=2)  # validates finiteness and size
    return x


def lobes_tool(acts: Any, *, cooccurrence: Any = None, n_clusters: int = 8, n_shuffles: int = 10,
               n_features: int = 256, l1: float = 1.0, steps: int = 1000, layers: Any = None,
               seed: int = 0) -> dict[str, Any]:
    """Per layer: spatial modularity (§4), the AMI between co-occurrence clusters and geometric clusters against
    shuffled positions. With ``cooccurrence`` (F, F) the layer is an SAE decoder (F, D); without it the layer is
    activations (N, D) or (N, T, D), an SAE is trained on them, and each input is a co-occurrence window."""
    out: dict[str, Any] = {"layers": {}}
    for name in acts.select(layers):
        if cooccurrence is not None:
            dec, cooc, f_all = acts.matrix(name, min_samples=3), np.asarray(cooccurrence, dtype=np.float64), None
        else:
            x = _raw(acts, name)
            if x.shape[0] < 10:
                raise ValueError(f"layer {name!r} has {x.shape[0]} inputs; training an SAE needs at least 10")
            dec, fired = _sae_universe(x, n_features=n_features, l1=l1, steps=steps, seed=seed)
            rate = fired.mean(0)
            alive = (rate > 0) & (rate < 1)
            f_all = len(dec)
            if alive.sum() <= int(n_clusters):
                raise ValueError(f"layer {name!r}: only {int(alive.sum())} SAE features fire in some but not all "
                                 f"inputs; n_clusters={n_clusters} needs more (more inputs, lower l1)")
            dec, cooc = dec[alive], phi_cooccurrence(fired[:, alive])
        mod = spatial_modularity(dec, cooc, n_clusters, seed=seed, n_shuffles=n_shuffles)
        out["layers"][name] = {"ami": mod["ami"], "ami_shuffled": mod["ami_shuffled"],
                               "ami_shuffled_std": mod["ami_shuffled_std"], "n_features": int(len(dec)),
                               "sae_features": f_all, "cooc_labels": mod["cooc_labels"],
                               "geom_labels": mod["geom_labels"]}
    return out


def galaxy_tool(acts: Any, *, sae: bool = False, n_features: int = 256, l1: float = 1.0, steps: int = 1000,
                lo: int = 1, hi: int | None = None, entropy_dims: int = 10, knn: int = 5, layers: Any = None,
                seed: int = 0, out_dir: str | None = None) -> dict[str, Any]:
    """Per layer (read as a point cloud: an SAE decoder's rows, or with ``sae=True`` the decoder of an SAE trained on
    the layer's activations): the eigenvalue power-law slope (§5.1) and the clustering entropy (§5.2), and which
    layer has the steepest slope."""
    out: dict[str, Any] = {"layers": {}}
    spectra = {}
    for name in acts.select(layers):
        if sae:
            x = _raw(acts, name)
            pts, _ = _sae_universe(x, n_features=n_features, l1=l1, steps=steps, seed=seed)
        else:
            pts = acts.matrix(name, min_samples=knn + 2)
        pl = power_law_slope(pts, lo=lo, hi=hi)
        ce = clustering_entropy(pts, k=knn, dims=min(int(entropy_dims), pts.shape[1]))
        spectra[name] = pl["eigenvalues"]
        out["layers"][name] = {"slope": pl["slope"], "r2": pl["r2"], "fit_ranks": [pl["lo"], pl["hi"]],
                               "clustering_entropy": ce["clustering_entropy"], "eigenvalues": pl["eigenvalues"]}
    out["steepest_layer"] = min(out["layers"], key=lambda n: out["layers"][n]["slope"])
    if out_dir is not None:
        out["artifacts"] = {"spectra": _plot_spectra(spectra, os.path.join(out_dir, "concept_galaxy.png"))}
    return out


def _plot_hist(hists: dict[str, tuple[np.ndarray, np.ndarray]], path: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(hists), figsize=(3.6 * len(hists), 3.0), squeeze=False)
    for ax, (name, (raw, lda)) in zip(axes[0], hists.items(), strict=True):
        bins = np.linspace(-0.2, 1, 25)
        ax.hist(raw[np.isfinite(raw)], bins, alpha=0.6, label="raw")
        ax.hist(lda[np.isfinite(lda)], bins, alpha=0.6, label="after LDA")
        ax.set_title(f"{name}: parallelogram quality", fontsize=8)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


def _plot_spectra(spectra: dict[str, np.ndarray], path: str) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.2, 3.2))
    for name, ev in spectra.items():
        ax.loglog(np.arange(1, len(ev) + 1), ev / ev[0], label=name)
    ax.set_xlabel("rank")
    ax.set_ylabel("eigenvalue / largest")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


__all__ = ["crystals_tool", "lobes_tool", "galaxy_tool", "discover_quads"]
