"""The ``epsilon-estimate`` and ``capacity`` analysis tools: each layer of an ``ActivationSet`` (an embedding matrix
as ``zoo.analyze("epsilon-estimate", {"E": E})``, or a model's activations over inputs) is read as a set of N vectors
in d dimensions (tokens are mean-pooled)."""
from __future__ import annotations

import os
from typing import Any

from zoo.figures import pyplot, save_figure

from .capacity import DEFAULT_C, capacity, epsilon_estimate, pairwise_cosines


def epsilon_tool(acts: Any, *, layers: Any = None, out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: epsilon and the pairwise-cosine statistics of its N vectors (see ``capacity.epsilon_estimate``)."""
    out: dict[str, Any] = {"layers": {}}
    for name in acts.select(layers):
        out["layers"][name] = epsilon_estimate(acts.matrix(name, min_samples=3))
    if out_dir is not None:
        out["artifacts"] = {"cosines": _plot(acts, list(out["layers"]), out["layers"],
                                             os.path.join(out_dir, "cosine_distribution.png"))}
    return out


def capacity_tool(acts: Any, *, layers: Any = None, c: float = DEFAULT_C, eps: float | None = None) -> dict[str, Any]:
    """Per layer: epsilon (measured, or ``eps`` when given) and the JL and k/d-adjusted capacities at the layer's d,
    with the dimension each formula says the layer's N vectors need."""
    out: dict[str, Any] = {"layers": {}}
    for name in acts.select(layers):
        x = acts.matrix(name, min_samples=3)
        est = epsilon_estimate(x)
        e = float(eps) if eps is not None else min(est["eps"], 1.0)
        if e <= 0:
            raise ValueError(f"layer {name!r} has epsilon 0 (its vectors are exactly orthogonal): capacity needs eps > 0; "
                             "pass eps=")
        out["layers"][name] = {"eps": e, "eps_measured": est["eps"], "near_orthogonal": est["eps"] < 1.0,
                               **capacity(x.shape[1], e, c=c, k=x.shape[0])}
    return out


def _plot(acts: Any, names: list[str], ests: dict[str, Any], path: str) -> str:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for i, name in enumerate(names):
        cos = pairwise_cosines(acts.matrix(name, min_samples=3))
        ax.hist(cos, bins=60, density=True, histtype="step", color=f"C{i % 10}", label=name)
        ax.axvline(ests[name]["center"] + ests[name]["eps"] - abs(ests[name]["center"]), color=f"C{i % 10}", ls="--")
    ax.set_xlabel("pairwise cosine similarity")
    ax.set_title("cosine distribution; dashed: epsilon")
    ax.legend(fontsize=7)
    return save_figure(fig, path)


__all__ = ["epsilon_tool", "capacity_tool"]
