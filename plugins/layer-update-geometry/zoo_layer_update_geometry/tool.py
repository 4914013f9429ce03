"""The ``layer-update-geometry`` tool: consecutive layers of an ``ActivationSet`` (N, T, D) (or (N, D), one token per
input), in the order given, read as h_l -> h_{l+1}; every update is split into a tokenwise part and a residual
(``geometry.update_geometry``)."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .geometry import FITS, update_geometry

METRICS = ("align_full", "align_resid", "angle_full", "angle_resid", "proj_tokenwise", "proj_resid", "resid_energy")


def geometry_tool(acts: Any, *, layers: Any = None, fit: str = "linear", k: int | None = None, test_frac: float = 0.25,
                  seed: int = 0, out_dir: str | None = None) -> dict[str, Any]:
    """Per consecutive pair of layers: alignment of the update with its tokenwise part and with the residual,
    angles, shares inside the dominant tokenwise subspace, residual energy; and their means over pairs."""
    names = list(acts.names) if layers is None else ([layers] if isinstance(layers, str) else list(layers))
    missing = [n for n in names if n not in acts.names]
    if missing:
        raise ValueError(f"no layer {missing} in this ActivationSet (it has {acts.names})")
    if len(names) < 2:
        raise ValueError(f"layer updates need at least 2 layers in depth order, got {names}")
    if fit not in FITS:
        raise ValueError(f"unknown tokenwise class fit={fit!r}; choose from {list(FITS)}")
    widths = {n: acts[n].shape[-1] for n in names}
    if len(set(widths.values())) != 1:
        raise ValueError(f"consecutive layers must have the same width D for an update h_(l+1) - h_l; got {widths}")
    if acts.n < 2:
        raise ValueError(f"this tool needs at least 2 inputs (train and held-out sequences), got {acts.n}")
    pairs = {f"{p}->{q}": update_geometry(acts[p], acts[q], fit=fit, k=k, test_frac=test_frac, seed=seed)
             for p, q in zip(names[:-1], names[1:], strict=True)}
    out: dict[str, Any] = {"pairs": pairs, "mean": {m: float(np.mean([v[m] for v in pairs.values()])) for m in METRICS},
                           "fit": fit, "k": next(iter(pairs.values()))["k"]}
    if out_dir is not None:
        plt = pyplot()
        fig, ax = plt.subplots(figsize=(4.8, 3.2))
        x = np.arange(len(pairs))
        for m, style in (("align_full", "o-"), ("align_resid", "s--"), ("proj_tokenwise", "^-"), ("proj_resid", "v--")):
            ax.plot(x, [v[m] for v in pairs.values()], style, label=m)
        ax.set_xticks(x, list(pairs), rotation=45, ha="right", fontsize=6)
        ax.legend(fontsize=6)
        ax.set_title(f"layer updates: tokenwise ({fit}) vs residual", fontsize=9)
        out["artifacts"] = {"geometry": save_figure(fig, os.path.join(out_dir, "layer_update_geometry.png"))}
    return out


__all__ = ["geometry_tool"]
