"""PNG figures of vsa_bench (matplotlib, Agg backend): error-vs-dimension curves and iteration histograms."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from zoo.figures import pyplot, save_figure


def _save(fig, path: str | Path) -> str:
    return save_figure(fig, path)


def curves(path: str | Path, x: Sequence[float], series: Mapping[str, Sequence[float]], *, xlabel: str, ylabel: str,
           title: str, dashed: Sequence[str] = (), logy: bool = True, hline: float | None = None) -> str:
    """One line per series over ``x`` (log2 x-axis); series named in ``dashed`` (bounds, references) are dashed."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, ys in series.items():
        ys = [max(float(v), 1e-6) for v in ys] if logy else [float(v) for v in ys]
        ax.plot(list(x), ys, "--" if label in dashed else "o-", label=label)
    if hline is not None:
        ax.axhline(hline, color="grey", lw=0.8, ls=":", label=f"target {hline:g}")
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    ax.legend(fontsize=7)
    return _save(fig, path)


def histogram(path: str | Path, values: Mapping[str, Sequence[float]], *, xlabel: str, title: str) -> str:
    """Overlaid histograms, one per entry (e.g. iterations to converge per model)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, v in values.items():
        ax.hist(list(v), bins=30, alpha=0.5, label=label)
    ax.set(xlabel=xlabel, ylabel="problems", title=title)
    ax.legend(fontsize=7)
    return _save(fig, path)
