"""The ``riemannian-dimension`` analysis tool: the layers of an ``ActivationSet``, in forward order (put the network
input first to count the first layer: ``zoo.analyze("riemannian-dimension", {"x": X, "h1": H1, "h2": H2, "out": Z})``;
tokens are mean-pooled), read as one fully connected net's per-layer features on its N training inputs."""
from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .dimension import FORMS, norm_bound, riemannian_dimension


def riemannian_tool(acts: Any, *, layers: Any = None, eps: float | None = None, form: str = "ridge",
                    delta: float = 0.05, weights: Any = None, biases: Any = None, margin: float | None = None,
                    out_dir: str | None = None) -> dict[str, Any]:
    """Per-layer spectra and effective dimensions, the pointwise Riemannian Dimension d_R and its bound, and the
    size-based bound (the widths' parameter count); with ``weights`` (list of (out, in) arrays, input first) and
    ``margin`` also the Frobenius-product norm bound (input norm from the first layer)."""
    names = list(acts.names)
    wanted = names if layers is None else ([layers] if isinstance(layers, str) else list(layers))
    missing = [n for n in wanted if n not in names]
    if missing:
        raise ValueError(f"no layer {missing} in this ActivationSet (it has {names})")
    if len(wanted) < 2:
        raise ValueError(f"riemannian-dimension needs at least 2 layers in forward order (the input first, then each "
                         f"layer's output); got {wanted}")
    if form not in FORMS:
        raise ValueError(f"unknown form {form!r}; choose from {list(FORMS)}")
    feats = [acts.matrix(n, min_samples=3) for n in wanted]
    res = riemannian_dimension(feats, eps=eps, form=form, delta=delta)
    out: dict[str, Any] = {
        "n": res["n"], "eps": res["eps"], "form": form, "dim": res["dim"], "params": res["params"],
        "dim_bound": res["dim_bound"], "size_bound": res["size_bound"],
        "log10_size_over_dim": res["log10_size_over_dim"],
        "layers": {n: {"width": w, "rank": r, "compression": c, "spectrum": s}
                   for n, w, r, c, s in zip(wanted, res["widths"], res["ranks"], res["compression"], res["spectra"],
                                            strict=True)},
        "layer_dims": dict(zip(wanted[1:], res["layer_dims"], strict=True)),
    }
    if weights is not None:
        if margin is None:
            raise ValueError("the norm bound needs margin= (the classification margin gamma > 0) with weights=")
        ws = [np.asarray(w, dtype=np.float64) for w in weights]
        b_in = float(np.sqrt((feats[0] ** 2).sum(axis=1) + (0.0 if biases is None else 1.0)).max())
        nb = norm_bound(ws, biases, input_norm=b_in, margin=float(margin), n=res["n"], delta=delta)
        out["norm_bound"] = nb
        out["log10_norm_over_dim"] = math.log10(nb / res["dim_bound"])
    if out_dir is not None:
        out["artifacts"] = {"spectra": _plot(wanted, res, os.path.join(out_dir, "feature_spectra.png"))}
    return out


def _plot(names: list[str], res: dict[str, Any], path: str) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for i, (name, s) in enumerate(zip(names, res["spectra"], strict=True)):
        s = np.asarray(s)
        p = s / s.sum() if s.sum() > 0 else s
        p = p[p > 0]
        ax.loglog(np.arange(1, p.size + 1), p, color=f"C{i % 10}", label=f"{name} (r={res['ranks'][i]:.1f})")
    ax.axhline(res["eps"], color="k", ls="--", lw=0.8)
    ax.set_xlabel("eigenvalue index")
    ax.set_ylabel("share of the trace")
    ax.set_title(f"feature spectra; d_R = {res['dim']:.0f} of {res['params']} params")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


__all__ = ["riemannian_tool"]
