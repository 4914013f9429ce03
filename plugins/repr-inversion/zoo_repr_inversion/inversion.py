"""Inverting a representation with an up-convolutional decoder (Dosovitskiy & Brox, CVPR 2016, arXiv:1506.02753).

Section 3 of the paper ("feature inversion" by learning): given images ``x`` and their features ``phi(x)``, train a
decoder ``w`` by minimising the squared reconstruction error ``sum_i ||x_i - f(phi(x_i), w)||^2`` over a training set,
then judge what ``phi`` keeps by how well held-out images come back. The decoders are fully connected layers on the
feature vector followed by up-convolutions (stride-2 transposed convolutions) with leaky ReLU (slope 0.2), trained with
Adam. Shallow features (HOG, LBP) are computed with ``skimage.feature`` here.

What comes from where: the loss, the leaky ReLU 0.2, the fc-then-up-convolution layout and Adam are the paper's; only
the abstract and the catalog entry were at hand otherwise, so sizes are ours and small for 16 x 16 CPU images.

``PAPER`` lists the paper's choices for reference; ``DEFAULTS`` are the CPU ones. Deviations: every representation
(even a conv map) is flattened and z-scored and enters through the fc layers (the paper keeps conv maps spatial for
low layers); two up-convolutions instead of four to five; a few hundred Adam steps instead of ~hundreds of thousands.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

PAPER = {"loss": "squared error over pixels", "activation": "leaky ReLU, slope 0.2", "upconv": "5x5 stride 2",
         "optimizer": "Adam (beta1 0.9, beta2 0.999), lr 1e-4 then lowered", "image": "227 x 227 (ImageNet)"}
DEFAULTS = {"hidden": 256, "channels": 32, "steps": 400, "lr": 2e-3, "batch": 64, "test_fraction": 0.25}
SLOPE = 0.2


class UpConvDecoder(nn.Module):
    """fc(D -> hidden) -> fc(hidden -> 2c x h/4 x w/4) -> upconv(2c -> c, stride 2) -> upconv(c -> c/2, stride 2)
    -> conv3x3(c/2 -> C), leaky ReLU 0.2 between; the output is cropped to (C, H, W)."""

    def __init__(self, in_dim: int, out_shape: tuple[int, int, int], hidden: int = DEFAULTS["hidden"],
                 channels: int = DEFAULTS["channels"]) -> None:
        super().__init__()
        c_out, h, w = (int(v) for v in out_shape)
        self.out_shape = (c_out, h, w)
        self.h0, self.w0 = math.ceil(h / 4), math.ceil(w / 4)
        c = int(channels)
        self.c0 = 2 * c
        act = nn.LeakyReLU(SLOPE)
        self.fc = nn.Sequential(nn.Linear(int(in_dim), int(hidden)), act,
                                nn.Linear(int(hidden), self.c0 * self.h0 * self.w0), act)
        self.up = nn.Sequential(nn.ConvTranspose2d(self.c0, c, 4, stride=2, padding=1), act,
                                nn.ConvTranspose2d(c, c // 2, 4, stride=2, padding=1), act,
                                nn.Conv2d(c // 2, c_out, 3, padding=1))

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        y = self.up(self.fc(z).view(-1, self.c0, self.h0, self.w0))
        c, h, w = self.out_shape
        return y[:, :, :h, :w]


def _check(features: Any, images: Any) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(images, dtype=np.float32)
    if x.ndim == 3:
        x = x[:, None]
    if x.ndim != 4:
        raise ValueError(f"images must be (N, C, H, W) (or (N, H, W)), got shape {x.shape}")
    f = np.asarray(features, dtype=np.float32)
    if f.ndim == 1:
        f = f[:, None]
    f = f.reshape(f.shape[0], -1)
    if f.shape[0] != x.shape[0]:
        raise ValueError(f"features hold {f.shape[0]} inputs but images hold {x.shape[0]}: one feature row per image")
    if x.shape[0] < 8:
        raise ValueError(f"inversion needs at least 8 images (a training and a held-out split), got {x.shape[0]}")
    for name, a in (("features", f), ("images", x)):
        if not np.isfinite(a).all():
            raise ValueError(f"{name} hold NaN/inf values; drop those inputs first")
    return f, x


def split(n: int, test_fraction: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seeded train / held-out index split."""
    if not 0 < float(test_fraction) < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    perm = np.random.default_rng(int(seed)).permutation(int(n))
    k = max(1, int(round(n * float(test_fraction))))
    return perm[k:], perm[:k]


def psnr(mse: float, peak: float) -> float:
    """Peak signal-to-noise ratio in dB, ``10 log10(peak^2 / mse)``."""
    return float(10 * math.log10(peak ** 2 / max(float(mse), 1e-12)))


