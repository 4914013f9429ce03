"""The comparisons of ``zoo reproduce vamoh``, trained for in-painting exactly like VaMoH.

Every method sees the same kind of training batches: a missing rate r ~ U(0, 0.75) per batch and a
random r of each image's pixels hidden (``model.random_masks``). What each may use:

- implicit GON (``zoo.create("gon_implicit")``, the GON plugin): the latent is the GON plugin's own
  ``encode`` (the negative gradient at the origin of the authors' batch-mean inner loss) restricted
  to the *observed* pixels; the outer loss covers every pixel (the in-painting target); second
  order, Adam at the GON plugin's 1e-4.
- the ``signal_set_fit`` autoencoders (``ae``, ``ae-2x``): the image with its missing pixels set to
  0 goes in, the full image is the target (a denoising / in-painting autoencoder); Adam 1e-3.
- bilinear upsampling (super-resolution only) and the training-set mean image (in-painting).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from zoo.task import run_budget
from zoo_task_image_fit.signal_set import SignalSet, coord_grid, minibatches

from .model import random_masks

MAX_MISSING = 0.75


def gon_encode(gon: nn.Module, coords: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None,
               create_graph: bool = False) -> torch.Tensor:
    """GON's latent from the observed pixels: its ``encode`` with the inner loss over ``mask``'s pixels.

    z = -d/dz0 [sum_observed (F(c, z0) - y)^2] / batch_size at z0 = 0 (the GON plugin's reduction).
    coords (N, 2), values (B, N, C), mask (B, N) bool (all observed when None) -> (B, k).

    >>> import zoo                                                          # doctest: +SKIP
    >>> gon_encode(zoo.create("gon_implicit"), coord_grid(8, 8), torch.rand(2, 64, 1)).shape  # doctest: +SKIP
    torch.Size([2, 32])
    """
    return gon.encode(values, coords, create_graph=create_graph, mask=mask)


def gon_predict(gon: nn.Module, coords: torch.Tensor, values: torch.Tensor, out_coords: torch.Tensor,
                mask: torch.Tensor | None = None) -> torch.Tensor:
    """GON conditioned on a set (its latent from the observed ``values``), evaluated at ``out_coords``: (B, M, C)."""
    z = gon_encode(gon, coords, values, mask).detach()
    with torch.no_grad():
        return gon.decode(z, out_coords)


def fit_gon_masked(gon: nn.Module, signal_set: SignalSet, *, steps: int, seed: int = 0) -> dict:
    """Train an implicit GON with latents from random pixel subsets; the outer loss covers all pixels."""
    x = signal_set.train
    n, h, w, c = x.shape
    coords = coord_grid(h, w)
    nxt, g = minibatches(n, gon.batch_size, seed), torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(gon.parameters(), lr=gon.default_lr)
    losses: list[float] = []

    def step(i: int) -> float:
        xb = x[nxt()].reshape(-1, h * w, c)
        z = gon_encode(gon, coords, xb, random_masks(xb.shape[0], h * w, MAX_MISSING, g), create_graph=True)
        loss = gon.loss(gon.decode(z, coords), xb).mean()  # every pixel: the in-painting target
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item() / (h * w))
        return losses[-1]

    fig = run_budget(step, steps=steps, budget_s=None)
    fig["losses"] = losses
    return fig


def fit_ae_masked(ae: nn.Module, signal_set: SignalSet, *, steps: int, seed: int = 0, batch_size: int = 64) -> dict:
    """Train a ``signal_set_fit`` autoencoder on zero-filled masked images against the full images."""
    x = signal_set.train
    n, h, w, c = x.shape
    nxt, g = minibatches(n, batch_size, seed), torch.Generator().manual_seed(seed + 1)
    opt = torch.optim.Adam(ae.parameters(), lr=ae.default_lr)
    losses: list[float] = []

    def step(i: int) -> float:
        xb = x[nxt()]
        mask = random_masks(xb.shape[0], h * w, MAX_MISSING, g).view(-1, h, w, 1).to(xb.dtype)
        loss = torch.mean((ae.reconstruct(xb * mask) - xb) ** 2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        return losses[-1]

    fig = run_budget(step, steps=steps, budget_s=None)
    fig["losses"] = losses
    return fig


def downsample(images: torch.Tensor, factor: int = 2) -> torch.Tensor:
    """Average-pool (B, H, W, C) images by ``factor``: the low-resolution input of super-resolution.

    >>> downsample(torch.ones(2, 8, 8, 1)).shape
    torch.Size([2, 4, 4, 1])
    """
    return F.avg_pool2d(images.permute(0, 3, 1, 2), factor).permute(0, 2, 3, 1)


def bilinear(images: torch.Tensor, size: int) -> torch.Tensor:
    """Bilinear resize of (B, H, W, C) images to ``size`` x ``size`` (pixel-centre aligned, as ``load_set``).

    >>> bilinear(torch.ones(1, 4, 4, 1), 8).shape
    torch.Size([1, 8, 8, 1])
    """
    out = F.interpolate(images.permute(0, 3, 1, 2), size=(size, size), mode="bilinear", align_corners=False)
    return out.permute(0, 2, 3, 1)
