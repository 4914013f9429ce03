"""Derf and DyT, point-wise drop-ins for ``nn.LayerNorm(dim)``, and the TinyViTs that use them.

Both act on the last axis of ``(..., D)`` with no statistics: a learnable scalar sets how hard
the S-curve squashes, and a per-channel affine (``weight``/``bias``, named as in LayerNorm)
follows. Parameter names and initial values follow the authors' code
(github.com/zlab-princeton/Derf, ``ViT/dynamic_erf.py`` and ``ViT/dynamic_tanh.py``), so their
state dicts line up.
"""
from __future__ import annotations

import functools

import torch
from torch import nn

from zoo_nn.backbones import Layer, TinyViT

__all__ = ["Derf", "DyT", "derf_vit", "dyt_vit", "rmsnorm_vit"]

# Initial values of the authors' ViT code (the setting closest to ours). Their GPT-2 patch starts
# alpha at 1.0 instead; the paper's DyT uses alpha0 = 0.5 for ViTs too.
DERF_ALPHA_INIT = 0.5
DERF_SHIFT_INIT = 0.0
DYT_ALPHA_INIT = 0.5


# Chen et al. 2025, "Stronger Normalization-Free Transformers" (arXiv:2512.10938v1), Eq. 10:
# Derf(x) = gamma * erf(alpha * x + s) + beta; alpha and s learnable scalars, gamma and beta per channel.
class Derf(nn.Module):
    """Dynamic erf: ``y = weight * erf(alpha * x + shift) + bias`` over the last axis.

    Args:
        dim: size of the last axis (the channels ``weight`` and ``bias`` act on).
        alpha_init: initial value of the scalar ``alpha``.
        shift_init: initial value of the scalar ``shift`` (``s`` in the paper).

    >>> Derf(64)(torch.randn(2, 17, 64)).shape
    torch.Size([2, 17, 64])
    """

    def __init__(self, dim: int, alpha_init: float = DERF_ALPHA_INIT, shift_init: float = DERF_SHIFT_INIT):
        super().__init__()
        self.dim = dim
        self.alpha_init = alpha_init
        self.shift_init = shift_init
        self.alpha = nn.Parameter(torch.full((1,), float(alpha_init)))
        self.shift = nn.Parameter(torch.full((1,), float(shift_init)))
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.erf(self.alpha * x + self.shift) * self.weight + self.bias

    def extra_repr(self) -> str:
        return f"{self.dim}, alpha_init={self.alpha_init}, shift_init={self.shift_init}"


# Zhu et al. 2025, "Transformers without Normalization" (arXiv:2503.10622):
# DyT(x) = gamma * tanh(alpha * x) + beta; alpha a learnable scalar, gamma and beta per channel.
class DyT(nn.Module):
    """Dynamic tanh: ``y = weight * tanh(alpha * x) + bias`` over the last axis (Derf's baseline)."""

    def __init__(self, dim: int, alpha_init: float = DYT_ALPHA_INIT):
        super().__init__()
        self.dim = dim
        self.alpha_init = alpha_init
        self.alpha = nn.Parameter(torch.full((1,), float(alpha_init)))
        self.weight = nn.Parameter(torch.ones(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.alpha * x) * self.weight + self.bias

    def extra_repr(self) -> str:
        return f"{self.dim}, alpha_init={self.alpha_init}"


def _vit(norm_layer: Layer, num_classes: int, in_chans: int, img_size: int, patch_size: int, dim: int,
         depth: int, heads: int, mlp_ratio: float) -> TinyViT:
    """The core's reference TinyViT with ``norm_layer`` in every block and before the head."""
    return TinyViT(num_classes=num_classes, in_chans=in_chans, img_size=img_size, patch_size=patch_size,
                   dim=dim, depth=depth, heads=heads, mlp_ratio=mlp_ratio, norm_layer=norm_layer)


def derf_vit(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2, dim: int = 64,
             depth: int = 4, heads: int = 4, mlp_ratio: float = 2.0, alpha_init: float = DERF_ALPHA_INIT,
             shift_init: float = DERF_SHIFT_INIT) -> TinyViT:
    """TinyViT (8x8 digits, patch 2, D=64, 4 layers) with every LayerNorm replaced by ``Derf``.

    >>> derf_vit()(torch.rand(2, 1, 8, 8)).shape
    torch.Size([2, 10])
    """
    norm = functools.partial(Derf, alpha_init=alpha_init, shift_init=shift_init)
    return _vit(norm, num_classes, in_chans, img_size, patch_size, dim, depth, heads, mlp_ratio)


def dyt_vit(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2, dim: int = 64,
            depth: int = 4, heads: int = 4, mlp_ratio: float = 2.0, alpha_init: float = DYT_ALPHA_INIT) -> TinyViT:
    """TinyViT with every LayerNorm replaced by ``DyT``."""
    norm = functools.partial(DyT, alpha_init=alpha_init)
    return _vit(norm, num_classes, in_chans, img_size, patch_size, dim, depth, heads, mlp_ratio)


def rmsnorm_vit(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2, dim: int = 64,
                depth: int = 4, heads: int = 4, mlp_ratio: float = 2.0) -> TinyViT:
    """TinyViT with every LayerNorm replaced by ``nn.RMSNorm`` (the claim's fourth norm)."""
    return _vit(nn.RMSNorm, num_classes, in_chans, img_size, patch_size, dim, depth, heads, mlp_ratio)
