"""The two-parameter Mittag-Leffler function ``E_{a,b}(z) = sum_k z^k / Gamma(a k + b)`` on the real line.

Differentiable in ``z``, ``a`` and ``b`` (plain autograd through the formulas below), for
``0 < a <= 1`` and ``b > 0``: the range where ``E_{a,b}(-x)`` is completely monotone for
``b >= a`` (Schneider 1996), which the gated activation relies on. Evaluated in float64:

* ``|z| <= R = RADIUS ** a``: the power series, truncated where its terms fall below float64
  precision (Horner's rule), except on the negative axis where it cancels too much (below);
* ``z < 0`` beyond that: the algebraic asymptotic expansion
  ``-sum_{k=1}^{N} z^(-k) / Gamma(b - a k)`` (Gorenflo, Loutchko & Luchko 2002) plus the
  exponential term ``(1/a) x^((1-b)/a) exp(-x^(1/a)) cos(pi (1-b)/a)`` (x = -z). At ``a = 1`` that
  term is the pole of the Laplace transform on the negative axis (half from each side of the Stokes
  line): it is all of ``E_{1,1}(-x) = exp(-x)`` and the ``exp(-x)`` part of ``E_{1,n}``, whose
  algebraic coefficients ``1/Gamma(n - k)`` vanish. For ``a < 1`` it is of the size of the expansion's own
  remainder; it keeps the relative error small as ``(a, b) -> (1, 1)``;
* ``z > R``: the exponential asymptotic ``(1/a) z^((1-b)/a) exp(z^(1/a))``, returned through
  ``log_mittag_leffler`` because it overflows quickly.

    >>> import torch
    >>> mittag_leffler(torch.tensor([1.0]), 1.0, 1.0)  # E_{1,1}(z) = exp(z)
    tensor([2.7183])
"""
from __future__ import annotations

import math

import torch

__all__ = ["mittag_leffler", "log_mittag_leffler", "rgamma", "RADIUS"]

RADIUS = 16.0  # the series is used while |z|^(1/a) <= RADIUS; exp(-16) ~ 1e-7 bounds the neglected terms
ASYMPTOTIC_TERMS = 20
TAIL_FROM = 4.0  # on the negative axis the expansion may replace the series from |z|^(1/a) >= TAIL_FROM on
_SERIES_TOP = 75.0  # a*k beyond which RADIUS**(a k) / Gamma(a k + b) < 1e-16 (so ~75/a terms)


def _sinpi(x: torch.Tensor) -> torch.Tensor:
    """``sin(pi x)``, exactly zero at integers (``torch.sin(pi * n)`` is ~1e-16 n, which 1/Gamma then scales up)."""
    n = torch.round(x)
    sign = 1.0 - 2.0 * torch.remainder(n, 2.0)
    return sign * torch.sin(math.pi * (x - n))


def rgamma(x: torch.Tensor) -> torch.Tensor:
    """``1 / Gamma(x)`` for any real ``x`` (exactly zero at the poles), differentiable; reflection for ``x <= 0``."""
    pos = x > 0
    safe_pos = torch.where(pos, x, torch.ones_like(x))
    safe_neg = torch.where(pos, torch.zeros_like(x), x)  # 1 - x >= 1 there
    positive = torch.exp(-torch.lgamma(safe_pos))
    reflected = _sinpi(safe_neg) * torch.exp(torch.lgamma(1.0 - safe_neg)) / math.pi
    return torch.where(pos, positive, reflected)


