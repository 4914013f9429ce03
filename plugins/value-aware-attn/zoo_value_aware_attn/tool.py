"""The ``value-aware-attn`` analysis tool: value-oblivious vs value-aware sparse attention errors from an
``ActivationSet`` holding queries, keys and values (``zoo.analyze("value-aware-attn", {"q": Q, "k": K, "v": V})``)."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .value_aware import KERNELS, compare


def _heads(x: np.ndarray, heads: int, name: str) -> np.ndarray:
    if x.ndim != 3:
        raise ValueError(f"layer {name!r} has shape {x.shape}: value-aware-attn needs (N, T, D) tokens (record the "
                         "layer with pool=None)")
    n, t, d = x.shape
    if d % heads:
        raise ValueError(f"layer {name!r} has {d} features, not a multiple of heads={heads}")
    return x.reshape(n, t, heads, d // heads).transpose(0, 2, 1, 3).reshape(n * heads, t, d // heads)


def _find(acts: Any, name: str) -> str:
    """``name`` itself, else the one layer whose module path ends in ``.name`` (``blocks.0.attn.q`` for ``q``)."""
    names = list(acts.names)
    if name in names:
        return name
    hits = [n for n in names if n.endswith(f".{name}")]
    if len(hits) == 1:
        return hits[0]
    raise ValueError(f"value-aware-attn needs a layer {name!r} (or exactly one ending in '.{name}'); the set has "
                     f"{names}: pass q=, k=, v= with the layer names")


def value_aware_error(acts: Any, *, q: str = "q", k: str = "k", v: str = "v", heads: int = 1,
                      r: Sequence[int] = (2, 4, 8), kernels: Sequence[str] = KERNELS,
                      temperatures: Sequence[float] = (0.5, 1.0, 2.0, 4.0), causal: bool = True,
                      exhaustive_limit: int = 3000, out_dir: str | None = None) -> dict[str, Any]:
    """Relative output errors of the best value-oblivious (top-r) and value-aware r-sparse approximations of the
    attention of layers ``q``, ``k``, ``v`` (each (N, T, heads * d)), per kernel and r (see ``value_aware``)."""
    arrays = []
    for name in (_find(acts, q), _find(acts, k), _find(acts, v)):
        x = acts[name]
        if not np.isfinite(x).all():
            raise ValueError(f"layer {name!r} holds NaN/inf values; fix the model before measuring")
        arrays.append(_heads(np.asarray(x, dtype=np.float64), heads, name))
    results = compare(*arrays, r=r, kernels=kernels, temperatures=temperatures, causal=causal,
                      exhaustive_limit=exhaustive_limit)
    out: dict[str, Any] = {"results": results, "r": list(r), "rows": int(arrays[0].shape[0] * arrays[0].shape[1])}
    if out_dir is not None:
        out["artifacts"] = {"errors": _plot(results, list(r), os.path.join(out_dir, "value_aware_errors.png"))}
    return out


def _plot(results: dict[str, dict[str, float]], rs: list[int], path: str) -> str:
    plt = pyplot()

    labels = list(dict.fromkeys(key.split("/r=")[0] for key in results))
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for i, label in enumerate(labels):
        color = f"C{i % 10}"
        ax.plot(rs, [results[f"{label}/r={x}"]["oblivious_raw"] for x in rs], "--", color=color, marker="o")
        ax.plot(rs, [results[f"{label}/r={x}"]["aware"] for x in rs], "-", color=color, marker="o", label=label)
    ax.set_xlabel("r (kept keys per query)")
    ax.set_ylabel("relative output error")
    ax.set_title("top-r (dashed) vs value-aware (solid)")
    ax.legend(fontsize=7)
    return save_figure(fig, path)
