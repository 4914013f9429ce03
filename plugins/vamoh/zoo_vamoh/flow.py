"""VaMoH's prior over the latent code: a normalizing flow of planar layers (VaMoH Sec. 3.1).

The paper puts a normalizing flow on p(z); the authors' code builds it from ``L`` planar layers
(Rezende & Mohamed 2015) with a leaky-ReLU non-linearity (``L=3`` on PolyMNIST, 20 on Shapes3D),
over a standard normal base. With a leaky ReLU a planar layer has a closed-form inverse, which is
what lets the ELBO evaluate log p(z) at posterior samples:

    f(e) = e + u_hat * h(w^T e + b),        h = LeakyReLU(alpha),
    log |det df/de| = log |1 + h'(w^T e + b) * w^T u_hat|,
    u_hat = u + (m(w^T u) - w^T u) * w / |w|^2,   m(x) = -1 + softplus(x)   (so w^T u_hat > -1).

With ``w^T u_hat > -1`` and 0 < alpha < 1 the scalar map a -> a + (w^T u_hat) h(a) is strictly
increasing, so a = w^T e + b is recovered from s = w^T f + b piece by piece (same sign as s), and
e = f - u_hat h(a). ``u`` starts at log(e - 1) w / |w|^2, where m(w^T u) = 0 and so u_hat = 0: a fresh
flow is the identity and p(z) = N(0, I).
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


class PlanarFlow(nn.Module):
    """One invertible planar layer with a leaky-ReLU non-linearity.

    >>> f = PlanarFlow(3)
    >>> e = torch.randn(5, 3)
    >>> z, logdet = f(e)
    >>> torch.allclose(f.inverse(z)[0], e)
    True
    """

    def __init__(self, dim: int, slope: float = 0.2):
        super().__init__()
        if not 0.0 < slope < 1.0:
            raise ValueError(f"PlanarFlow needs a leaky-ReLU slope in (0, 1), got {slope}")
        self.slope = float(slope)
        w = torch.randn(dim) / math.sqrt(dim)
        self.w = nn.Parameter(w)
        self.u = nn.Parameter(math.log(math.e - 1.0) * w / (w @ w))  # u_hat = 0: the identity map
        self.b = nn.Parameter(torch.zeros(1))

    def _u_hat(self) -> tuple[torch.Tensor, torch.Tensor]:
        wu = self.w @ self.u
        u_hat = self.u + (-1.0 + F.softplus(wu) - wu) * self.w / (self.w @ self.w)
        return u_hat, self.w @ u_hat

    def _h(self, a: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(a, self.slope)

    def _dh(self, a: torch.Tensor) -> torch.Tensor:
        return torch.where(a >= 0, torch.ones_like(a), torch.full_like(a, self.slope))

    def forward(self, e: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """e (B, d) -> (f(e) (B, d), log |det df/de| (B,))."""
        u_hat, wu = self._u_hat()
        a = e @ self.w + self.b
        z = e + u_hat * self._h(a).unsqueeze(-1)
        return z, torch.log(torch.abs(1.0 + self._dh(a) * wu))

    def inverse(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """z (B, d) -> (f^{-1}(z), log |det df/de| at that point (B,))."""
        u_hat, wu = self._u_hat()
        s = z @ self.w + self.b
        a = torch.where(s >= 0, s / (1.0 + wu), s / (1.0 + self.slope * wu))
        e = z - u_hat * self._h(a).unsqueeze(-1)
        return e, torch.log(torch.abs(1.0 + self._dh(a) * wu))


class FlowPrior(nn.Module):
    """p(z): ``layers`` planar layers over a standard normal base; exact ``log_prob`` and ``sample``.

    >>> p = FlowPrior(4, layers=2)
    >>> p.sample(3).shape, p.log_prob(torch.zeros(1, 4)).shape
    (torch.Size([3, 4]), torch.Size([1]))
    """

    def __init__(self, dim: int, layers: int = 3, slope: float = 0.2):
        super().__init__()
        self.dim = dim
        self.layers = nn.ModuleList([PlanarFlow(dim, slope) for _ in range(layers)])

    def log_prob(self, z: torch.Tensor) -> torch.Tensor:
        """log p(z) = log N(f^{-1}(z); 0, I) - sum_l log |det J_l|, (B, d) -> (B,)."""
        total = torch.zeros(z.shape[0], dtype=z.dtype, device=z.device)
        for layer in reversed(self.layers):
            z, logdet = layer.inverse(z)
            total = total - logdet
        base = -0.5 * (z ** 2).sum(-1) - 0.5 * self.dim * math.log(2 * math.pi)
        return base + total

    def sample(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """n draws from the flow: e ~ N(0, I) pushed through every layer."""
        z = torch.randn(n, self.dim, generator=generator, device=self.layers[0].w.device if self.layers else None)
        for layer in self.layers:
            z, _ = layer(z)
        return z
