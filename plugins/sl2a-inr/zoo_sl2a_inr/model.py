"""SL2A-INR: one learnable-activation layer (Chebyshev polynomials), then a low-rank ReLU fusion MLP.

Heidari, Rezaeian, Azad, Merhof, Soltanian-Zadeh, Hacihaliloglu, "SL2A-INR: Single-Layer Learnable
Activation for Implicit Neural Representation", ICCV 2025 (arXiv 2409.10836), Sec. 3 and Fig. 1:

- Learnable-activation (LA) block: each output j sums, over the inputs i, a learnable 1-D function
  of the input, a degree-K Chebyshev expansion of ``tanh(x_i)`` (tanh maps onto the polynomials'
  domain [-1, 1]):  ``psi_j(x) = sum_i sum_{k=0..K} c_ijk T_k(tanh x_i)``, then LayerNorm.
- Fusion block: ReLU layers with low-rank weights ``W = U V`` (rank r); every layer, and the linear
  output layer, takes the element-wise product of the LA output with the previous layer's output
  (skip-connected modulation): ``h_1 = relu(W_1 (psi * psi))``, ``h_l = relu(W_l (psi * h_{l-1}))``,
  ``y = W_out (psi * h_L)``.

Initialisation as in the authors' code: Chebyshev coefficients Xavier-uniform over the
(in, out, K+1) tensor, i.e. U(+-sqrt(6 / ((in + out)(K + 1)))); low-rank factors U(in x r) and
V(r x out) Kaiming-uniform with a=sqrt(5) over their second dimension, i.e. U(+-1/sqrt(r)) and
U(+-1/sqrt(out)); bias U(+-1/sqrt(r)). Training rule (the paper's image-fitting setup): Adam, lr
1e-3 decayed exponentially to 0.1x over the run. Paper defaults: K=256, width 256, 3 fusion layers,
rank 128.
"""
from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["chebyshev_basis", "ChebyshevLA", "LowRankReLU", "SL2AINR", "sl2a_inr"]


def chebyshev_basis(t: torch.Tensor, degree: int) -> torch.Tensor:
    """``T_k(t)`` for k = 0..degree, t in [-1, 1]: shape (*t.shape, degree + 1), via T_k(cos a) = cos(k a).

    >>> [round(v, 5) for v in chebyshev_basis(torch.tensor(0.5), 3).tolist()]  # 1, t, 2t^2 - 1, 4t^3 - 3t
    [1.0, 0.5, -0.5, -1.0]
    """
    k = torch.arange(degree + 1, dtype=t.dtype, device=t.device)
    return torch.cos(torch.acos(t.clamp(-1.0, 1.0)).unsqueeze(-1) * k)


class ChebyshevLA(nn.Module):
    """The learnable-activation layer: ``y_j = sum_i phi_ij(x_i)``, phi_ij a degree-K Chebyshev series of tanh(x_i)."""

    def __init__(self, in_features: int, out_features: int, degree: int):
        super().__init__()
        self.degree = degree
        self.coeffs = nn.Parameter(torch.empty(in_features, out_features, degree + 1))
        bound = math.sqrt(6.0 / ((in_features + out_features) * (degree + 1)))
        nn.init.uniform_(self.coeffs, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        basis = chebyshev_basis(torch.tanh(x), self.degree)  # (N, in, K+1)
        return torch.einsum("nik,iok->no", basis, self.coeffs)


class LowRankReLU(nn.Module):
    """``relu(x U V + b)`` with U (in x rank), V (rank x out)."""

    def __init__(self, in_features: int, out_features: int, rank: int):
        super().__init__()
        self.u = nn.Parameter(torch.empty(in_features, rank).uniform_(-1 / math.sqrt(rank), 1 / math.sqrt(rank)))
        self.v = nn.Parameter(torch.empty(rank, out_features).uniform_(-1 / math.sqrt(out_features),
                                                                       1 / math.sqrt(out_features)))
        self.bias = nn.Parameter(torch.empty(out_features).uniform_(-1 / math.sqrt(rank), 1 / math.sqrt(rank)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu((x @ self.u) @ self.v + self.bias)


class SL2AINR(nn.Module):
    """SL2A-INR: ``ChebyshevLA -> LayerNorm``, then ``layers`` low-rank ReLU fusion layers, then a linear output.

    >>> m = SL2AINR(hidden=16, degree=8, layers=2, rank=4)
    >>> m(torch.zeros(3, 2)).shape
    torch.Size([3, 1])
    """

    default_lr = 1e-3
    default_lr_decay = 0.1

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 64, degree: int = 64,
                 layers: int = 3, rank: int = 16):
        super().__init__()
        self.la = ChebyshevLA(in_features, hidden, degree)
        self.norm = nn.LayerNorm(hidden)
        self.fusion = nn.ModuleList([LowRankReLU(hidden, hidden, rank) for _ in range(layers)])
        self.head = nn.Linear(hidden, out_features)

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        psi = self.norm(self.la(coords))
        h = psi
        for layer in self.fusion:
            h = layer(psi * h)
        return self.head(psi * h)


def sl2a_inr(in_features: int = 2, out_features: int = 1, hidden: int = 64, degree: int = 64, layers: int = 3,
             rank: int = 16) -> SL2AINR:
    """Builder of ``sl2a_inr`` (small CPU default: width 64, K=64, 3 fusion layers of rank 16; the
    paper's: width 256, K=256, 3 layers, rank 128)."""
    return SL2AINR(in_features, out_features, hidden, degree, layers, rank)