def _params(alpha: float | torch.Tensor, beta: float | torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.as_tensor(alpha, dtype=torch.float64)
    b = torch.as_tensor(beta, dtype=torch.float64)
    if not (0.0 < float(a.detach()) <= 1.0) or float(b.detach()) <= 0.0:
        raise ValueError(f"mittag_leffler needs 0 < alpha <= 1 and beta > 0, got alpha={float(a.detach())}, "
                         f"beta={float(b.detach())}")
    return a, b


def _coefficients(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``1 / Gamma(a k + b)`` for the series' k = 0 ... (about 75 / a terms: beyond, they fall below 1e-16)."""
    k = torch.arange(int(math.ceil(_SERIES_TOP / float(a.detach()))) + 2, dtype=torch.float64)
    return torch.exp(-torch.lgamma(a * k + b))  # a k + b > 0: Gamma is positive


def _horner(z: torch.Tensor, coef: torch.Tensor) -> torch.Tensor:
    out = coef[-1].expand_as(z)
    for i in range(len(coef) - 2, -1, -1):
        out = out * z + coef[i]
    return out


def _negative_tail(z: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The algebraic expansion at ``z < 0``, cut where it stops shrinking, plus the exponential term (module
    docstring); and the size of the first two terms left out, the expansion's error estimate.

    The expansion diverges: it is cut before the pair of consecutive terms of least size (a pair, because a
    single coefficient ``1/Gamma(b - a k)`` can be near zero by accident, when ``b - a k`` is near a pole).
    """
    k = torch.arange(1, ASYMPTOTIC_TERMS + 2, dtype=torch.float64)
    c = rgamma(b - a * k)  # (N + 1,)
    terms = -(1.0 / z.unsqueeze(-1)) ** k * c
    size = terms.detach().abs()
    pair = size[..., :-1] + size[..., 1:]
    cut = pair.argmin(-1, keepdim=True)
    keep = k[:-1] - 1 < cut
    x = -z
    pole = x ** ((1.0 - b) / a) * torch.exp(-x ** (1.0 / a)) * torch.cos(math.pi * (1.0 - b) / a) / a
    return (terms[..., :-1] * keep).sum(-1) + pole, pair.gather(-1, cut).squeeze(-1)


def _branches(z: torch.Tensor, alpha, beta) -> tuple[torch.Tensor, ...]:
    """``(z64, use_series, negative, series, negative_tail, log_positive)``; each branch is evaluated on an
    argument that is harmless outside its own region, so no branch produces inf/nan gradients."""
    a, b = _params(alpha, beta)
    zd = z.to(torch.float64)
    r = RADIUS ** a
    inside, negative = zd.abs() <= r, zd < 0
    coef = _coefficients(a, b)
    series = _horner(torch.where(inside, zd, torch.zeros_like(zd)), coef)
    zeros = torch.zeros_like(zd)
    tail, log_pos = zeros, zeros  # the asymptotic branches are only evaluated where some z needs them
    # On the negative axis the series cancels (relative error ~ eps * sum_k |c_k z^k| / |E|: 5% for exp(-16)); from
    # |z| >= TAIL_FROM ** a on, the expansion is used wherever its own error estimate is the smaller one. Evaluated
    # on those z only (few, after a normalisation layer).
    candidates = (negative & (zd <= -TAIL_FROM ** a)).nonzero(as_tuple=True)
    if len(candidates[0]):
        zc = zd[candidates]
        tail_c, tail_err = _negative_tail(zc, a, b)
        size = _horner(torch.where(zc.abs() <= r, zc.abs(), torch.zeros_like(zc)).detach(), coef.detach())
        use_tail = (zc.abs() > r) | (tail_err < torch.finfo(torch.float64).eps * size)
        tail = zeros.index_put(candidates, tail_c)
        inside = inside & ~torch.zeros_like(inside).index_put(candidates, use_tail)
    if bool((~inside & ~negative).any()):
        z_pos = torch.where(inside | negative, 2 * r * torch.ones_like(zd), zd)
        log_pos = z_pos ** (1.0 / a) + ((1.0 - b) / a) * torch.log(z_pos) - torch.log(a)
    return zd, inside, negative, series, tail, log_pos


def log_mittag_leffler(z: torch.Tensor, alpha: float | torch.Tensor, beta: float | torch.Tensor) -> torch.Tensor:
    """``log E_{a,b}(z)`` in float64; finite where ``mittag_leffler`` overflows (large positive ``z``).

    Valid where ``E_{a,b}(z) > 0``: everywhere for ``0 < a <= 1`` and ``b >= a``.
    """
    _, inside, negative, series, tail, log_pos = _branches(z, alpha, beta)
    tiny = torch.finfo(torch.float64).tiny
    log_in, log_neg = torch.log(torch.clamp(series, min=tiny)), torch.log(torch.clamp(tail, min=tiny))
    return torch.where(inside, log_in, torch.where(negative, log_neg, log_pos))


def mittag_leffler(z: torch.Tensor, alpha: float | torch.Tensor, beta: float | torch.Tensor) -> torch.Tensor:
    """``E_{a,b}(z)`` element-wise, in ``z``'s floating dtype (``inf`` where it overflows it).

    Args:
        z: real tensor of any shape.
        alpha: ``0 < a <= 1`` (a float or a 0-d tensor, which then receives gradients).
        beta: ``b > 0``.
    """
    zd, inside, negative, series, tail, log_pos = _branches(z, alpha, beta)
    out = torch.where(inside, series, torch.where(negative, tail, torch.exp(torch.clamp(log_pos, max=700.0))))
    return out.to(z.dtype) if z.is_floating_point() else out
