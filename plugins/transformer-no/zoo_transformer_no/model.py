"""Transformer neural operators: attention as an integral operator on functions (continuum attention).

Calvello, Kovachki, Levine, Stuart, "Continuum Attention for Neural Operators" (arXiv 2406.06486), Sec. 3-4.
For an input function u on a domain D, the attention operator is

    A(u)(x) = int_D  exp(<Q u(x), K u(y)> / sqrt(d)) V u(y) dy  /  int_D exp(<Q u(x), K u(s)> / sqrt(d)) ds

and the attention used in practice is its quadrature: with the function sampled at points y_j and quadrature
weights w_j, ``softmax_j(<q_i, k_j> / sqrt(d) + log w_j) v_j``. Uniform weights (a uniform grid, or points drawn
uniformly: the Monte Carlo rule) cancel between numerator and denominator, which is why ordinary softmax
attention is already a discretisation of A; on non-uniform points the weights matter, and without them the
output depends on where the function was sampled. ``quadrature_weights`` gives the 1D rule (the length of each
point's cell, a trapezoid-like rule for any sorted or unsorted points); points in d > 1 use the Monte Carlo rule.

The transformer neural operator (``TransformerNO1d``) lifts the input pointwise (values with their coordinates and
``pos_freqs`` Fourier features of them),
applies pre-norm blocks ``u + A(LN u)`` and ``u + MLP(LN u)`` (LayerNorm and MLP act pointwise, so every block
maps functions to functions), and projects pointwise. ``PatchedTransformerNO2d`` is the paper's function-space
patching for 2D grids: the domain is cut into ``patches x patches`` sub-domains and each patch is a function on
its sub-domain; attention runs between patches, with the score of two patch functions the integral over the
patch of ``<Q u_p(z), K u_q(z)>`` (a mean over the patch's pixels times the patch's area, so it does not depend
on the resolution), and the value is the patch function ``V u_q`` itself. The number of patches is fixed, not the
number of pixels per patch, so the same model runs at any grid size divisible by ``patches``.

Deviations: the paper's text was read in part (abstract, Sec. 3 formulation); the exact widths, depths and
training schedules of its experiments are not reproduced (the ``paper`` preset is a larger setting of the same
structure, not the paper's table). Within-patch mixing in the patched model is a spectral convolution on each patch
function (``zoo_nn.operators.SpectralConv2d``) beside the pointwise MLP: a choice of this plugin, since pointwise
maps alone never mix values inside a patch. The lifting sees sin/cos features of the coordinates (8 frequencies by
default), a pointwise positional encoding chosen here: with the bare coordinate the attention scores are monotone in
position and cannot focus near a point (the first records, without it, learned little beyond each function's mean).
1D quadrature weights are cell lengths on the periodic [0, 1).
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.operators import SpectralConv2d, grid_coordinates

__all__ = ["ContinuumAttention", "TransformerNO1d", "PatchedTransformerNO2d", "quadrature_weights",
           "transformer_no_1d", "transformer_no_2d", "PRESETS"]

PRESETS = {
    "cpu": {"width": 32, "heads": 4, "layers": 2, "mlp_ratio": 2},
    "paper": {"width": 128, "heads": 8, "layers": 4, "mlp_ratio": 4},
}


def quadrature_weights(coords: torch.Tensor, rule: str = "cell") -> torch.Tensor | None:
    """Quadrature weights ``(B, N)`` (summing to 1 per function) for points ``coords (B, N, d)``, or None.

    ``rule="cell"``: in 1D each point's weight is the length of its cell on the periodic domain [0, 1) (half the
    distance between its left and right neighbours, wrapping around), which integrates a function sampled anywhere,
    in any order, and is exactly uniform on a uniform grid; in d > 1 the Monte Carlo rule (None: equal weights).
    ``rule="uniform"``: None, i.e. plain softmax attention.

    >>> quadrature_weights(torch.tensor([[[0.5], [0.0], [0.75]]]))
    tensor([[0.3750, 0.3750, 0.2500]])
    """
    if rule == "uniform" or coords.shape[-1] != 1:
        return None
    if rule != "cell":
        raise ValueError(f"quadrature rule {rule!r}: expected 'cell' or 'uniform'")
    x, order = coords[..., 0].sort(dim=-1)
    prev = torch.cat([x[..., -1:] - 1, x[..., :-1]], dim=-1)
    nxt = torch.cat([x[..., 1:], x[..., :1] + 1], dim=-1)
    cell = ((nxt - prev) / 2).clamp_min(1e-12)
    w = torch.empty_like(cell).scatter_(-1, order, cell)
    return w / w.sum(-1, keepdim=True)


class ContinuumAttention(nn.Module):
    """Multi-head attention as the quadrature of the attention operator A (Sec. 3 of the paper).

    ``forward(u (B, N, C), weights (B, N) | None) -> (B, N, C)``: with ``weights`` the logits get ``log w_j``
    added, so the softmax normalisation is the quadrature of the denominator integral.
    """

    def __init__(self, width: int, heads: int):
        super().__init__()
        if width % heads:
            raise ValueError(f"width {width} must be divisible by heads {heads}")
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, u: torch.Tensor, weights: torch.Tensor | None = None) -> torch.Tensor:
        b, n, c = u.shape
        q, k, v = self.qkv(u).view(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        mask = None if weights is None else weights.log()[:, None, None, :].to(q.dtype)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # scale 1/sqrt(d_head)
        return self.out(y.transpose(1, 2).reshape(b, n, c))


def fourier_features(coords: torch.Tensor, freqs: int) -> torch.Tensor:
    """``[x, sin(2 pi k x), cos(2 pi k x)]`` for k = 1..freqs per coordinate: (..., d) -> (..., d (1 + 2 freqs)).

    A pointwise positional encoding of the domain [0, 1)^d: with it, <q(x), k(y)> can depend on x - y through
    sum_k cos(2 pi k (x - y)), so attention can focus near a point; a linear coordinate alone cannot.
    """
    if freqs == 0:
        return coords
    k = torch.arange(1, freqs + 1, device=coords.device, dtype=coords.dtype)
    angles = 2 * math.pi * coords[..., None] * k  # (..., d, freqs)
    return torch.cat([coords, angles.sin().flatten(-2), angles.cos().flatten(-2)], dim=-1)


class _MLP(nn.Sequential):
    def __init__(self, width: int, hidden: int):
        super().__init__(nn.Linear(width, hidden), nn.GELU(), nn.Linear(hidden, width))


class TransformerNO1d(nn.Module):
    """Transformer neural operator on point clouds: ``(values (B, N, C_in), coords (B, N, d)) -> (B, N, C_out)``.

    Args:
        in_channels / out_channels: channels of the input and output functions.
        dim: dimension d of the domain (coordinates are lifted with the values).
        width, heads, layers, mlp_ratio: the transformer's channel width, heads, blocks, MLP expansion.
        quadrature: "cell" (quadrature-weighted attention, the paper's continuum view) or "uniform"
            (plain softmax attention: the same on uniform grids, biased on non-uniform points).

    Called with values alone, ``values`` is a grid ``(B, C_in, N)`` on the points ``j / N`` and the output is the
    grid ``(B, C_out, N)`` (a uniform grid is one point cloud among others).

    >>> m = TransformerNO1d(width=16, heads=2, layers=1)
    >>> m(torch.randn(2, 10, 1), torch.rand(2, 10, 1)).shape, m(torch.randn(2, 1, 12)).shape
    (torch.Size([2, 10, 1]), torch.Size([2, 1, 12]))
    """

    input_kind = "points"

    def __init__(self, in_channels: int = 1, out_channels: int = 1, dim: int = 1, width: int = 32, heads: int = 4,
                 layers: int = 2, mlp_ratio: int = 2, quadrature: str = "cell", pos_freqs: int = 8):
        super().__init__()
        quadrature_weights(torch.zeros(1, 1, dim), quadrature)  # validate the rule name early
        self.quadrature, self.in_channels, self.out_channels, self.dim = quadrature, in_channels, out_channels, dim
        self.pos_freqs = pos_freqs
        self.lift = nn.Linear(in_channels + dim * (1 + 2 * pos_freqs), width)
        self.norm1 = nn.ModuleList([nn.LayerNorm(width) for _ in range(layers)])
        self.attn = nn.ModuleList([ContinuumAttention(width, heads) for _ in range(layers)])
        self.norm2 = nn.ModuleList([nn.LayerNorm(width) for _ in range(layers)])
        self.mlp = nn.ModuleList([_MLP(width, mlp_ratio * width) for _ in range(layers)])
        self.proj = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 2 * width), nn.GELU(),
                                  nn.Linear(2 * width, out_channels))

    def forward(self, values: torch.Tensor, coords: torch.Tensor | None = None) -> torch.Tensor:
        if coords is None:  # a grid (B, C_in, N) on j / N
            if self.dim != 1 or values.ndim != 3:
                raise ValueError(f"TransformerNO1d: without coords the input is a 1D grid (B, C_in, N), got "
                                 f"{tuple(values.shape)} for dim={self.dim}")
            grid = grid_coordinates((values.shape[-1],), device=values.device).permute(1, 0).to(values.dtype)
            return self(values.transpose(1, 2), grid.expand(values.shape[0], -1, -1)).transpose(1, 2)
        w = quadrature_weights(coords, self.quadrature)
        u = self.lift(torch.cat([values, fourier_features(coords, self.pos_freqs)], dim=-1))
        for n1, attn, n2, mlp in zip(self.norm1, self.attn, self.norm2, self.mlp, strict=True):
            u = u + attn(n1(u), w)
            u = u + mlp(n2(u))
        return self.proj(u)


class PatchAttention(nn.Module):
    """Attention between patch functions: scores are integrals over the patch, values are patch functions.

    ``forward(u (B, P, h, w, C)) -> (B, P, h, w, C)`` for P patches of h x w pixels each.
    """

    def __init__(self, width: int, heads: int):
        super().__init__()
        if width % heads:
            raise ValueError(f"width {width} must be divisible by heads {heads}")
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)

    def forward(self, u: torch.Tensor) -> torch.Tensor:
        b, p, h, w, c = u.shape
        dh = c // self.heads
        q, k, v = self.qkv(u).view(b, p, h * w, 3, self.heads, dh).permute(3, 0, 4, 1, 2, 5)  # (B, H, P, hw, dh)
        area = 1.0 / p  # each patch covers 1/P of the unit square
        # <Q u_p, K u_q>_{L2(patch)} = area * mean over the patch's pixels of the pointwise inner product
        scores = torch.einsum("bhpzd,bhqzd->bhpq", q, k) * (area / (h * w)) / math.sqrt(dh)
        y = torch.einsum("bhpq,bhqzd->bhpzd", scores.softmax(-1), v)
        return self.out(y.permute(0, 2, 3, 1, 4).reshape(b, p, h, w, c))


class PatchedTransformerNO2d(nn.Module):
    """Patched transformer neural operator on 2D grids: ``a (B, C_in, H, W) -> (B, C_out, H, W)``.

    ``patches`` per side (H and W must be divisible by it; the pixels per patch grow with the resolution);
    ``modes`` Fourier modes per side of the spectral convolution applied to each patch function.

    >>> m = PatchedTransformerNO2d(width=16, heads=2, layers=1, patches=2, modes=2)
    >>> m(torch.randn(1, 1, 8, 8)).shape, m(torch.randn(1, 1, 16, 16)).shape
    (torch.Size([1, 1, 8, 8]), torch.Size([1, 1, 16, 16]))
    """

    input_kind = "grid"
    grid_dim = 2  # operator_learn gives it (B, C, H, W) grids

    def __init__(self, in_channels: int = 1, out_channels: int = 1, width: int = 32, heads: int = 4, layers: int = 2,
                 mlp_ratio: int = 2, patches: int = 4, modes: int = 4, pos_freqs: int = 8):
        super().__init__()
        self.patches, self.in_channels, self.out_channels, self.pos_freqs = patches, in_channels, out_channels, pos_freqs
        self.lift = nn.Linear(in_channels + 2 * (1 + 2 * pos_freqs), width)
        self.norm1 = nn.ModuleList([nn.LayerNorm(width) for _ in range(layers)])
        self.attn = nn.ModuleList([PatchAttention(width, heads) for _ in range(layers)])
        self.norm2 = nn.ModuleList([nn.LayerNorm(width) for _ in range(layers)])
        self.mlp = nn.ModuleList([_MLP(width, mlp_ratio * width) for _ in range(layers)])
        self.spectral = nn.ModuleList([SpectralConv2d(width, width, modes, modes) for _ in range(layers)])
        self.proj = nn.Sequential(nn.LayerNorm(width), nn.Linear(width, 2 * width), nn.GELU(),
                                  nn.Linear(2 * width, out_channels))

    def _split(self, u: torch.Tensor) -> torch.Tensor:  # (B, H, W, C) -> (B, P, h, w, C)
        b, hh, ww, c = u.shape
        s = self.patches
        return u.view(b, s, hh // s, s, ww // s, c).permute(0, 1, 3, 2, 4, 5).reshape(b, s * s, hh // s, ww // s, c)

    def _merge(self, u: torch.Tensor, hh: int, ww: int) -> torch.Tensor:  # (B, P, h, w, C) -> (B, H, W, C)
        b, _, h, w, c = u.shape
        s = self.patches
        return u.view(b, s, s, h, w, c).permute(0, 1, 3, 2, 4, 5).reshape(b, hh, ww, c)

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        b, _, hh, ww = a.shape
        if hh % self.patches or ww % self.patches:
            raise ValueError(f"grid {hh}x{ww} is not divisible into {self.patches}x{self.patches} patches")
        grid = grid_coordinates((hh, ww), device=a.device).permute(1, 2, 0).expand(b, hh, ww, 2).to(a.dtype)
        feats = torch.cat([a.permute(0, 2, 3, 1), fourier_features(grid, self.pos_freqs)], dim=-1)
        u = self._split(self.lift(feats))  # (B, P, h, w, C)
        p, h, w, c = u.shape[1:]
        for n1, attn, n2, mlp, spec in zip(self.norm1, self.attn, self.norm2, self.mlp, self.spectral, strict=True):
            u = u + attn(n1(u))
            z = n2(u)
            # the spectral convolution acts on each patch function (patches folded into the batch)
            zs = spec(z.reshape(b * p, h, w, c).permute(0, 3, 1, 2)).permute(0, 2, 3, 1).reshape(b, p, h, w, c)
            u = u + mlp(z) + zs
        return self.proj(self._merge(u, hh, ww)).permute(0, 3, 1, 2)


def _preset(preset: str, overrides: dict) -> dict:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: expected one of {sorted(PRESETS)}")
    return {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}


def transformer_no_1d(preset: str = "cpu", *, in_channels: int = 1, out_channels: int = 1, dim: int = 1,
                      width: int | None = None, heads: int | None = None, layers: int | None = None,
                      mlp_ratio: int | None = None, quadrature: str = "cell", pos_freqs: int = 8) -> TransformerNO1d:
    """Transformer neural operator on points (kind "points"); ``preset`` "cpu" (default) or "paper"."""
    args = _preset(preset, {"width": width, "heads": heads, "layers": layers, "mlp_ratio": mlp_ratio})
    return TransformerNO1d(in_channels, out_channels, dim, quadrature=quadrature, pos_freqs=pos_freqs, **args)


def transformer_no_2d(preset: str = "cpu", *, in_channels: int = 1, out_channels: int = 1, width: int | None = None,
                      heads: int | None = None, layers: int | None = None, mlp_ratio: int | None = None,
                      patches: int = 4, modes: int = 4, pos_freqs: int = 8) -> PatchedTransformerNO2d:
    """Patched transformer neural operator on 2D grids (kind "grid"); ``preset`` "cpu" (default) or "paper"."""
    args = _preset(preset, {"width": width, "heads": heads, "layers": layers, "mlp_ratio": mlp_ratio})
    return PatchedTransformerNO2d(in_channels, out_channels, patches=patches, modes=modes, pos_freqs=pos_freqs, **args)
