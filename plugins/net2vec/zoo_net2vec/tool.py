"""The ``net2vec`` analysis tool: each layer of an ``ActivationSet`` is read as K filter responses, either flattened
activation maps (N, K*h*w; give ``channels=K``, as ``zoo.activations(..., pool=None)`` records conv layers) or pooled
responses (N, K). Concepts are the set's labels (one concept per class), ``labels=`` (N, C) 0/1, and, for
segmentation, ``masks=``: (N, C, H, W) concept masks or (N, H, W) object masks (the object's mask goes to the
concept of its label)."""
from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .net2vec import DEFAULT_LR, DEFAULT_STEPS, TOP_KS, concept_masks, net2vec


def _maps(x: np.ndarray, channels: int | None, name: str) -> np.ndarray:
    if channels is None:
        return x
    k = int(channels)
    if k < 1 or x.shape[1] % k:
        raise ValueError(f"layer {name!r} has {x.shape[1]} features, not a multiple of channels={channels}")
    hw = x.shape[1] // k
    side = math.isqrt(hw)
    if side * side != hw:
        raise ValueError(f"layer {name!r}: {x.shape[1]} features / {k} channels = {hw} pixels, not a square map; "
                         "net2vec reads flattened (N, K, h, h) maps")
    return x.reshape(x.shape[0], k, side, side)


def net2vec_tool(acts: Any, *, layers: Any = None, channels: int | None = None, labels: Any = None,
                 masks: Any = None, steps: int = DEFAULT_STEPS, lr: float = DEFAULT_LR, test_fraction: float = 0.3,
                 seed: int = 0, top_ks: Any = TOP_KS, out_dir: str | None = None) -> dict[str, Any]:
    """Per layer and concept: Net2Vec embedding vs best single filter (segmentation set IoU when masks are given,
    pooled-response probe balanced accuracy always), filters needed, top-filter weight share, concept similarity."""
    y = labels if labels is not None else acts.labels
    if y is None:
        raise ValueError("net2vec needs concepts: labels on the ActivationSet (one concept per class) or labels= "
                         "(N, C) 0/1")
    y = np.asarray(y)
    if y.ndim == 1:
        if not np.issubdtype(y.dtype, np.integer) and not np.all(np.mod(y, 1) == 0):
            raise ValueError("1-D labels must be class indices (one concept per class)")
        y = np.eye(int(y.max()) + 1)[y.astype(np.int64)]
    m = None
    if masks is not None:
        m = np.asarray(masks)
        if m.ndim == 3:
            m = concept_masks(m, y.argmax(1), y.shape[1])
    out: dict[str, Any] = {"concepts": y.shape[1], "layers": {}}
    for name in acts.select(layers):
        x = _maps(acts.matrix(name, min_samples=4), channels, name)
        if m is not None and x.ndim != 4:
            raise ValueError(f"segmentation masks need maps: pass channels=K so layer {name!r} is read as (N, K, h, w)")
        r = net2vec(x, masks=m, labels=y, steps=steps, lr=lr, test_fraction=test_fraction, seed=seed,
                    top_ks=tuple(int(k) for k in top_ks))
        res = {k: v for k, v in r.items() if k not in ("embeddings", "topk_iou")}
        if "topk_iou" in r:
            res["topk_iou"] = {str(k): v for k, v in r["topk_iou"].items()}
        res["mean_probe_acc"] = float(np.mean(r["probe_acc"]))
        res["mean_single_probe_acc"] = float(np.mean(r["single_probe_acc"]))
        if "seg_iou" in r:
            res["mean_seg_iou"] = float(np.mean(r["seg_iou"]))
            res["mean_single_iou"] = float(np.mean(r["single_iou"]))
        out["layers"][name] = res
    if out_dir is not None:
        out["artifacts"] = {"net2vec": _plot(out["layers"], os.path.join(out_dir, "net2vec.png"))}
    return out


def _plot(res: dict[str, Any], path: str) -> str:
    plt = pyplot()
    fig, axes = plt.subplots(1, len(res), figsize=(3.2 * len(res) + 0.5, 3.2), squeeze=False)
    for ax, (name, r) in zip(axes[0], res.items(), strict=True):
        key, single, what = (("seg_iou", "single_iou", "set IoU") if "seg_iou" in r
                             else ("probe_acc", "single_probe_acc", "balanced accuracy"))
        c = np.arange(len(r[key]))
        ax.bar(c - 0.2, r[key], 0.4, label="net2vec")
        ax.bar(c + 0.2, r[single], 0.4, label="best single filter")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("concept")
        ax.set_ylabel(what)
    axes[0][0].legend(fontsize=7)
    return save_figure(fig, path)


__all__ = ["net2vec_tool"]
