"""The ``linear-factorization`` analysis tool: each layer of an ``ActivationSet`` (N samples, tokens mean-pooled) with
concept labels per sample; ``zoo.analyze("linear-factorization", {"h": H}, labels=C)`` with C (N, k) on raw arrays."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from . import geometry as G


def _sizes(sizes: Any) -> list[int]:
    if isinstance(sizes, str):
        sizes = [s for s in sizes.replace("x", ",").split(",") if s.strip()]
    out = [int(s) for s in (sizes if isinstance(sizes, (list, tuple)) else [sizes])]
    if len(out) < 2 or min(out) < 2:
        raise ValueError(f"sizes= gives >= 2 concept sizes, each >= 2 (e.g. [2, 5]); got {sizes}")
    return out


def concept_matrix(acts: Any, concepts: Any = None, sizes: Any = None) -> np.ndarray:
    """(N, k) concept labels of an ActivationSet (see the module docstring)."""
    if concepts is not None:
        names = [concepts] if isinstance(concepts, str) else list(concepts)
        bad = [n for n in names if n not in acts.concepts]
        if bad:
            raise ValueError(f"no concept {bad} in this set; it has {sorted(acts.concepts)}")
        return np.column_stack([np.asarray(acts.concepts[n]).reshape(acts.n, -1) for n in names])
    if acts.concepts:
        return np.column_stack([np.asarray(v).reshape(acts.n, -1) for v in acts.concepts.values()])
    if acts.labels is None:
        raise ValueError("linear factorisation needs concept labels: labels (N, k), concepts, or single labels with "
                         "sizes=")
    lab = np.asarray(acts.labels)
    if lab.ndim == 2:
        return lab
    if sizes is None:
        raise ValueError("single labels (N,) are one concept; pass labels (N, k) or sizes= to split them (mixed "
                         "radix, e.g. sizes=[2, 5] reads label l as (l // 5, l % 5))")
    sz = _sizes(sizes)
    lab = lab.astype(np.int64)
    if lab.min() < 0 or lab.max() >= int(np.prod(sz)):
        raise ValueError(f"labels run over 0..{lab.max()}, beyond the {int(np.prod(sz))} combinations of sizes={sz}")
    cols, rest = [], lab.copy()
    for s in reversed(sz):
        cols.append(rest % s)
        rest = rest // s
    return np.column_stack(cols[::-1])


def factorization_tool(acts: Any, *, layers: Any = None, concepts: Any = None, sizes: Any = None,
                       out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: linear-factorisation R^2 (plain, whitened, least squares), per-concept factor rank (k95) and
    cross-concept orthogonality."""
    c = concept_matrix(acts, concepts, sizes)
    out: dict[str, Any] = {"layers": {}}
    spectra = {}
    for name in acts.select(layers):
        x = acts.matrix(name, min_samples=4)
        res = G.analyse(x, c)
        out["layers"][name] = res
        xc = x - x.mean(0)
        spectra[name] = [np.linalg.svd(m, compute_uv=False) for m in G.value_means(xc, G.check_inputs(x, c)[1])]
    if out_dir is not None:
        out["artifacts"] = {"spectra": _plot(spectra, os.path.join(out_dir, "factor_spectra.png"))}
    return out


def _plot(spectra: dict[str, list[np.ndarray]], path: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(spectra), figsize=(3.6 * len(spectra), 3.2), squeeze=False)
    for ax, (name, sv) in zip(axes[0], spectra.items(), strict=False):
        for i, s in enumerate(sv):
            var = s ** 2 / max((s ** 2).sum(), 1e-300)
            ax.plot(np.arange(1, len(var) + 1), np.cumsum(var), marker="o", label=f"concept {i}")
        ax.axhline(0.95, color="grey", ls="--", lw=0.8)
        ax.set_xlabel("factor direction")
        ax.set_ylabel("cumulative variance of value means")
        ax.set_title(name, fontsize=8)
        ax.legend(fontsize=7)
    return save_figure(fig, path)


__all__ = ["factorization_tool", "concept_matrix"]
