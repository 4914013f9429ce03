"""Random views for self-supervised pretraining, batched and driven by an explicit ``torch.Generator``.

Images (``image_views``): a random resized crop (area fraction in ``scale``, aspect ratio log-uniform in ``ratio`` =
[3/4, 4/3], position uniform where the crop fits) resampled bilinearly to the input size, a horizontal flip with
probability ``flip`` (Fashion-MNIST only: digits are not mirror-symmetric), brightness and contrast jitter of
+-``jitter`` and Gaussian noise of std ``noise``, clamped to [0, 1]. A SimCLR/SimSiam-style recipe cut to grey, small images.

Series (``series_views``): a random crop of ``crop`` of the length (fraction uniform in the range) linearly resized
back to the full length, a scaling by a factor uniform in [1 - ``scaling``, 1 + ``scaling``], and jitter: Gaussian
noise of std ``jitter`` times the series' own std (relative, so it means the same on raw multi-scale values).
"""
from __future__ import annotations

import math

import torch
from torch.nn import functional as F

IMAGE_AUG = {
    "fashion_mnist": {"scale": (0.35, 1.0), "flip": 0.5, "jitter": 0.4, "noise": 0.05},
    "digits": {"scale": (0.6, 1.0), "flip": 0.0, "jitter": 0.4, "noise": 0.05},
}
SERIES_AUG = {"crop": (0.6, 1.0), "scaling": 0.2, "jitter": 0.05}


def _uniform(n: int, lo: float, hi: float, g: torch.Generator) -> torch.Tensor:
    return lo + (hi - lo) * torch.rand(n, generator=g)


def image_view(x: torch.Tensor, g: torch.Generator, *, scale: tuple[float, float] = (0.35, 1.0), flip: float = 0.5,
               jitter: float = 0.4, noise: float = 0.05, ratio: tuple[float, float] = (3 / 4, 4 / 3)) -> torch.Tensor:
    """One random view of every image of ``x`` (B, C, H, W) in [0, 1] (see the module docstring).

    >>> g = torch.Generator().manual_seed(0)
    >>> x = torch.rand(3, 1, 8, 8)
    >>> same = image_view(x, g, scale=(1.0, 1.0), ratio=(1.0, 1.0), flip=0.0, jitter=0.0, noise=0.0)
    >>> bool(torch.allclose(same, x, atol=1e-5))
    True
    """
    b = x.shape[0]
    area = _uniform(b, *scale, g)
    aspect = torch.exp(_uniform(b, math.log(ratio[0]), math.log(ratio[1]), g))
    sw = torch.sqrt(area * aspect).clamp(max=1.0)  # crop width / image width
    sh = torch.sqrt(area / aspect).clamp(max=1.0)
    cx = (1 - sw) * (2 * torch.rand(b, generator=g) - 1)  # centre in [-1 + sw, 1 - sw] (normalised coordinates)
    cy = (1 - sh) * (2 * torch.rand(b, generator=g) - 1)
    mirror = torch.where(torch.rand(b, generator=g) < flip, -1.0, 1.0)
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0], theta[:, 0, 2] = sw * mirror, cx
    theta[:, 1, 1], theta[:, 1, 2] = sh, cy
    grid = F.affine_grid(theta.to(x), list(x.shape), align_corners=False)
    v = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    bright = _uniform(b, -jitter, jitter, g).view(b, 1, 1, 1).to(x) * 0.5
    contrast = (1 + _uniform(b, -jitter, jitter, g)).view(b, 1, 1, 1).to(x)
    mean = v.mean(dim=(1, 2, 3), keepdim=True)
    v = (v - mean) * contrast + mean + bright
    if noise:
        v = v + noise * torch.randn(v.shape, generator=g).to(x)
    return v.clamp(0.0, 1.0)


def series_view(x: torch.Tensor, g: torch.Generator, *, crop: tuple[float, float] = (0.6, 1.0), scaling: float = 0.2,
                jitter: float = 0.05) -> torch.Tensor:
    """One random view of every series of ``x`` (B, L) (see the module docstring).

    >>> x = torch.arange(12.0).view(2, 6)
    >>> torch.equal(series_view(x, torch.Generator(), crop=(1.0, 1.0), scaling=0.0, jitter=0.0), x)
    True
    """
    b, length = x.shape
    frac = _uniform(b, *crop, g)
    start = (1 - frac) * torch.rand(b, generator=g)  # crop start as a fraction of the length
    pos = start[:, None] + frac[:, None] * torch.linspace(0, 1, length)[None, :]  # (B, L) in [0, 1]
    idx = pos * (length - 1)
    lo = idx.floor().long().clamp(0, length - 1)
    hi = (lo + 1).clamp(max=length - 1)
    w = (idx - lo).to(x)
    v = torch.gather(x, 1, lo.to(x.device)) * (1 - w) + torch.gather(x, 1, hi.to(x.device)) * w
    v = v * (1 + _uniform(b, -scaling, scaling, g)).to(x)[:, None]
    if jitter:
        v = v + jitter * v.std(1, keepdim=True) * torch.randn(v.shape, generator=g).to(x)
    return v


def view_fn(mode: str, kind: str):
    """``fn(x, g) -> one view`` for ``mode`` (its image recipe) or for series."""
    if kind == "image":
        kw = IMAGE_AUG.get(mode, IMAGE_AUG["fashion_mnist"])
        return lambda x, g: image_view(x, g, **kw)
    return lambda x, g: series_view(x, g, **SERIES_AUG)


def describe_views(mode: str, kind: str) -> dict:
    return dict(IMAGE_AUG.get(mode, IMAGE_AUG["fashion_mnist"])) if kind == "image" else dict(SERIES_AUG)
