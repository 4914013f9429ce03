"""The networks KANbeFair compares: MLP, KAN, and the MLP with B-spline activations.

Yu, Yu & Wang 2024, "KAN or MLP: A Fairer Comparison" (arXiv:2407.16674). The KAN is the core's
``zoo_nn.kan.KAN`` (B-spline edges, SiLU shortcut, G=5, k=3, grid [-1, 1]: the paper's defaults); the
MLP is ``Linear -> GELU`` stacks (the authors' default activation); the B-spline MLP is the paper's
architecture ablation (Sec. 5): the MLP with every activation replaced by a learnable B-spline, one per
neuron, so it has the KAN's B-spline but the MLP's linear-then-activation structure.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from zoo_nn.backbones import DigitsMLP
from zoo_nn.kan import KAN, bspline_basis, fit_spline_coef, uniform_grid

__all__ = ["BSplineActivation", "BSplineMLP", "bspline_mlp", "bspline_mlp_digits", "kan_digits", "mlp_digits"]


# KANbeFair Sec. 5 ("B-spline MLP"): y_j = spline_j(x_j) = sum_c c_{j,c} B_c(x_j), one learnable spline per
# neuron, no SiLU shortcut. Coefficients start at a least-squares fit to uniform noise of size
# noise_scale / G at the grid points (the pykan initialisation the authors reuse), so the activation
# starts close to zero.
class BSplineActivation(nn.Module):
    """A learnable B-spline activation per feature: ``(..., num_features) -> (..., num_features)``.

    Args:
        num_features: features (neurons), each with its own spline.
        grid_size, spline_order, grid_range: the spline grid (G, k, interval), as in the KAN layer.
        noise_scale: size of the initial noise the coefficients are fitted to.

    >>> act = BSplineActivation(4)
    >>> act(torch.zeros(2, 4)).shape
    torch.Size([2, 4])
    """

    def __init__(self, num_features: int, grid_size: int = 5, spline_order: int = 3,
                 grid_range: Sequence[float] = (-1.0, 1.0), noise_scale: float = 0.1):
        super().__init__()
        self.num_features, self.grid_size, self.spline_order = num_features, grid_size, spline_order
        self.register_buffer("grid", uniform_grid(num_features, grid_size, spline_order, grid_range))
        knots = self.grid[:, spline_order:-spline_order].T  # (G + 1, features)
        noise = (torch.rand(knots.shape[0], num_features, 1) - 0.5) * noise_scale / grid_size
        coef = fit_spline_coef(bspline_basis(knots, self.grid, spline_order), noise)  # (1, features, G + k)
        self.coef = nn.Parameter(coef[0])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (bspline_basis(x, self.grid, self.spline_order) * self.coef).sum(-1)

    def extra_repr(self) -> str:
        return f"{self.num_features}, grid_size={self.grid_size}, spline_order={self.spline_order}"


class BSplineMLP(nn.Sequential):
    """``[Linear -> BSplineActivation] x depth -> Linear``: the paper's B-spline MLP."""

    def __init__(self, in_features: int, hidden: int, depth: int, out_features: int, grid_size: int = 5,
                 spline_order: int = 3, grid_range: Sequence[float] = (-1.0, 1.0)):
        layers: list[nn.Module] = []
        d = in_features
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), BSplineActivation(hidden, grid_size, spline_order, grid_range)]
            d = hidden
        super().__init__(*layers, nn.Linear(d, out_features))
        self.in_features = in_features


def bspline_mlp(in_features: int = 2, hidden: int = 16, depth: int = 2, grid_size: int = 5, spline_order: int = 3,
                grid_range: tuple[float, float] = (-1.0, 1.0)) -> BSplineMLP:
    """B-spline MLP for ``formula_regress``: ``(B, in_features) -> (B, 1)``.

    >>> bspline_mlp(in_features=3)(torch.rand(5, 3)).shape
    torch.Size([5, 1])
    """
    return BSplineMLP(in_features, hidden, depth, 1, grid_size, spline_order, tuple(grid_range))


class _Flatten(nn.Module):
    """``(B, 1, 8, 8) -> (B, 64)`` in front of a vector network, for digits_classify."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.flatten(1))


def bspline_mlp_digits(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, hidden: int = 48, depth: int = 2,
                       grid_size: int = 5, spline_order: int = 3,
                       grid_range: tuple[float, float] = (-1.0, 1.0)) -> nn.Module:
    """B-spline MLP on flattened digits: ``(B, 1, 8, 8) -> (B, 10)``."""
    d = in_chans * img_size * img_size
    return _Flatten(BSplineMLP(d, hidden, depth, num_classes, grid_size, spline_order, tuple(grid_range)))


def kan_digits(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, hidden: int = 10, grid_size: int = 5,
               spline_order: int = 3, grid_range: tuple[float, float] = (-1.0, 1.0)) -> nn.Module:
    """``KAN([64, hidden, 10])`` on flattened digits (KANbeFair's vision setting): ``(B, 1, 8, 8) -> (B, 10)``."""
    d = in_chans * img_size * img_size
    return _Flatten(KAN([d, hidden, num_classes], grid_size=grid_size, spline_order=spline_order,
                        grid_range=tuple(grid_range)))


def _no_norm(dim: int) -> nn.Module:
    return nn.Identity()


def mlp_digits(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, hidden: int = 48, depth: int = 2) -> nn.Module:
    """The reference ``DigitsMLP`` backbone without norm and with GELU (KANbeFair's plain MLP)."""
    return DigitsMLP(num_classes=num_classes, in_chans=in_chans, img_size=img_size, hidden=hidden, depth=depth,
                     norm_layer=_no_norm, act_layer=nn.GELU)
