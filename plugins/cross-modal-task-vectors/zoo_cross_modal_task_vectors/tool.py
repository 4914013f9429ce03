"""The ``task-vector-similarity`` analysis tool: each layer of an ``ActivationSet`` (a model's last-token states over
prompts, or raw arrays as ``zoo.analyze("task-vector-similarity", {"h": H}, labels=task, spec=spec)``) is read as N
points in D dimensions (tokens are pooled by ``pool``, default the last token), grouped by task label and, when given,
by how the task was specified."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .similarity import spec_similarity


def _spec(acts: Any, spec: Any) -> np.ndarray | None:
    if spec is None:
        spec = acts.concepts.get("spec")
    elif isinstance(spec, str):
        if spec not in acts.concepts:
            raise ValueError(f"spec={spec!r} names no concept of this ActivationSet (it has {sorted(acts.concepts)}); "
                             "pass an (N,) array of specification labels or a concept name")
        spec = acts.concepts[spec]
    if spec is None:
        return None
    spec = np.asarray(spec)
    if spec.shape != (acts.n,):
        raise ValueError(f"spec has shape {spec.shape}; expected ({acts.n},): one specification label per input")
    return spec


def similarity_tool(acts: Any, *, layers: Any = None, spec: Any = None, center: bool = True, pool: str = "last",
                    out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: the cosine matrix of the (task, spec) group means and the same-task / different-task summary
    (``similarity.spec_similarity``). Labels (task per input) are required; ``spec`` (an (N,) array or the name of a
    concept; default the concept "spec" when present) says how each input specified its task."""
    if acts.labels is None:
        raise ValueError("task-vector-similarity needs labels: the task of every input (labels=...)")
    s = _spec(acts, spec)
    labels = np.asarray(acts.labels)
    if len(np.unique(labels)) < 2 and s is None:
        raise ValueError("task-vector-similarity needs at least two tasks (distinct labels) or a spec")
    out: dict[str, Any] = {"layers": {}}
    for name in acts.select(layers):
        x = acts.matrix(name, min_samples=2, pool=pool, needs_labels=True)
        out["layers"][name] = spec_similarity(x, labels, s, center=bool(center))
    if out_dir is not None:
        out["artifacts"] = {"cosine": _plot(out["layers"], os.path.join(out_dir, "task_vector_cosine.png"))}
    return out


def _plot(layers: dict[str, Any], path: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(layers), figsize=(3.8 * len(layers), 3.4), squeeze=False)
    for ax, (name, r) in zip(axes[0], layers.items(), strict=True):
        im = ax.imshow(r["cosine"], vmin=-1, vmax=1, cmap="RdBu_r")
        k = len(r["groups"])
        if k <= 24:
            ax.set_xticks(range(k), r["groups"], rotation=90, fontsize=5)
            ax.set_yticks(range(k), r["groups"], fontsize=5)
        ax.set_title(f"{name}: gap {r['gap']:.2f}" if r["gap"] is not None else name, fontsize=8)
        fig.colorbar(im, ax=ax, fraction=0.046)
    return save_figure(fig, path)


__all__ = ["similarity_tool"]
