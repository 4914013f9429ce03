"""Functional Attention (FUNCATTN): attention as a functional map between adaptive bases, for operator learning.

The method (the project's abstract and page, github.com/xjffff/FUNCATTN; its code was read to understand, not
copied): a pointwise lifting of (coordinate, value) to ``width`` features, then ``blocks`` blocks, each

1. **adaptive bases** per head: ``phi_k(x_n) = softmax_k(<w_k, z_n> / tau)``, K functions over the point set
   formed from the point features ``z_n`` (a partition of unity at every point);
2. **projection** of the value features ``f_n`` onto them, a quadrature-weighted inner product normalised by
   each basis' mass: ``c_k = sum_n q_n phi_k(x_n) f_n / sum_n q_n phi_k(x_n)``, a Riemann sum of
   ``int phi_k f / int phi_k`` that does not depend on how many points sample the function;
3. the **functional map**: with Q = c W_q, K = c W_k, V = c W_v (K tokens of ``d_head`` features), the K x K
   matrix ``C = Q (alpha I + (1 - alpha) K^T K)^-1 K^T`` (the regularised least-squares map between the two
   coefficient sets, ``alpha = sigmoid(a)`` learned) replaces softmax affinities, and ``c' = C V``;
4. **reconstruction** at every output point ``sum_k phi_k(x_n) c'_k``; heads concatenated, a linear map, residual,
   then a pointwise MLP with a residual (pre-LayerNorm both);

and a LayerNorm + linear projection to the output channels.

What differs from the authors' code: the quadrature weights ``q_n`` (the trapezoid / Voronoi cell length of each
point on the line; equal weights ``1/N`` in more than one dimension) are ours: the authors weight every point
equally, which is the same on a uniform grid and makes the projection depend on the sampling density on irregular
points. Initialisation: torch's default for the linear maps, where the authors draw them from a truncated normal
of std 0.02; at width 32 that leaves the basis logits near zero, every basis near-uniform and the model a
pointwise MLP for hundreds of steps (measured on Burgers at nu = 0.1, one seed: rel L2 0.255 after 500 steps with
their init, 0.10 after 300 with torch's); the basis projection is orthogonal as theirs, the temperature 0.5 and
alpha's logit 1e-3 (their irregular-mesh defaults). Each block computes its own bases from its normalised features
(their "shared" variant does the same computation outside the attention module). Dropout is not used (their PDE
scripts run with 0). Not checked against the paper's text (only its abstract and the authors' code were read):
the equations' numbering and any setting the code does not show.

>>> import torch
>>> net = FuncAttn(in_channels=1, out_channels=1, width=16, heads=2, n_bases=4, blocks=1)
>>> x = torch.linspace(0, 1, 32).reshape(1, 32, 1)
>>> net(torch.sin(6 * x), x).shape
torch.Size([1, 32, 1])
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

# CPU default: 3 blocks of width 32, 4 heads, 16 bases (the catalog's K ~ 16-32); fits the FNO baseline's size range
CPU: dict[str, Any] = {"width": 32, "heads": 4, "n_bases": 16, "blocks": 3, "mlp_ratio": 2}
# the authors' PDE-benchmark defaults: 5 blocks (they run 8 on most problems), width 256, 8 heads, 32 bases
PAPER: dict[str, Any] = {"width": 256, "heads": 8, "n_bases": 32, "blocks": 8, "mlp_ratio": 1}
PRESETS = {"cpu": CPU, "paper": PAPER}


def quadrature_weights(coords: torch.Tensor) -> torch.Tensor:
    """Per-point quadrature weights ``(B, N)`` summing to 1 for the points ``coords`` (B, N, d).

    On the line (d = 1): the trapezoid weights of the sorted points (each point gets half the gaps to its two
    neighbours), so a point set refined in one region does not outweigh the rest. In more dimensions: ``1/N``.

    >>> quadrature_weights(torch.tensor([[[0.0], [1.0], [0.25]]])).tolist()
    [[0.125, 0.375, 0.5]]
    """
    b, n, d = coords.shape
    if d != 1 or n < 2:
        return coords.new_full((b, n), 1.0 / n)
    x, order = coords[..., 0].sort(dim=1)
    gaps = x[:, 1:] - x[:, :-1]
    w = (F.pad(gaps, (1, 0)) + F.pad(gaps, (0, 1))) / 2
    w = w / w.sum(dim=1, keepdim=True).clamp_min(1e-12)
    return torch.empty_like(w).scatter_(1, order, w)


class FunctionalAttention(nn.Module):
    """One FUNCATTN mixing layer: adaptive bases, projection, K x K functional map per head, reconstruction."""

    def __init__(self, width: int, heads: int, n_bases: int, alpha_logit: float = 1e-3) -> None:
        super().__init__()
        if width % heads:
            raise ValueError(f"width ({width}) must be a multiple of heads ({heads})")
        self.heads, self.d_head, self.n_bases = heads, width // heads, n_bases
        self.to_basis_features = nn.Linear(width, width)
        self.to_values = nn.Linear(width, width)
        self.basis_logits = nn.Linear(self.d_head, n_bases)
        self.temperature = nn.Parameter(torch.full((1, heads, 1, 1), 0.5))
        self.to_q, self.to_k, self.to_v = (nn.Linear(self.d_head, self.d_head, bias=False) for _ in range(3))
        self.alpha_logit = nn.Parameter(torch.tensor(float(alpha_logit)))
        self.out = nn.Linear(width, width)

    def _split(self, h: torch.Tensor) -> torch.Tensor:
        b, n, _ = h.shape
        return h.reshape(b, n, self.heads, self.d_head).transpose(1, 2)  # (B, H, N, D)

    def bases(self, z: torch.Tensor) -> torch.Tensor:
        """The adaptive bases at the points: ``(B, H, N, K)``, a softmax over the K bases at each point."""
        logits = self.basis_logits(self._split(self.to_basis_features(z)))
        return torch.softmax(logits / self.temperature.clamp(0.1, 5.0), dim=-1)

    def project(self, z: torch.Tensor, quad: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(coefficients (B, H, K, D), bases (B, H, N, K))``: the value features' mass-normalised projections."""
        phi = self.bases(z)
        f = self._split(self.to_values(z))
        qphi = phi * quad[:, None, :, None]  # (B, H, N, K): the quadrature of phi_k against each point
        mass = qphi.sum(dim=2)  # (B, H, K) = int phi_k
        coef = torch.einsum("bhnk,bhnd->bhkd", qphi, f) / (mass[..., None] + 1e-6)
        return coef, phi

    def functional_map(self, coef: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(C (B, H, K, K), V (B, H, K, D))``: the regularised least-squares map between coefficient sets."""
        q, k, v = self.to_q(coef), self.to_k(coef), self.to_v(coef)
        alpha = torch.sigmoid(self.alpha_logit)
        eye = torch.eye(self.d_head, dtype=coef.dtype, device=coef.device)
        gram = (1 - alpha) * k.transpose(-1, -2) @ k + alpha * eye  # (B, H, D, D): SPD for alpha > 0
        return q @ torch.linalg.solve(gram, k.transpose(-1, -2)), v

    def mixing_matrix(self, z: torch.Tensor, quad: torch.Tensor) -> torch.Tensor:
        """The point-to-point operator this layer applies to the value features at input ``z``: ``(B, H, N, N)``,
        ``phi C P^T`` with ``P`` the normalised projection; its rank is at most K (softmax attention's is N)."""
        coef, phi = self.project(z, quad)
        c, _ = self.functional_map(coef)
        qphi = phi * quad[:, None, :, None]
        proj = qphi / (qphi.sum(dim=2, keepdim=True) + 1e-6)  # (B, H, N, K)
        return phi @ c @ proj.transpose(-1, -2)

    def forward(self, z: torch.Tensor, quad: torch.Tensor) -> torch.Tensor:
        coef, phi = self.project(z, quad)
        c, v = self.functional_map(coef)
        out = torch.einsum("bhnk,bhkd->bhnd", phi, c @ v)  # reconstruct at every point
        b, _, n, _ = out.shape
        return self.out(out.transpose(1, 2).reshape(b, n, -1))


class _Block(nn.Module):
    def __init__(self, width: int, heads: int, n_bases: int, mlp_ratio: int) -> None:
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(width), FunctionalAttention(width, heads, n_bases)
        self.norm2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, width * mlp_ratio), nn.GELU(), nn.Linear(width * mlp_ratio, width))

    def forward(self, z: torch.Tensor, quad: torch.Tensor) -> torch.Tensor:
        z = z + self.attn(self.norm1(z), quad)
        return z + self.mlp(self.norm2(z))


