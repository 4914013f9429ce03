"""AdaFNN (Yao, Mueller and Wang, ICML 2021): a functional network whose first layer learns its own bases.

§3 of the paper (the Basis Layer): K basis nodes, each a micro neural network b_k: R -> R evaluated on the
observation times; the layer's outputs are the scores

    c_k = <b_k, x> = int x(t) b_k(t) dt,     k = 1..K,

computed from the discrete observations by the trapezoid rule on the observed (not necessarily regular) grid,
and a feed-forward network maps (c_1..c_K) to the response. Training minimises the prediction loss plus two
penalties on the *L2-normalised* bases b~_k = b_k / ||b_k|| (the norm detached, so the penalties shape the bases'
form, not their scale):

    lambda_sparse * mean_k ||b~_k||_1   (sparsity: a basis that looks at a short window of t)
  + lambda_orth   * mean_{i<j} |<b~_i, b~_j>|   (orthogonality: bases that do not repeat each other).

Like the authors' code (github.com/jwyyy/AdaFNN), a micro network is Linear -> (h + LayerNorm(h)) -> SELU per
hidden layer, and the head uses the same block with ReLU. The scores use the raw bases b_k, the penalties the
normalised ones, as in that code.

Deviations: the penalties average over all K bases and all K(K-1)/2 pairs, where the authors' code draws a random
subset of bases and pairs each step (same expectation, no extra randomness); LayerNorm starts at the identity
affine map (the authors' code draws its gain and bias from N(0, 1)); the K micro networks run as one batched
matrix product instead of K modules. The paper selects lambda_sparse and lambda_orth on validation data; the
defaults here are fixed (see ``CPU``) and were not tuned on the test split. Parts of §3 not checked against the
paper's text (only the abstract, the catalog entry and the authors' notebook were read): the exact averaging of
the penalties.

Because the penalties belong to the loss and a task's training loop only sees the forward output, ``forward``
(in training mode, with a penalty weight > 0) attaches the penalty's gradient to its output: the backward pass of
any loss through the output also descends ``penalty(t)``, exactly as if it had been added to the loss.

>>> import torch
>>> model = AdaFNN(n_bases=3, basis_hidden=(8,), head_hidden=(8,))
>>> t = torch.linspace(0, 1, 51)
>>> model(torch.randn(4, 51), t).shape, model.bases(t).shape
(torch.Size([4, 1]), torch.Size([3, 51]))
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

# CPU default: the catalog's micro network (2 x 32) and a small head; penalty weights fixed before any run
CPU: dict[str, Any] = {"n_bases": 4, "basis_hidden": (32, 32), "head_hidden": (64, 64), "dropout": 0.0,
                       "lambda_sparse": 0.01, "lambda_orth": 0.01}
# the authors' AdaFNN constructor defaults (their notebook): 4 bases of 3 x 64, a 3 x 128 head, dropout 0.1
PAPER: dict[str, Any] = {"n_bases": 4, "basis_hidden": (64, 64, 64), "head_hidden": (128, 128, 128), "dropout": 0.1,
                         "lambda_sparse": 0.0, "lambda_orth": 0.0}
PRESETS = {"cpu": CPU, "paper": PAPER}


def trapezoid_weights(t: torch.Tensor) -> torch.Tensor:
    """Weights w with ``sum_j w_j f(t_j)`` = the trapezoid rule for ``int f`` on the sorted grid ``t`` (T,).

    >>> trapezoid_weights(torch.tensor([0.0, 0.5, 1.0])).tolist()
    [0.25, 0.5, 0.25]
    """
    if t.ndim != 1 or t.numel() < 2:
        raise ValueError(f"t must be a 1-D grid of at least 2 times, got shape {tuple(t.shape)}")
    h = t[1:] - t[:-1]
    if (h <= 0).any():
        raise ValueError("t must be strictly increasing (sort the observation times and x with them)")
    return F.pad(h, (1, 0)) / 2 + F.pad(h, (0, 1)) / 2


def inner(f: torch.Tensor, g: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """``<f, g> = int f g dt`` by the trapezoid rule: f (..., T) and g (..., T) broadcast, t (T,)."""
    return (f * g * trapezoid_weights(t)).sum(-1)


class _ResidualNormBlock(nn.Module):
    """Linear -> h + LayerNorm(h) -> activation -> dropout: the authors' feed-forward block."""

    def __init__(self, d_in: int, d_out: int, activation: str, dropout: float) -> None:
        super().__init__()
        self.linear, self.norm = nn.Linear(d_in, d_out), nn.LayerNorm(d_out)
        self.act, self.drop = getattr(F, activation), nn.Dropout(dropout)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        h = self.linear(h)
        return self.drop(self.act(h + self.norm(h)))


class BasisNodes(nn.Module):
    """K micro networks b_k: R -> R run together: weights stacked along a leading K axis.

    Each node is Linear(1, H1) -> [h + LayerNorm(h) -> SELU] -> ... -> Linear(H_last, 1) with nn.Linear's
    initialisation, node by node.
    """

    def __init__(self, n_bases: int, hidden: Sequence[int], dropout: float = 0.0) -> None:
        super().__init__()
        dims = [1, *hidden, 1]
        self.weights = nn.ParameterList()
        self.biases = nn.ParameterList()
        for d_in, d_out in zip(dims[:-1], dims[1:], strict=True):
            bound = 1 / math.sqrt(d_in)  # nn.Linear's default: kaiming_uniform(a=sqrt(5)) == U(-1/sqrt(fan_in), ..)
            self.weights.append(nn.Parameter(torch.empty(n_bases, d_in, d_out).uniform_(-bound, bound)))
            self.biases.append(nn.Parameter(torch.empty(n_bases, 1, d_out).uniform_(-bound, bound)))
        self.norms = nn.ModuleList(nn.LayerNorm(h) for h in hidden)
        self.drop = nn.Dropout(dropout)

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        """``(T,)`` times -> ``(K, T)`` basis values."""
        h = t.reshape(1, -1, 1).expand(self.weights[0].shape[0], -1, -1)
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            h = torch.baddbmm(b, h, w)
            if i < len(self.norms):
                h = self.drop(F.selu(h + self.norms[i](h)))
        return h.squeeze(-1)


