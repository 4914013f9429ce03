"""SmartMixed per-neuron activation selection, and the reference DigitsMLP that uses it.

Omidvar 2025, "SmartMixed: A Two-Phase Training Strategy for Adaptive Activation Function
Learning in Neural Networks" (arXiv:2510.22450), Sec. 3:

* Phase 1 (selection): every hidden neuron ``i`` holds logits ``l_i`` over the pool (ReLU,
  Sigmoid, Tanh, LeakyReLU, ELU, SELU). Its output is ``sum_k w_ik f_k(x_i)`` with ``w_i`` a
  straight-through Gumbel-softmax sample of ``l_i`` (temperature 0.5, hard one-hot forward, soft
  gradient), a "differentiable hard mixture". As in the authors' code, each candidate's output and
  the mixture are clipped to [-10, 10] and the logits start at zero with 0.001 at one random entry.
* Phase 2 (fixed): ``freeze()`` fixes each neuron's function to ``argmax l_i``; neurons are then
  grouped by function (one permutation, one call per function on a contiguous slice), so the layer
  costs a handful of vectorised element-wise calls instead of six full passes and a mixture. Outputs
  are clipped to [-10, 10] as in phase 1, so at freezing the network computes what it computed in eval.

The frozen choice lives in a buffer (``choice``, -1 while selecting), so a frozen model saves and
loads through the same architecture. In eval mode before freezing, the layer uses the logits'
argmax without noise (the choice ``freeze()`` would make), so evaluation is deterministic.

    >>> import torch
    >>> net = smartmixed_mlp(hidden=16)
    >>> net(torch.rand(2, 1, 8, 8)).shape
    torch.Size([2, 10])
    >>> [sum(c.values()) for c in freeze(net)]  # neurons per function, per layer
    [16, 16]
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.backbones import DigitsMLP

__all__ = ["POOL", "SmartMixedActivation", "smartmixed_mlp", "freeze", "choice_counts", "smartmixed_layers"]

SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


def elu(x: torch.Tensor) -> torch.Tensor:
    """ELU (alpha 1) as ``exp(x) - 1`` below zero: torch's ``expm1`` kernel (used by ``F.elu``) is not
    vectorised on CPU and is ~20x slower than ``exp``; the two differ by < 1e-7 here."""
    return torch.where(x > 0, x, torch.exp(torch.clamp(x, max=0.0)) - 1.0)


def selu(x: torch.Tensor) -> torch.Tensor:
    """SELU with Klambauer et al.'s constants, on the same fast ``exp`` path as ``elu``."""
    return SELU_SCALE * torch.where(x > 0, x, SELU_ALPHA * (torch.exp(torch.clamp(x, max=0.0)) - 1.0))


POOL: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": torch.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "leaky_relu": F.leaky_relu,
    "elu": elu, "selu": selu,
}
TEMPERATURE = 0.5  # authors' default
CLIP = 10.0  # authors' code clips each candidate and the mixture to [-10, 10]; the frozen phase clips alike


