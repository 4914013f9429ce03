"""The ``kernel_analysis`` tool: kernel-analysis curves (``kernel.kernel_analysis_curve``) of every layer of an
``ActivationSet`` with labels (``zoo.analyze("kernel_analysis", {"pixels": X, "net": F}, labels=y)``)."""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from zoo.figures import pyplot, save_figure

from .kernel import SCALES, kernel_analysis_curve


def kernel_analysis(acts: Any, *, layers: Sequence[str] | str | None = None, d_max: int | None = None,
                    scales: Sequence[float] = SCALES, loss: str = "error", pool: str = "mean",
                    out_dir: str | None = None) -> dict[str, Any]:
    """Per layer (all by default): the leave-one-out ``loss`` of a linear classifier on the top-d RBF kernel principal
    components, d = 1..d_max, and the curve's area (lower: the labels live in fewer leading components)."""
    names = [layers] if isinstance(layers, str) else list(layers or acts.names)
    results = {}
    for name in names:
        x = acts.matrix(name, min_samples=10, pool=pool, needs_labels=True)
        results[name] = kernel_analysis_curve(x, acts.labels, d_max=d_max, scales=scales, loss=loss)
    d = min(len(r["d"]) for r in results.values())
    out: dict[str, Any] = {"layers": results, "area": {k: r["area"] for k, r in results.items()},
                           "best": min(results, key=lambda k: results[k]["area"]), "loss": loss, "d_max": d}
    if out_dir is not None:
        out["artifacts"] = {"curves": _plot(results, loss, os.path.join(out_dir, "kernel_analysis.png"))}
    return out


def _plot(results: dict[str, dict[str, Any]], loss: str, path: str) -> str:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for name, r in results.items():
        ax.plot(r["d"], r["curve"], label=f"{name} (area {r['area']:.3f})")
    ax.set_xscale("log")
    ax.set_xlabel("d (leading kernel principal components)")
    ax.set_ylabel("leave-one-out " + ("error" if loss == "error" else "squared loss"))
    ax.set_title("kernel analysis")
    ax.legend(fontsize=7)
    return save_figure(fig, path)
