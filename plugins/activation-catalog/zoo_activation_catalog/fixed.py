"""Parameter-free activations: one function each, wrapped in an ``nn.Module`` class of the same name.

Each function follows the formula of its catalogue entry (``catalog.ENTRIES``, which cites the
paper); constants are the papers' defaults. Exponentials are evaluated only where they cannot
overflow, so that gradients stay finite for any input.

    >>> import torch
    >>> FIXED["mish"]()(torch.zeros(3))
    tensor([0., 0., 0.])
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

T = torch.Tensor
Fn = Callable[[T], T]
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805  # Klambauer et al. 2017, Eq. 2
RRELU_LOWER, RRELU_UPPER = 3.0, 8.0  # Xu et al. 2015: a ~ U(3, 8), slope 1/a


def _neg_expm1(x: torch.Tensor) -> torch.Tensor:
    """``exp(x) - 1`` on the negative part (the ELU branch), evaluated without overflow."""
    return torch.expm1(torch.clamp(x, max=0.0))


def sigmoid(x: T) -> T: return torch.sigmoid(x)
def tanh(x: T) -> T: return torch.tanh(x)
def lecun_tanh(x: T) -> T: return 1.7159 * torch.tanh(x * (2.0 / 3.0))
def hardtanh(x: T) -> T: return torch.clamp(x, -1.0, 1.0)
def hard_sigmoid(x: T) -> T: return torch.clamp((x + 1.0) / 2.0, 0.0, 1.0)
def softsign(x: T) -> T: return x / (1.0 + x.abs())
def isru(x: T) -> T: return x * torch.rsqrt(1.0 + x * x)
def penalized_tanh(x: T) -> T: return torch.where(x > 0, torch.tanh(x), 0.25 * torch.tanh(x))
def relu(x: T) -> T: return torch.relu(x)
def leaky_relu(x: T) -> T: return F.leaky_relu(x, 0.01)
def relu6(x: T) -> T: return torch.clamp(x, 0.0, 6.0)
def relu_squared(x: T) -> T: return torch.relu(x).square()
def nlrelu(x: T) -> T: return torch.log1p(torch.relu(x))
def elu(x: T) -> T: return torch.where(x > 0, x, _neg_expm1(x))
def selu(x: T) -> T: return SELU_SCALE * torch.where(x > 0, x, SELU_ALPHA * _neg_expm1(x))
def isrlu(x: T) -> T: return torch.where(x >= 0, x, x * torch.rsqrt(1.0 + x * x))
def softplus(x: T) -> T: return F.softplus(x)
def shifted_softplus(x: T) -> T: return F.softplus(x) - math.log(2.0)
def gelu(x: T) -> T: return F.gelu(x)
def quick_gelu(x: T) -> T: return x * torch.sigmoid(1.702 * x)
def silu(x: T) -> T: return x * torch.sigmoid(x)
def e_swish(x: T) -> T: return 1.375 * x * torch.sigmoid(x)
def hard_swish(x: T) -> T: return x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0
def mish(x: T) -> T: return x * torch.tanh(F.softplus(x))
def lisht(x: T) -> T: return x * torch.tanh(x)
def serf(x: T) -> T: return x * torch.erf(F.softplus(x))
def smish(x: T) -> T: return x * torch.tanh(torch.log1p(torch.sigmoid(x)))
def logish(x: T) -> T: return x * torch.log1p(torch.sigmoid(x))
def phish(x: T) -> T: return x * torch.tanh(F.gelu(x))
def pflu(x: T) -> T: return x * 0.5 * (1.0 + x * torch.rsqrt(1.0 + x * x))
def aptx(x: T) -> T: return (1.0 + torch.tanh(x)) * 0.5 * x
def gaussian(x: T) -> T: return torch.exp(-x * x)
def sine(x: T) -> T: return torch.sin(x)
def gcu(x: T) -> T: return x * torch.cos(x)
def snake(x: T) -> T: return x + torch.sin(x).square()
def softshrink(x: T) -> T: return F.softshrink(x, 0.5)


def tanhexp(x: torch.Tensor) -> torch.Tensor:
    # tanh(exp(20)) is 1 in float32; clamping keeps exp (and its gradient) finite
    return x * torch.tanh(torch.exp(torch.clamp(x, max=20.0)))


def dsilu(x: torch.Tensor) -> torch.Tensor:
    s = torch.sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


def sqnl(x: torch.Tensor) -> torch.Tensor:
    y = torch.where(x >= 0, x - x * x / 4.0, x + x * x / 4.0)
    return torch.where(x > 2.0, torch.ones_like(x), torch.where(x < -2.0, -torch.ones_like(x), y))


def elish(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x >= 0, x, _neg_expm1(x)) * torch.sigmoid(x)


def hard_elish(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x >= 0, x, _neg_expm1(x)) * torch.clamp((x + 1.0) / 2.0, 0.0, 1.0)


def fts(x: torch.Tensor, t: float = -0.2) -> torch.Tensor:
    return torch.where(x >= 0, x * torch.sigmoid(x), torch.zeros_like(x)) + t


def _module(cls_name: str, fn: Fn) -> type[nn.Module]:
    """An ``nn.Module`` class named ``cls_name`` whose forward applies ``fn`` element-wise."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fn(x)

    doc = f"``{fn.__name__}`` as a layer: element-wise, any shape, no parameters."
    return type(cls_name, (nn.Module,), {"forward": forward, "__doc__": doc, "__module__": __name__,
                                         "function": staticmethod(fn)})


