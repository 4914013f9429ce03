"""Activations with learnable scalars (shared by all units of a layer, so ``act_layer()`` needs no width).

Initial values are the papers' defaults where the paper gives one; the catalogue entry of each
(``catalog.ENTRIES[name].learnable``) lists them, and the README says which are our choices.

    >>> import torch
    >>> Rational()(torch.tensor([0.0, 1.0])).round(decimals=3)
    tensor([0.0220, 0.9780], grad_fn=<RoundBackward1>)
"""
from __future__ import annotations

import torch
from torch import nn


def _scalar(value: float) -> nn.Parameter:
    return nn.Parameter(torch.tensor(float(value)))


class PReLU(nn.Module):
    """``max(0, x) + a min(0, x)`` with a learnable slope ``a`` (init 0.25, He et al. 2015, Sec. 2.1)."""

    def __init__(self, init: float = 0.25):
        super().__init__()
        self.a = _scalar(init)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) + self.a * torch.clamp(x, max=0.0)


class Swish(nn.Module):
    """``x sigmoid(beta x)`` with a learnable ``beta`` (init 1, Ramachandran et al. 2017)."""

    def __init__(self, beta: float = 1.0):
        super().__init__()
        self.beta = _scalar(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.beta * x)


class PELU(nn.Module):
    """Parametric ELU: ``(a/b) x`` for ``x >= 0``, ``a (exp(x/b) - 1)`` below; ``a, b`` kept >= ``floor``."""

    def __init__(self, a: float = 1.0, b: float = 1.0, floor: float = 0.1):
        super().__init__()
        self.a, self.b, self.floor = _scalar(a), _scalar(b), floor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.a.clamp(min=self.floor), self.b.clamp(min=self.floor)
        return torch.where(x >= 0, (a / b) * x, a * torch.expm1(torch.clamp(x, max=0.0) / b))


class SReLU(nn.Module):
    """S-shaped ReLU: identity between thresholds ``t_l < t_r``, learnable slopes ``a_l``, ``a_r`` outside."""

    def __init__(self, t_l: float = 0.0, a_l: float = 0.2, t_r: float = 1.0, a_r: float = 1.0):
        super().__init__()
        self.t_l, self.a_l, self.t_r, self.a_r = _scalar(t_l), _scalar(a_l), _scalar(t_r), _scalar(a_r)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        right = self.t_r + self.a_r * (x - self.t_r)
        left = self.t_l + self.a_l * (x - self.t_l)
        return torch.where(x >= self.t_r, right, torch.where(x <= self.t_l, left, x))


class APL(nn.Module):
    """Adaptive piecewise linear unit: ``max(0, x) + sum_s a_s max(0, -x + b_s)`` with ``S`` hinges."""

    def __init__(self, hinges: int = 2):
        super().__init__()
        self.a = nn.Parameter(torch.zeros(hinges))
        self.b = nn.Parameter(torch.linspace(-0.5, 0.5, hinges))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) + (self.a * torch.relu(self.b - x.unsqueeze(-1))).sum(-1)


class Rational(nn.Module):
    """Type-(3, 2) rational ``P(x) / Q(x)`` with learnable coefficients, initialised to Boullé et al.'s
    best rational approximation of ReLU on [-1, 1] (``Q`` has constant term 1)."""

    def __init__(self, numerator: tuple[float, ...] = (1.1915, 1.5957, 0.5, 0.0218),
                 denominator: tuple[float, ...] = (2.383, 0.0)):
        super().__init__()
        self.p = nn.Parameter(torch.tensor(numerator))  # highest degree first
        self.q = nn.Parameter(torch.tensor(denominator))  # x^2, x coefficients; the constant is 1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        num = torch.zeros_like(x)
        for c in self.p:
            num = num * x + c
        den = (self.q[0] * x + self.q[1]) * x + 1.0
        return num / den


class ACONC(nn.Module):
    """ACON-C: ``(p1 - p2) x sigmoid(beta (p1 - p2) x) + p2 x``; init p1 = 1, p2 = 0, beta = 1 (Swish)."""

    def __init__(self, p1: float = 1.0, p2: float = 0.0, beta: float = 1.0):
        super().__init__()
        self.p1, self.p2, self.beta = _scalar(p1), _scalar(p2), _scalar(beta)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        d = (self.p1 - self.p2) * x
        return d * torch.sigmoid(self.beta * d) + self.p2 * x


class StarReLU(nn.Module):
    """``s relu(x)^2 + b``; ``s = 1/sqrt(1.25)``, ``b = -s/2`` standardise it for unit-normal inputs
    (Yu et al. 2022, Sec. 3)."""

    def __init__(self, scale: float = 0.8944, bias: float = -0.4472):
        super().__init__()
        self.scale, self.bias = _scalar(scale), _scalar(bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale * torch.relu(x).square() + self.bias


LEARNABLE: dict[str, type[nn.Module]] = {
    "prelu": PReLU, "swish": Swish, "pelu": PELU, "srelu": SReLU, "apl": APL, "rational": Rational,
    "acon_c": ACONC, "star_relu": StarReLU,
}