class SmartMixedActivation(nn.Module):
    """Per-neuron activation choice over ``POOL`` on the last axis of ``(..., num_neurons)``.

    Args:
        num_neurons: size of the last axis.
        temperature: Gumbel-softmax temperature of the selection phase.
        hard: straight-through one-hot samples (True, the paper's) or soft mixtures.
        init_logits: draw the initial logits now (``reset_logits``); the MLP builder draws them
            after building the network, so its linear weights match the ReLU baseline's for a seed.
    """

    def __init__(self, num_neurons: int, temperature: float = TEMPERATURE, hard: bool = True,
                 init_logits: bool = True):
        super().__init__()
        self.num_neurons, self.temperature, self.hard = num_neurons, temperature, hard
        self.logits = nn.Parameter(torch.zeros(num_neurons, len(POOL)))
        self.register_buffer("choice", torch.full((num_neurons,), -1, dtype=torch.long))
        self._groups: tuple[torch.Tensor, torch.Tensor, list[tuple[int, int]]] | None = None
        if init_logits:
            self.reset_logits()

    @torch.no_grad()
    def reset_logits(self) -> None:
        """The authors' initialisation: zeros, with 0.001 at one random candidate per neuron."""
        self.logits.zero_()
        self.logits[torch.arange(self.num_neurons), torch.randint(len(POOL), (self.num_neurons,))] = 0.001

    @property
    def frozen(self) -> bool:
        """True once each neuron's function is fixed (phase 2)."""
        return bool((self.choice >= 0).all())

    def mixture_weights(self) -> torch.Tensor:
        """``(num_neurons, |POOL|)`` weights: a Gumbel-softmax sample in training, the argmax one-hot in eval."""
        if not self.training:
            return F.one_hot(self.logits.argmax(-1), len(POOL)).to(self.logits.dtype)
        u = torch.rand_like(self.logits)
        gumbel = -torch.log(-torch.log(u + 1e-20) + 1e-20)
        soft = torch.softmax((self.logits + gumbel) / self.temperature, dim=-1)
        if not self.hard:
            return soft
        one_hot = F.one_hot(soft.argmax(-1), len(POOL)).to(soft.dtype)
        return (one_hot - soft).detach() + soft  # straight-through: one-hot forward, soft gradient

    @torch.no_grad()
    def freeze(self) -> dict[str, int]:
        """Fix every neuron to the argmax of its logits (phase 2); return the count per function."""
        self.choice.copy_(self.logits.argmax(-1))
        self.logits.requires_grad_(False)
        self._groups = None
        return self.counts()

    def counts(self) -> dict[str, int]:
        """Neurons per function: the frozen choice, or the logits' current argmax while selecting."""
        idx = self.choice if self.frozen else self.logits.detach().argmax(-1)
        return {name: int((idx == k).sum()) for k, name in enumerate(POOL)}

    def _grouping(self) -> tuple[torch.Tensor, torch.Tensor, list[tuple[int, int]]]:
        if self._groups is None:
            order = torch.argsort(self.choice, stable=True)
            counts = torch.bincount(self.choice, minlength=len(POOL)).tolist()
            bounds, start = [], 0
            for c in counts:
                bounds.append((start, start + c))
                start += c
            self._groups = (order, torch.argsort(order), bounds)
        return self._groups

    def _load_from_state_dict(self, *args, **kwargs):  # a loaded choice invalidates the cached grouping
        self._groups = None
        super()._load_from_state_dict(*args, **kwargs)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.frozen:  # neurons grouped per function, each group one contiguous block (neurons first)
            order, inverse, bounds = self._grouping()
            xs = x.reshape(-1, self.num_neurons).t().index_select(0, order)
            # clipped as in the selection phase, so freezing does not change the function the network computes
            parts = [fn(xs[a:b]).clamp(-CLIP, CLIP) for fn, (a, b) in zip(POOL.values(), bounds, strict=True) if b > a]
            return torch.cat(parts).index_select(0, inverse).t().reshape(x.shape)
        w = self.mixture_weights()
        stacked = torch.stack([fn(x).clamp(-CLIP, CLIP) for fn in POOL.values()], dim=-1)
        return (stacked * w).sum(-1).clamp(-CLIP, CLIP)

    def extra_repr(self) -> str:
        return f"{self.num_neurons}, temperature={self.temperature}, hard={self.hard}, frozen={self.frozen}"


def smartmixed_layers(model: nn.Module) -> list[SmartMixedActivation]:
    """The model's SmartMixed layers, input side first."""
    return [m for m in model.modules() if isinstance(m, SmartMixedActivation)]


def freeze(model: nn.Module) -> list[dict[str, int]]:
    """Phase 2 for a whole model: freeze every SmartMixed layer; per-layer counts per function."""
    return [layer.freeze() for layer in smartmixed_layers(model)]


def choice_counts(model: nn.Module) -> list[dict[str, int]]:
    """Per-layer neurons per function (the histograms the paper plots)."""
    return [layer.counts() for layer in smartmixed_layers(model)]


def smartmixed_mlp(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, hidden: int = 128, depth: int = 2,
                   temperature: float = TEMPERATURE, hard: bool = True) -> DigitsMLP:
    """``zoo_nn.backbones.DigitsMLP`` (LayerNorm) with a SmartMixed activation in every hidden layer."""
    def act() -> SmartMixedActivation:
        return SmartMixedActivation(hidden, temperature=temperature, hard=hard, init_logits=False)

    model = DigitsMLP(num_classes=num_classes, in_chans=in_chans, img_size=img_size, hidden=hidden, depth=depth,
                      act_layer=act)
    for layer in smartmixed_layers(model):
        layer.reset_logits()
    return model