class RReLU(nn.Module):
    """Randomized leaky ReLU: slope ``1/a`` on negatives, ``a ~ U(3, 8)`` per element in training,
    the fixed ``a = (3 + 8) / 2`` at test time (Xu et al. 2015, Sec. 2.4)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            a = torch.empty_like(x).uniform_(RRELU_LOWER, RRELU_UPPER)
        else:
            a = torch.full_like(x, (RRELU_LOWER + RRELU_UPPER) / 2.0)
        return torch.where(x >= 0, x, x / a)


_FUNCTIONS: dict[str, tuple[str, Fn]] = {
    "sigmoid": ("Sigmoid", sigmoid), "tanh": ("Tanh", tanh), "lecun_tanh": ("LeCunTanh", lecun_tanh),
    "hardtanh": ("HardTanh", hardtanh), "hard_sigmoid": ("HardSigmoid", hard_sigmoid),
    "softsign": ("Softsign", softsign), "isru": ("ISRU", isru), "sqnl": ("SQNL", sqnl),
    "penalized_tanh": ("PenalizedTanh", penalized_tanh), "relu": ("ReLU", relu),
    "leaky_relu": ("LeakyReLU", leaky_relu), "relu6": ("ReLU6", relu6), "relu_squared": ("ReLUSquared", relu_squared),
    "nlrelu": ("NLReLU", nlrelu), "elu": ("ELU", elu), "selu": ("SELU", selu), "isrlu": ("ISRLU", isrlu),
    "elish": ("ELiSH", elish), "hard_elish": ("HardELiSH", hard_elish), "softplus": ("Softplus", softplus),
    "shifted_softplus": ("ShiftedSoftplus", shifted_softplus), "gelu": ("GELU", gelu),
    "quick_gelu": ("QuickGELU", quick_gelu), "silu": ("SiLU", silu), "dsilu": ("DSiLU", dsilu),
    "e_swish": ("ESwish", e_swish), "hard_swish": ("HardSwish", hard_swish), "mish": ("Mish", mish),
    "lisht": ("LiSHT", lisht), "tanhexp": ("TanhExp", tanhexp), "serf": ("Serf", serf), "smish": ("Smish", smish),
    "logish": ("Logish", logish), "phish": ("Phish", phish), "pflu": ("PFLU", pflu), "fts": ("FTS", fts),
    "aptx": ("APTx", aptx), "gaussian": ("Gaussian", gaussian), "sine": ("Sine", sine), "gcu": ("GCU", gcu),
    "snake": ("Snake", snake), "softshrink": ("Softshrink", softshrink),
}
FIXED: dict[str, type[nn.Module]] = {name: _module(cls, fn) for name, (cls, fn) in _FUNCTIONS.items()}
FIXED["rrelu"] = RReLU
