"""Figures of ``operator_learn``: input, target, prediction and error of a few test functions at each resolution.

One PNG per (panel, resolution): ``input_<res>.png``, ``target_<res>.png``, ``prediction_<res>.png``,
``error_<res>.png`` (matplotlib's Agg backend; curves for 1D problems, images for 2D).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from zoo.figures import pyplot, save_figure

PANELS = ("input", "target", "prediction", "error")
EXAMPLES = 3  # test functions drawn per figure (1D: overlaid curves; 2D: side by side)


def save_examples(out_dir: Path, preds: dict[int, tuple[Any, torch.Tensor]], *, kind: str = "grid",
                  title: str = "") -> dict[str, str]:
    """Write the four panels at every resolution of ``preds`` (``{res: (OperatorData, prediction)}``; a points
    model's prediction (n, N, C) is put back on the grid); return ``{"<panel>_<res>": path}``."""
    plt = pyplot()

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}
    for res, (d, pred) in preds.items():
        pred = pred.detach().cpu().numpy()
        if kind == "points":  # (n, N, C) in C order -> (n, C, *grid)
            pred = np.moveaxis(pred.reshape(pred.shape[0], *d.u.shape[2:], pred.shape[-1]), -1, 1)
        k = min(EXAMPLES, d.n)
        fields = {"input": d.a[:k, 0], "target": d.u[:k, 0], "prediction": pred[:k, 0],
                  "error": pred[:k, 0] - d.u[:k, 0]}
        x = d.coords[..., 0] if d.coords.ndim == 2 else None
        for panel, f in fields.items():
            if f.ndim == 2:  # 1D: k curves
                fig, ax = plt.subplots(figsize=(6, 3.2))
                for i in range(k):
                    ax.plot(x, f[i], lw=1.2, label=f"test {i}")
                ax.set_xlabel("x")
                ax.legend(loc="upper right", fontsize=7)
            else:  # 2D: k images side by side
                fig, axes = plt.subplots(1, k, figsize=(3.2 * k, 3.2), squeeze=False)
                lim = float(np.abs(f).max()) or 1.0
                for i, ax in enumerate(axes[0]):
                    im = ax.imshow(f[i], origin="lower", extent=(0, 1, 0, 1), cmap="RdBu_r" if panel == "error" else "viridis",
                                   **({"vmin": -lim, "vmax": lim} if panel == "error" else {}))
                    ax.set_title(f"test {i}", fontsize=8)
                    ax.axis("off")
                fig.colorbar(im, ax=axes[0].tolist(), shrink=0.8)
            fig.suptitle(f"{title}: {panel} at {res} points" + (" per axis" if f.ndim == 3 else ""), fontsize=9)
            path = out_dir / f"{panel}_{res}.png"
            paths[f"{panel}_{res}"] = save_figure(fig, path, dpi=90, tight=False)
    return paths
