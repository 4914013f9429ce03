"""Poly-INR: an image as a polynomial of its coordinates, built without positional encoding.

Singh, Shukla, Turaga, "Polynomial Implicit Neural Representations For Large Diverse Datasets",
CVPR 2023, Sec. 3 and Fig. 2. Level 0 maps an affine transform of the coordinates through a linear
layer and a Leaky-ReLU; every later level multiplies the features element-wise by a fresh affine
transform of the coordinates, then applies a linear layer and a Leaky-ReLU:

    z_0 = sigma(W_0 (A_0 x + b_0))
    z_i = sigma(W_i (z_{i-1} * (A_i x + b_i)))          i = 1 .. levels - 1
    y   = W_out z_{levels-1}

so the degree of the polynomial in x grows by one per level (the Leaky-ReLU makes it piecewise).
sigma is Leaky-ReLU with slope 0.2 and features are clamped to [-256, 256] after each level, as in
the authors' code. For generation the paper predicts A_i, b_i from a latent through a mapping
network; fitting one image (this task) learns them directly, as the catalog entry states.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["PolyINR", "poly_inr"]


class PolyINR(nn.Module):
    """Poly-INR for a single signal: ``levels`` levels of width ``hidden``, no positional encoding.

    Args:
        in_features: coordinate dimension (2 for images).
        out_features: channels of the signal.
        hidden: feature width n (A_i is n x in_features).
        levels: number of levels (affine-modulated linear + Leaky-ReLU blocks).
        slope: Leaky-ReLU negative slope (0.2 in the paper's code).
        clamp: feature clamp after each level (256 in the paper's code; None disables it).

    >>> m = PolyINR(hidden=16, levels=3)
    >>> m(torch.zeros(4, 2)).shape
    torch.Size([4, 1])
    """

    default_lr = 1e-3  # not given for single-image fitting in the paper; Adam 1e-3 as for ReLU coordinate MLPs

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 64, levels: int = 4,
                 slope: float = 0.2, clamp: float | None = 256.0):
        super().__init__()
        if levels < 1:
            raise ValueError(f"PolyINR needs levels >= 1, got {levels}")
        self.slope, self.clamp = slope, clamp
        # affine transforms of the coordinates, one per level: A_i x + b_i
        self.affine = nn.ModuleList([nn.Linear(in_features, hidden) for _ in range(levels)])
        # the linear layer W_i of each level
        self.linear = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(levels)])
        self.head = nn.Linear(hidden, out_features)

    def _act(self, z: torch.Tensor) -> torch.Tensor:
        z = F.leaky_relu(z, self.slope)
        return z.clamp(-self.clamp, self.clamp) if self.clamp is not None else z

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        z = self._act(self.linear[0](self.affine[0](coords)))
        for affine, linear in zip(self.affine[1:], self.linear[1:], strict=True):
            z = self._act(linear(z * affine(coords)))
        return self.head(z)


def poly_inr(in_features: int = 2, out_features: int = 1, hidden: int = 64, levels: int = 4,
             slope: float = 0.2, clamp: float | None = 256.0) -> PolyINR:
    """Builder of ``poly_inr`` (small CPU default: width 64, 4 levels; the paper's generator uses
    width 1024 and 10 levels)."""
    return PolyINR(in_features, out_features, hidden, levels, slope, clamp)
