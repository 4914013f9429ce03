"""The ``repr-inversion`` analysis tool: for every layer of an ``ActivationSet`` (representations of the same N images),
train an up-convolutional decoder back to the images (``inversion.invert``) and report held-out reconstruction MSE and
PSNR against the mean-image baseline. The images come as ``images=`` (an array, or the name of a task whose probe
data the activations were recorded on: ``zoo analyze`` runs), or ``target=`` names a layer of the set to invert to."""
from __future__ import annotations

import math
import os
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from .inversion import DEFAULTS, invert, split


def _images(acts: Any, images: Any, target: str | None, probe_seed: int) -> np.ndarray:
    if images is None and target is None:
        raise ValueError("repr-inversion needs the images to reconstruct: images= (N, C, H, W) array, images='<task>' "
                         "(that task's probe data, as zoo analyze uses), or target='<layer>' of this ActivationSet")
    if images is not None and target is not None:
        raise ValueError("give images= or target=, not both")
    if target is not None:
        x = acts.matrix(target, min_samples=8)
        side = math.isqrt(x.shape[1])
        return (x.reshape(-1, 1, side, side) if side * side == x.shape[1] else x.reshape(-1, 1, 1, x.shape[1]))
    if isinstance(images, str):
        from zoo import registry
        from zoo.registry import resolve_target

        spec = registry.task(images)
        if not spec.probe_data:
            raise ValueError(f"task {images!r} has no probe data; pass images= as an array")
        x, _ = resolve_target(spec.probe_data)(n=acts.n, seed=int(probe_seed))
        images = x
    x = np.asarray(images.detach().cpu().numpy() if hasattr(images, "detach") else images, dtype=np.float32)
    if x.ndim == 3:
        x = x[:, None]
    if x.ndim != 4:
        raise ValueError(f"images must be (N, C, H, W) or (N, H, W), got shape {x.shape}")
    if x.shape[0] != acts.n:
        raise ValueError(f"images hold {x.shape[0]} inputs but the activations hold {acts.n}: the same N images")
    return x


def inversion_tool(acts: Any, *, images: Any = None, target: str | None = None, layers: Any = None,
                   steps: int = DEFAULTS["steps"], lr: float = DEFAULTS["lr"], batch: int = DEFAULTS["batch"],
                   test_fraction: float = DEFAULTS["test_fraction"], seed: int = 0, probe_seed: int = 0,
                   peak: float | None = None, out_dir: str | None = None) -> dict[str, Any]:
    """Held-out reconstruction ``mse``, ``psnr`` (dB) and ``nmse`` (mse / mean-image mse) per layer."""
    x = _images(acts, images, target, probe_seed)
    names = [n for n in acts.select(layers) if n != target]
    if not names:
        raise ValueError("no layer left to invert (the target is the only layer)")
    idx = split(len(x), test_fraction, seed)
    out: dict[str, Any] = {"layers": {}, "n": int(len(x)), "test": int(len(idx[1])), "image_shape": list(x.shape[1:])}
    recons = {}
    for name in names:
        r = invert(acts.matrix(name, min_samples=8), x, steps=steps, lr=lr, batch=batch, seed=seed, peak=peak,
                   split_idx=idx)
        out["layers"][name] = {k: r[k] for k in ("mse", "psnr", "nmse")}
        out["mean_image_mse"], out["mean_image_psnr"], out["peak"] = r["mean_image_mse"], r["mean_image_psnr"], r["peak"]
        recons[name] = r["recon"]
    if out_dir is not None:
        out["artifacts"] = {"repr-inversion": _plot(x[idx[1]], recons, os.path.join(out_dir, "repr_inversion.png"))}
    return out


def _show(im: np.ndarray, lo: float, hi: float) -> np.ndarray:
    im = np.clip((im - lo) / max(hi - lo, 1e-8), 0, 1)
    return im[0] if im.shape[0] != 3 else np.moveaxis(im, 0, -1)


def _plot(truth: np.ndarray, recons: dict[str, np.ndarray], path: str, k: int = 6) -> str:
    plt = pyplot()
    k = min(k, len(truth))
    rows = {"image": truth, **recons}
    lo, hi = float(truth.min()), float(truth.max())
    fig, axes = plt.subplots(len(rows), k, figsize=(1.1 * k + 1, 1.1 * len(rows)), squeeze=False)
    for i, (name, ims) in enumerate(rows.items()):
        for j in range(k):
            ax = axes[i][j]
            ax.imshow(_show(ims[j], lo, hi), cmap="gray", interpolation="nearest")
            ax.set_xticks([])
            ax.set_yticks([])
        axes[i][0].set_ylabel(name, fontsize=7, rotation=0, ha="right")
    return save_figure(fig, path)


__all__ = ["inversion_tool"]
