"""OFM's velocity operator: an FNO whose spectral convolutions act on arbitrary 1D point sets.

Shi et al. 2025 (Operator Flow Matching), Sec. 4: the velocity field G_theta(t, f) is a Fourier neural operator
(Li et al. 2021): a lifting P of [f_t(x), x, t], L Fourier layers h <- sigma(K h + W h) and a projection Q.
The task's functions live on random irregular points, where an FFT has no grid, so each Fourier layer computes
its truncated transform as the non-uniform DFT with quadrature weight 1/N,

    F_k(h) = (1/N) sum_j h(x_j) exp(-2 pi i k x_j),   k = 0 .. modes-1,
    (K h)(x_i) = Re[ R_0 F_0 + 2 sum_{k>=1} (R_k F_k) exp(2 pi i k x_i) ],

which on a uniform grid equals FNO's rfft -> multiply -> irfft exactly (tested), and elsewhere is its direct
discretisation on the point set. On irregular points the mean 1/N is replaced by cell quadrature weights
(``cell_weights``: half the distance between a point's neighbours, periodic), which are 1/N on a uniform grid and
make the transform more accurate on random points (a plain mean is a Monte-Carlo estimate with O(N^-1/2) error).
The flow-matching training, reference GP, ODE sampling and SGLD regression are in ``zoo_ofm.flow`` (shared with
MINO).

Deviations from the paper: the transform is the direct non-uniform DFT with cell weights (the paper runs FNO on
grids); time t
enters as a constant input channel; one scalar standardisation of the values; CPU default width 32, 12 modes,
4 layers (``preset="paper"``: width 64, 32 modes, 4 layers, the paper's FNO size for its 1D experiments as far as
its text gives it); the reference is a Matern-5/2 GP (lengthscale 0.1) unless set. Only 1D domains.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from .flow import FunctionalFlow

__all__ = ["PointSpectralConv1d", "PointFNO", "cell_weights", "ofm", "CPU", "PAPER"]

CPU: dict[str, Any] = {"width": 32, "modes": 12, "layers": 4, "batch_size": 32, "lr": 1e-3, "ode_steps": 16}
PAPER: dict[str, Any] = {"width": 64, "modes": 32, "layers": 4, "batch_size": 64, "lr": 1e-3, "ode_steps": 32}
REFERENCE: dict[str, Any] = {"kernel": "matern", "nu": 2.5, "lengthscale": 0.1, "variance": 1.0}


class PointSpectralConv1d(nn.Module):
    """FNO's truncated spectral convolution on any 1D point set in [0, 1): ``(B, N, in), (B, N, 1) -> (B, N, out)``.

    Weights as in the FNO paper: complex, uniform in [0, 1/(in*out)) for both the real and imaginary parts.

    >>> conv = PointSpectralConv1d(2, 3, modes=4)
    >>> conv(torch.randn(5, 7, 2), torch.rand(5, 7, 1)).shape
    torch.Size([5, 7, 3])
    """

    def __init__(self, in_channels: int, out_channels: int, modes: int):
        super().__init__()
        self.modes = modes
        scale = 1.0 / (in_channels * out_channels)
        self.weight = nn.Parameter(scale * torch.rand(2, in_channels, out_channels, modes))

    def basis(self, coords: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``cos(2 pi k x)`` and ``sin(2 pi k x)`` for k < modes: two ``(B, N, modes)`` tensors."""
        ang = 2 * math.pi * coords[..., :1] * torch.arange(self.modes, dtype=coords.dtype)
        return ang.cos(), ang.sin()

    def forward(self, h: torch.Tensor, coords: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
        """``weights (B, N)``: quadrature weights summing to 1 (``cell_weights``); None: 1/N each."""
        # in real arithmetic (faster to differentiate than complex einsums): F_k = a_k - i b_k with
        # a_k = sum_j w_j h_j cos(2 pi k x_j), b_k = sum_j w_j h_j sin(2 pi k x_j); G_k = R_k F_k
        cos, sin = self.basis(coords)
        hw = h / h.shape[1] if weights is None else h * weights.unsqueeze(-1)
        a = torch.einsum("bnc,bnk->bck", hw, cos)
        b = torch.einsum("bnc,bnk->bck", hw, sin)
        wr, wi = self.weight[0], self.weight[1]
        g_re = torch.einsum("bik,iok->bok", a, wr) + torch.einsum("bik,iok->bok", b, wi)
        g_im = torch.einsum("bik,iok->bok", a, wi) - torch.einsum("bik,iok->bok", b, wr)
        # Re[G_0] + 2 Re sum_{k>=1} G_k e^{2 pi i k x}: the irfft of a spectrum truncated to `modes` (Im G_0 dropped)
        twice = torch.full((self.modes,), 2.0, dtype=h.dtype)
        twice[0] = 1.0
        return torch.einsum("bok,bnk->bno", g_re * twice, cos) - torch.einsum("bok,bnk->bno", g_im * twice, sin)


def cell_weights(coords: torch.Tensor) -> torch.Tensor:
    """Quadrature weights of 1D points on the periodic [0, 1): half the distance between each point's neighbours.

    ``(B, N, 1) -> (B, N)``, summing to 1; on a uniform grid every weight is 1/N (so the layer is exactly FNO's).

    >>> cell_weights(torch.tensor([[[0.0], [0.5], [0.75]]]))
    tensor([[0.3750, 0.3750, 0.2500]])
    """
    x = coords[..., 0]
    order = x.argsort(dim=-1)
    xs = x.gather(-1, order)
    gap = torch.diff(xs, dim=-1, append=xs[..., :1] + 1.0)  # gap[j] = x_{j+1} - x_j, wrapping round
    cell = 0.5 * (gap + gap.roll(1, dims=-1))
    return torch.empty_like(cell).scatter_(-1, order, cell)


class PointFNO(nn.Module):
    """The velocity ``G(f_t (B, N, C), coords (B, N, 1), t (B,)) -> (B, N, C)``: lifting, Fourier layers, projection."""

    def __init__(self, channels: int = 1, width: int = 32, modes: int = 12, layers: int = 4, d: int = 1,
                 quadrature: str = "cells"):
        super().__init__()
        if quadrature not in ("cells", "uniform"):
            raise ValueError(f"PointFNO quadrature must be 'cells' or 'uniform', got {quadrature!r}")
        self.quadrature = quadrature
        if d != 1:
            raise ValueError(f"PointFNO handles 1D point sets only (d=1), got d={d}; use zoo_mino's MINO for d>1")
        self.lift = nn.Linear(channels + d + 1, width)
        self.spectral = nn.ModuleList([PointSpectralConv1d(width, width, modes) for _ in range(layers)])
        self.pointwise = nn.ModuleList([nn.Linear(width, width) for _ in range(layers)])
        self.project = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, channels))

    def forward(self, f: torch.Tensor, coords: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        tt = t.view(-1, 1, 1).expand(*f.shape[:2], 1).to(f.dtype)
        h = self.lift(torch.cat([f, coords, tt], dim=-1))
        weights = cell_weights(coords) if self.quadrature == "cells" else None
        for i, (k, w) in enumerate(zip(self.spectral, self.pointwise, strict=True)):
            h = k(h, coords, weights) + w(h)
            if i < len(self.spectral) - 1:
                h = F.gelu(h)
        return self.project(h)


def ofm(*, preset: str = "cpu", channels: int = 1, width: int | None = None, modes: int | None = None,
        layers: int | None = None, reference: dict[str, Any] | None = None, coupling: str = "ot",
        lr: float | None = None, batch_size: int | None = None, ode_steps: int | None = None) -> FunctionalFlow:
    """Operator Flow Matching with the point-set FNO velocity; ``preset`` "cpu" (default) or "paper".

    >>> model = ofm(width=8, modes=4, layers=2)
    >>> model.sample(torch.rand(10, 1), 3, seed=0).shape
    torch.Size([3, 10, 1])
    """
    if preset not in ("cpu", "paper"):
        raise ValueError(f"ofm preset must be 'cpu' or 'paper', got {preset!r}")
    cfg = dict(CPU if preset == "cpu" else PAPER)
    given = {"width": width, "modes": modes, "layers": layers, "lr": lr, "batch_size": batch_size, "ode_steps": ode_steps}
    cfg.update({k: v for k, v in given.items() if v is not None})
    velocity = PointFNO(channels, cfg["width"], cfg["modes"], cfg["layers"])
    return FunctionalFlow(velocity, channels=channels, reference={**REFERENCE, **(reference or {})}, coupling=coupling,
                          lr=cfg["lr"], batch_size=cfg["batch_size"], ode_steps=cfg["ode_steps"])
