"""The ``token-homogenization`` and ``layerwise-cka`` tools: each layer of an ``ActivationSet`` with tokens kept,
(N, T, D) (``zoo.analyze("token-homogenization", {"blocks.0": h0, "blocks.1": h1})`` or ``zoo analyze ... MODEL``),
in the order given (depth order)."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .propagation import cka_matrix, profile, token_homogenization


def _checked(acts: Any, name: str, *, tokens: bool) -> np.ndarray:
    x = acts[name]
    if tokens and x.ndim != 3:
        raise ValueError(f"layer {name!r} has shape {x.shape}: token homogenization needs tokens, (N, T, D) arrays "
                         "(record them with pool=None)")
    if x.shape[0] < (1 if tokens else 2):
        raise ValueError(f"layer {name!r} has {x.shape[0]} inputs; this statistic needs at least "
                         f"{1 if tokens else 2}")
    if not np.isfinite(x).all():
        raise ValueError(f"layer {name!r} holds NaN/inf values; fix the model or drop those inputs before measuring")
    return x


def homogenization_tool(acts: Any, *, layers: Any = None, out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: the mean pairwise cosine between distinct tokens of a sequence, averaged over sequences; with two
    or more layers, the depth profile (early/deep means, peak depth, regain)."""
    names = acts.select(layers)
    hom = {n: token_homogenization(_checked(acts, n, tokens=True)) for n in names}
    out: dict[str, Any] = {"layers": {n: {"homogenization": v} for n, v in hom.items()}, "order": names}
    if len(names) >= 2:
        out["profile"] = profile(list(hom.values()))
    if out_dir is not None:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        ax.plot(range(len(names)), list(hom.values()), "o-")
        ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=7)
        ax.set_ylabel("mean pairwise token cosine")
        ax.set_title("token homogenization", fontsize=9)
        out["artifacts"] = {"homogenization": save_figure(fig, os.path.join(out_dir, "token_homogenization.png"))}
    return out


def cka_tool(acts: Any, *, layers: Any = None, max_rows: int = 2000, seed: int = 0,
             out_dir: str | None = None) -> dict[str, Any]:
    """Linear CKA between every pair of layers (tokens as samples when the layers keep them; a seeded subsample of
    at most ``max_rows`` rows). Put two models' layers in one set (distinct names) for the across-model block."""
    names = acts.select(layers)
    if int(max_rows) < 2:
        raise ValueError(f"max_rows must be >= 2, got {max_rows}")
    mats = {n: _checked(acts, n, tokens=False) for n in names}
    m = cka_matrix(mats, max_rows=int(max_rows), seed=seed)
    out: dict[str, Any] = {"names": names, "cka": m,
                           "adjacent": [float(m[i, i + 1]) for i in range(len(names) - 1)]}
    if out_dir is not None:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(4.2, 3.6))
        im = ax.imshow(m, vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(range(len(names)), names, rotation=90, fontsize=6)
        ax.set_yticks(range(len(names)), names, fontsize=6)
        fig.colorbar(im, ax=ax)
        ax.set_title("linear CKA", fontsize=9)
        out["artifacts"] = {"cka": save_figure(fig, os.path.join(out_dir, "layerwise_cka.png"))}
    return out


__all__ = ["homogenization_tool", "cka_tool"]