def invert(features: Any, images: Any, *, steps: int = DEFAULTS["steps"], lr: float = DEFAULTS["lr"],
           batch: int = DEFAULTS["batch"], hidden: int = DEFAULTS["hidden"], channels: int = DEFAULTS["channels"],
           test_fraction: float = DEFAULTS["test_fraction"], seed: int = 0, peak: float | None = None,
           split_idx: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, Any]:
    """Train an ``UpConvDecoder`` from ``features`` (N, D...) to ``images`` (N, C, H, W) on a training split and score
    the held-out split: ``mse`` (per pixel), ``psnr`` (dB, ``peak`` = the images' value range by default),
    ``mean_image_mse`` (predicting the training mean image: what a representation without information gets, the
    data variance), ``nmse`` = mse / mean_image_mse; plus ``recon`` (held-out reconstructions) and ``test_idx``."""
    f, x = _check(features, images)
    if int(steps) < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    tr, te = split(len(x), test_fraction, seed) if split_idx is None else split_idx
    mu, sd = f[tr].mean(0), f[tr].std(0)
    sd = np.where(sd > 1e-8, sd, 1.0)  # constant features become 0 (no information), not NaN
    z = torch.from_numpy((f - mu) / sd)
    xt = torch.from_numpy(x)
    g = torch.Generator().manual_seed(int(seed))
    with torch.random.fork_rng():
        torch.manual_seed(int(seed))
        dec = UpConvDecoder(f.shape[1], x.shape[1:], hidden=hidden, channels=channels)
    opt = torch.optim.Adam(dec.parameters(), lr=float(lr))
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, int(steps))
    trt = torch.from_numpy(tr)
    dec.train()
    for _ in range(int(steps)):
        idx = trt[torch.randint(len(trt), (min(int(batch), len(trt)),), generator=g)]
        loss = ((dec(z[idx]) - xt[idx]) ** 2).mean()  # squared error (Sec. 3), per pixel
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    dec.eval()
    with torch.no_grad():
        rec = dec(z[torch.from_numpy(te)]).numpy()
    mse = float(((rec - x[te]) ** 2).mean())
    base = float(((x[tr].mean(0, keepdims=True) - x[te]) ** 2).mean())
    pk = float(x.max() - x.min()) if peak is None else float(peak)
    return {"mse": mse, "psnr": psnr(mse, pk), "mean_image_mse": base, "mean_image_psnr": psnr(base, pk),
            "nmse": mse / max(base, 1e-12), "peak": pk, "recon": rec, "test_idx": te, "decoder": dec}


def hog_features(images: Any, *, orientations: int = 9, cell: int = 4) -> np.ndarray:
    """HOG descriptors (``skimage.feature.hog``, cells of ``cell`` pixels, 2x2-cell blocks, L2-Hys) of (N, C, H, W)
    images, colour images by the strongest-gradient channel as skimage does."""
    from skimage.feature import hog

    x = np.asarray(images, dtype=np.float32)
    if x.ndim != 4:
        raise ValueError(f"images must be (N, C, H, W), got shape {x.shape}")
    kw = {"orientations": int(orientations), "pixels_per_cell": (cell, cell), "cells_per_block": (2, 2),
          "feature_vector": True}
    if x.shape[1] == 1:
        return np.stack([hog(im[0], **kw) for im in x]).astype(np.float32)
    return np.stack([hog(np.moveaxis(im, 0, -1), channel_axis=-1, **kw) for im in x]).astype(np.float32)


def lbp_features(images: Any, *, points: int = 8, radius: float = 1.0, cell: int = 4) -> np.ndarray:
    """Uniform LBP codes (``skimage.feature.local_binary_pattern`` on the grey image) histogrammed per ``cell`` x
    ``cell`` block: (N, cells * (points + 2))."""
    from skimage.feature import local_binary_pattern

    x = np.asarray(images, dtype=np.float32)
    if x.ndim != 4:
        raise ValueError(f"images must be (N, C, H, W), got shape {x.shape}")
    grey = x.mean(1)
    lo, hi = float(grey.min()), float(grey.max())
    grey = np.round(255 * (grey - lo) / max(hi - lo, 1e-8)).astype(np.uint8)
    nb = int(points) + 2
    h, w = grey.shape[1:]
    out = []
    for im in grey:
        codes = local_binary_pattern(im, int(points), float(radius), method="uniform").astype(np.int64)
        hist = [np.bincount(codes[i:i + cell, j:j + cell].ravel(), minlength=nb)[:nb]
                for i in range(0, h - cell + 1, cell) for j in range(0, w - cell + 1, cell)]
        out.append(np.concatenate(hist) / float(cell * cell))
    return np.asarray(out, dtype=np.float32)


__all__ = ["DEFAULTS", "PAPER", "UpConvDecoder", "hog_features", "invert", "lbp_features", "psnr", "split"]