class _PenaltyGradient(torch.autograd.Function):
    """Identity on ``out``; its backward also sends gradient 1 into ``penalty`` (loss + penalty, seen from out)."""

    @staticmethod
    def forward(ctx, out: torch.Tensor, penalty: torch.Tensor) -> torch.Tensor:  # noqa: ANN001
        return out.clone()

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # noqa: ANN001
        return grad, torch.ones((), dtype=grad.dtype, device=grad.device)


class AdaFNN(nn.Module):
    """Basis Layer of ``n_bases`` micro networks, trapezoid scores, MLP head: ``(x (B, T), t (T,)) -> (B, out_dim)``.

    ``bases(t)`` gives the raw bases ``(K, T)``, ``scores(x, t)`` the layer's outputs ``(B, K)``, ``penalty(t)``
    the paper's sparsity + orthogonality term on the normalised bases.
    """

    input_kind = "curve"

    def __init__(self, n_bases: int = 4, basis_hidden: Sequence[int] = (32, 32), head_hidden: Sequence[int] = (64, 64),
                 out_dim: int = 1, dropout: float = 0.0, lambda_sparse: float = 0.0, lambda_orth: float = 0.0) -> None:
        super().__init__()
        if n_bases < 1:
            raise ValueError(f"n_bases must be >= 1, got {n_bases}")
        self.n_bases, self.lambda_sparse, self.lambda_orth = n_bases, float(lambda_sparse), float(lambda_orth)
        self.basis = BasisNodes(n_bases, basis_hidden, dropout)
        dims = [n_bases, *head_hidden]
        self.head = nn.Sequential(*(_ResidualNormBlock(a, b, "relu", dropout) for a, b in zip(dims[:-1], dims[1:], strict=True)),
                                  nn.Linear(dims[-1], out_dim))

    def bases(self, t: torch.Tensor) -> torch.Tensor:
        """The K basis functions at the times ``t`` (T,): ``(K, T)``."""
        return self.basis(t.to(self.basis.weights[0].dtype))

    def normalized_bases(self, t: torch.Tensor) -> torch.Tensor:
        """The bases divided by their (detached) trapezoid L2 norm on ``t``: the form the penalties see."""
        b = self.bases(t)
        return b / (inner(b, b, t).sqrt().detach()[:, None] + 1e-6)

    def scores(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """``c_k = int x b_k dt`` by the trapezoid rule on ``t``: ``(B, K)``."""
        return (x * trapezoid_weights(t)) @ self.bases(t).T

    def penalty(self, t: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
        """``lambda_sparse * mean ||b~_k||_1 + lambda_orth * mean_{i<j} |<b~_i, b~_j>|`` on the normalised bases."""
        b = self.normalized_bases(t) if b is None else b
        total = b.new_zeros(())
        if self.lambda_sparse:
            total = total + self.lambda_sparse * inner(b.abs(), torch.ones_like(b), t).mean()
        if self.lambda_orth and self.n_bases > 1:
            gram = (b * trapezoid_weights(t)) @ b.T
            i, j = torch.triu_indices(self.n_bases, self.n_bases, offset=1)
            total = total + self.lambda_orth * gram[i, j].abs().mean()
        return total

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        if x.ndim != 2 or t.ndim != 1 or x.shape[1] != t.shape[0]:
            raise ValueError(f"AdaFNN expects x (B, T) and t (T,), got x {tuple(x.shape)} and t {tuple(t.shape)}")
        t = t.to(x.dtype)
        out = self.head(self.scores(x, t))
        if self.training and torch.is_grad_enabled() and (self.lambda_sparse or self.lambda_orth):
            out = _PenaltyGradient.apply(out, self.penalty(t))
        return out


def _build(preset: str, given: dict[str, Any]) -> AdaFNN:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: use one of {sorted(PRESETS)}")
    args = {**PRESETS[preset], **{k: v for k, v in given.items() if v is not None}}
    return AdaFNN(**args)


def adafnn(preset: str = "cpu", n_bases: int | None = None, basis_hidden: Sequence[int] | None = None,
           head_hidden: Sequence[int] | None = None, out_dim: int = 1, dropout: float | None = None,
           lambda_sparse: float | None = None, lambda_orth: float | None = None) -> AdaFNN:
    """AdaFNN for scalar-on-function regression. ``preset="cpu"``: 4 bases of 2 x 32, a 2 x 64 head, penalty
    weights 0.01; ``preset="paper"``: the authors' defaults (4 bases of 3 x 64, 3 x 128 head, dropout 0.1, no
    penalty: the paper tunes them). Arguments given override the preset.

    >>> adafnn().n_bases, adafnn(preset="paper", n_bases=2).n_bases
    (4, 2)
    """
    return _build(preset, {"n_bases": n_bases, "basis_hidden": basis_hidden, "head_hidden": head_hidden,
                           "out_dim": out_dim, "dropout": dropout, "lambda_sparse": lambda_sparse,
                           "lambda_orth": lambda_orth})
