"""The ``feature-merging`` analysis tool: per layer of an ``ActivationSet``, the features are the COLUMNS (a
model's activations over N inputs, or a transposed incoming-weight matrix [W_in | b_in].T); features that are
positive multiples of each other within a tolerance are merged iteratively (``ifm.merge_groups``) and the feature
complexity is the number left."""
from __future__ import annotations

import os
from typing import Any

from zoo.figures import pyplot, save_figure

from .ifm import feature_complexity, merge_groups

DEFAULT_TOLS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
DEFAULT_TOL = 0.3
MAX_FEATURES = 4096



def feature_merging_tool(acts: Any, *, layers: Any = None, tol: float = DEFAULT_TOL, tols: Any = None,
                         out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: the feature complexity on the tolerance grid and the groups merged at ``tol``."""
    grid = sorted({float(t) for t in (DEFAULT_TOLS if tols is None else
                                      ([tols] if isinstance(tols, (int, float, str)) else tols))} | {float(tol)})
    out: dict[str, Any] = {"layers": {}}
    for name in acts.select(layers):
        x = acts.matrix(name, min_samples=1).T  # features x samples
        if x.shape[0] > MAX_FEATURES:
            raise ValueError(f"layer {name!r} has {x.shape[0]} features; this tool merges at most {MAX_FEATURES} "
                             "(pairwise distances): choose another layer or pool it")
        g = merge_groups(x, tol)
        groups: dict[str, list[int]] = {}
        for j, k in enumerate(g["assign"]):
            if k >= 0 and k != j:
                groups.setdefault(str(int(k)), []).append(j)
        h = x.shape[0]
        out["layers"][name] = {"features": h, "zero": g["zero"],
                               "complexity": {f"{t:g}": c for t, c in feature_complexity(x, grid).items()},
                               "tol": float(tol), "left": int(len(g["keep"])),
                               "merged_fraction": 1.0 - len(g["keep"]) / h, "groups": groups}
    if out_dir is not None:
        out["artifacts"] = {"complexity": _plot(out["layers"], os.path.join(out_dir, "feature_complexity.png"))}
    return out


def _plot(layers: dict[str, Any], path: str) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for i, (name, r) in enumerate(layers.items()):
        ts = [float(t) for t in r["complexity"]]
        ax.plot(ts, [c / r["features"] for c in r["complexity"].values()], marker="o", color=f"C{i % 10}", label=name)
    ax.set_xlabel("merge tolerance (unit-direction distance)")
    ax.set_ylabel("features left / features")
    ax.set_title("feature complexity (Iterative Feature Merging)")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


__all__ = ["feature_merging_tool"]