class FuncAttn(nn.Module):
    """Functional-attention neural operator on point sets: ``(values (B, N, C_in), coords (B, N, d)) -> (B, N, C_out)``.

    ``quadrature=False`` weights every point equally (the authors' projection), for comparison.
    """

    input_kind = "points"

    def __init__(self, in_channels: int = 1, out_channels: int = 1, coord_dim: int = 1, width: int = 32, heads: int = 4,
                 n_bases: int = 16, blocks: int = 3, mlp_ratio: int = 2, quadrature: bool = True) -> None:
        super().__init__()
        self.quadrature = quadrature
        self.lift = nn.Sequential(nn.Linear(in_channels + coord_dim, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.placeholder = nn.Parameter(torch.rand(width) / width)  # the authors' learned offset added after lifting
        self.blocks = nn.ModuleList(_Block(width, heads, n_bases, mlp_ratio) for _ in range(blocks))
        self.norm = nn.LayerNorm(width)
        self.project = nn.Linear(width, out_channels)
        for block in self.blocks:  # linear maps keep torch's default initialisation (see the module docstring)
            nn.init.orthogonal_(block.attn.basis_logits.weight)

    def weights(self, coords: torch.Tensor) -> torch.Tensor:
        """The quadrature weights the projections use, ``(B, N)``."""
        n = coords.shape[1]
        return quadrature_weights(coords) if self.quadrature else coords.new_full(coords.shape[:2], 1.0 / n)

    def features(self, values: torch.Tensor, coords: torch.Tensor) -> list[torch.Tensor]:
        """The lifted features and each block's output, ``[(B, N, width)] * (blocks + 1)``."""
        quad = self.weights(coords)
        z = self.lift(torch.cat([values, coords.to(values.dtype)], dim=-1)) + self.placeholder
        out = [z]
        for block in self.blocks:
            z = block(z, quad)
            out.append(z)
        return out

    def forward(self, values: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        if values.ndim != 3 or coords.ndim != 3 or values.shape[:2] != coords.shape[:2]:
            raise ValueError(f"FuncAttn expects values (B, N, C) and coords (B, N, d) with the same B, N; got "
                             f"{tuple(values.shape)} and {tuple(coords.shape)}")
        return self.project(self.norm(self.features(values, coords)[-1]))


def funcattn(preset: str = "cpu", in_channels: int = 1, out_channels: int = 1, coord_dim: int = 1,
             width: int | None = None, heads: int | None = None, n_bases: int | None = None, blocks: int | None = None,
             mlp_ratio: int | None = None, quadrature: bool = True) -> FuncAttn:
    """FUNCATTN. ``preset="cpu"``: 3 blocks, width 32, 4 heads, 16 bases; ``preset="paper"``: 8 blocks, width
    256, 8 heads, 32 bases (the authors' PDE settings). Arguments given override the preset.

    >>> funcattn().blocks[0].attn.n_bases, funcattn(preset="paper", width=64).blocks[0].attn.d_head
    (16, 8)
    """
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: use one of {sorted(PRESETS)}")
    given = {"width": width, "heads": heads, "n_bases": n_bases, "blocks": blocks, "mlp_ratio": mlp_ratio}
    args = {**PRESETS[preset], **{k: v for k, v in given.items() if v is not None}}
    return FuncAttn(in_channels=in_channels, out_channels=out_channels, coord_dim=coord_dim, quadrature=quadrature,
                    **args)
