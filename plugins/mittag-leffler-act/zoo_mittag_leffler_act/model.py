"""The Mittag-Leffler gated activation and the reference DigitsMLP that uses it.

Mostafanejad 2023, "Unification of popular artificial neural network activation functions"
(arXiv:2302.11007), writes activations in the gated form ``f(x) = x g(x)`` and builds the gate
from the Mittag-Leffler function ``E_{a,b}``, whose special case ``E_{1,1}(z) = exp(z)`` gives the
logistic gate. We implement the gate

    g(x) = 1 / (1 + E_{a,b}(-c x)),      f(x) = x g(x),

with learnable scalars ``a`` (``alpha``), ``b`` (``beta``) and ``c`` (``gamma``). Special cases:
``a = b = 1`` is ``x sigmoid(c x)``: SiLU/Swish at ``c = 1``, the sigmoid form of GELU at
``c = 1.702``, ReLU as ``c -> inf`` and the linear ``x/2`` at ``c = 0``; ``a < 1`` or ``b > 1``
give gates with algebraic (slower) tails. The paper's own parametrisation of the gate (its table
of parameters per activation) could not be read here; this form and its ranges are our reading of
the abstract and the catalogue entry (see the README). ``0 < a <= 1`` and ``b >= a`` keep
``E_{a,b}(-x)`` completely monotone, so the gate stays in (0, 1) and is monotone in ``c x``.

    >>> import torch
    >>> act = MittagLefflerGated()
    >>> torch.allclose(act(torch.tensor([1.0])), torch.nn.functional.silu(torch.tensor([1.0])))
    True
"""
from __future__ import annotations

import functools

import torch
from torch import nn

from zoo_nn.backbones import DigitsMLP

from .mittag_leffler import log_mittag_leffler

__all__ = ["MittagLefflerGated", "mittag_leffler_mlp", "ALPHA_MIN"]

ALPHA_MIN = 0.3  # a is clamped to [ALPHA_MIN, 1]; below ~0.3 the series needs hundreds of terms


class MittagLefflerGated(nn.Module):
    """``x / (1 + E_{alpha,beta}(-gamma x))`` with learnable (or fixed) scalars alpha, beta, gamma.

    Args:
        alpha: initial ``a`` (used clamped to ``[ALPHA_MIN, 1]``).
        beta: initial ``b`` (used as ``max(b, a)``).
        gamma: initial gate scale ``c`` (any real).
        learnable: parameters (True) or fixed buffers (False).
    """

    def __init__(self, alpha: float = 1.0, beta: float = 1.0, gamma: float = 1.0, learnable: bool = True):
        super().__init__()
        self.learnable = learnable
        for name, value in (("alpha", alpha), ("beta", beta), ("gamma", gamma)):
            t = torch.tensor(float(value))
            if learnable:
                self.register_parameter(name, nn.Parameter(t))
            else:
                self.register_buffer(name, t)

    @torch.no_grad()
    def project(self) -> None:
        """Put ``alpha`` back in ``[ALPHA_MIN, 1]`` and ``beta`` at or above it (in place).

        Called before each training forward pass, so optimisation is projected gradient descent:
        a step that leaves the valid range is undone instead of leaving the parameter in a
        clamp's dead zone, where it would get no gradient.
        """
        self.alpha.clamp_(ALPHA_MIN, 1.0)
        self.beta.copy_(torch.maximum(self.beta, self.alpha))

    def effective(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The ``(a, b, c)`` actually used: ``a`` clamped to ``[ALPHA_MIN, 1]``, ``b >= a``."""
        a = self.alpha.clamp(ALPHA_MIN, 1.0)
        return a, torch.maximum(self.beta, a), self.gamma

    def gate(self, x: torch.Tensor) -> torch.Tensor:
        """``g(x) = 1 / (1 + E(-c x)) = sigmoid(-log E(-c x))``, computed in float64 without overflow."""
        a, b, c = self.effective()
        return torch.sigmoid(-log_mittag_leffler(-c.to(torch.float64) * x.to(torch.float64), a, b)).to(x.dtype)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training and self.learnable:
            self.project()
        return x * self.gate(x)

    def extra_repr(self) -> str:
        a, b, c = (float(t.detach()) for t in self.effective())
        return f"alpha={a:.4g}, beta={b:.4g}, gamma={c:.4g}, learnable={self.learnable}"


def mittag_leffler_mlp(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, hidden: int = 128, depth: int = 2,
                       alpha: float = 1.0, beta: float = 1.0, gamma: float = 1.0,
                       learnable: bool = True) -> DigitsMLP:
    """``zoo_nn.backbones.DigitsMLP`` (LayerNorm) with a Mittag-Leffler gated activation per hidden layer.

    Each layer has its own ``(alpha, beta, gamma)``; the defaults start every layer at SiLU.
    """
    act = functools.partial(MittagLefflerGated, alpha=alpha, beta=beta, gamma=gamma, learnable=learnable)
    return DigitsMLP(num_classes=num_classes, in_chans=in_chans, img_size=img_size, hidden=hidden, depth=depth,
                     act_layer=act)
