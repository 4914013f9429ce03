"""The ``second-order-lens`` analysis tool: each layer of an ``ActivationSet`` holds neurons' second-order effects,
(N images, neurons, D) or (N, D) for one neuron, in the joint text-image space. ``zoo.analyze("second-order-lens",
{"effects": phi}, texts=T, words=W)`` on arrays, or on the tiny CLIP's hooked ``lens`` layer:
``zoo analyze second-order-lens tiny_clip_digits --set trained=true --layers lens``."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .lens import _check_effects, lens_statistics, omp


def lens_tool(acts: Any, *, layers: Any = None, energy: float = 0.9, texts: Any = None, words: Any = None,
              atoms: int = 5, describe: int = 5, out_dir: str | None = None) -> dict[str, Any]:
    """Per layer: each neuron's mean effect norm, selectivity (fraction of images carrying ``energy`` of its squared
    deviation from the mean effect), the explained share of its top direction (all images; significant images), and
    for the ``describe`` neurons of largest effect, an OMP decomposition of their direction over ``texts`` (K, D)
    text embeddings named by ``words`` (K strings; default "text 0", ...)."""
    if int(describe) < 0:
        raise ValueError(f"describe must be >= 0, got {describe}")
    dic = None
    if texts is not None:
        dic = np.asarray(texts, dtype=np.float64)
        if dic.ndim != 2:
            raise ValueError(f"texts must be a (K, D) array of text embeddings, got shape {dic.shape}")
        words = [f"text {i}" for i in range(len(dic))] if words is None else [str(w) for w in words]
        if len(words) != len(dic):
            raise ValueError(f"words names {len(words)} texts but texts holds {len(dic)} embeddings")
    elif words is not None:
        raise ValueError("words= names the rows of texts=; pass texts (K, D) too")
    out: dict[str, Any] = {"layers": {}}
    stats_by_layer = {}
    for name in acts.select(layers):
        e = _check_effects(acts[name], f"layer {name!r}")
        if dic is not None and dic.shape[1] != e.shape[2]:
            raise ValueError(f"texts have D = {dic.shape[1]} but layer {name!r} effects have D = {e.shape[2]}: "
                             "both must live in the same joint space")
        st = lens_statistics(e, energy=energy)
        stats_by_layer[name] = st
        top = np.argsort(-st["mean_norm"], kind="stable")[: int(describe)]
        described = []
        for j in top:
            item: dict[str, Any] = {"neuron": int(j), "mean_norm": float(st["mean_norm"][j]),
                                    "selectivity": float(st["selectivity"][j]), "explained": float(st["explained"][j])}
            if dic is not None:
                idx, coef, resid = omp(st["direction"][j], dic, atoms=int(atoms))
                item.update(texts=[words[i] for i in idx], coefficients=coef, residual=resid)
            described.append(item)
        out["layers"][name] = {
            "n_images": int(e.shape[0]), "n_neurons": int(e.shape[1]), "energy": float(energy),
            "mean_norm": st["mean_norm"], "selectivity": st["selectivity"], "explained": st["explained"],
            "explained_significant": st["explained_significant"],
            "median_selectivity": float(np.median(st["selectivity"])),
            "mean_explained": float(np.mean(st["explained"])), "top_neurons": described}
    if out_dir is not None:
        out["artifacts"] = {"lens": _plot(stats_by_layer, os.path.join(out_dir, "second_order_lens.png"))}
    return out


def _plot(stats: dict[str, Any], path: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(7.5, 3.2))
    for name, st in stats.items():
        axes[0].hist(st["selectivity"], bins=30, range=(0, 1), alpha=0.6, label=name)
        axes[1].hist(st["explained"], bins=30, range=(0, 1), alpha=0.6, label=name)
    axes[0].set_xlabel("selectivity (fraction of images)")
    axes[1].set_xlabel("variance explained by one direction")
    axes[0].set_ylabel("neurons")
    axes[1].legend(fontsize=7)
    return save_figure(fig, path)


__all__ = ["lens_tool"]
