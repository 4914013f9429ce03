"""MINO: a GNO encoder to latent tokens, attention on the tokens, a cross-attention decoder to any query points.

Mesh-Informed Neural Operator (catalog entry 20), as the velocity network of functional flow matching. Built from
the paper's abstract and the catalog entry (the full text was not read here), in three parts:

1. **GNO encoder** (a radius-graph kernel integral, Li et al. 2020): M latent tokens sit at fixed positions z_k
   (a uniform grid of [0, 1]^d); each token aggregates the lifted input points within radius r,
   h_k = sum_{j: |x_j - z_k| < r} w_j kappa(z_k - x_j) * P[f_t(x_j), x_j] / sum_{j in ball} w_j, kappa an MLP,
   with quadrature weights w_j = r_4(x_j)^d (r_4 the distance to the 4th nearest other point: the cell volume of
   x_j, an inverse local density, estimated from the point set itself). The weighted mean approximates the ball's
   average of kappa * P f, the same integral whatever the point density and number (a plain mean over the ball,
   ``quadrature="mean"``, weights dense regions more), and it is invariant to the order of the points.
2. **Processor**: pre-norm Transformer blocks (self-attention + MLP) on the tokens, with a learned embedding of
   each token's position and of the flow time t added to the tokens.
3. **Decoder**: cross-attention from each query point (queries embed [x_i, f_t(x_i)], the flow state at that
   point; keys/values the tokens), then an MLP to the C output channels, evaluated at any set of points.

Training, GP reference, ODE sampling and SGLD regression are OFM's (``zoo_ofm.flow.FunctionalFlow``): one
functional flow-matching implementation serves both plugins. Deviations: the query embedding includes f_t(x_i)
(our choice: the velocity depends on the local state); CPU default 16 tokens, width 32, 2 blocks, radius 0.1
(``preset="paper"``: 64 tokens, width 128, 4 blocks, our guess at a paper-scale setting: the text was not read).
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from zoo_ofm.flow import FunctionalFlow
from zoo_ofm.model import REFERENCE

__all__ = ["GNOEncoder", "MINOVelocity", "PointwiseMLPVelocity", "mino", "pointwise_mlp_flow", "CPU", "PAPER"]

CPU: dict[str, Any] = {"tokens": 16, "width": 32, "blocks": 2, "heads": 4, "radius": 0.1, "batch_size": 32, "lr": 1e-3,
                       "ode_steps": 16}
PAPER: dict[str, Any] = {"tokens": 64, "width": 128, "blocks": 4, "heads": 4, "radius": 0.05, "batch_size": 64,
                         "lr": 1e-3, "ode_steps": 32}


def token_grid(tokens: int, d: int) -> torch.Tensor:
    """``tokens`` latent positions on a uniform grid of [0, 1]^d (cell centres): ``(tokens, d)``."""
    side = round(tokens ** (1 / d))
    if side ** d != tokens:
        raise ValueError(f"MINO needs tokens to be a perfect d-th power for d={d}, got {tokens}")
    axis = (torch.arange(side, dtype=torch.float32) + 0.5) / side
    return torch.stack(torch.meshgrid(*[axis] * d, indexing="ij"), dim=-1).reshape(-1, d)


class GNOEncoder(nn.Module):
    """Radius-graph kernel integral from points to tokens: ``(B, N, C_in), (B, N, d) -> (B, M, width)``.

    >>> enc = GNOEncoder(in_channels=2, width=8, positions=token_grid(4, 1), radius=0.3)
    >>> enc(torch.randn(3, 10, 2), torch.rand(3, 10, 1)).shape
    torch.Size([3, 4, 8])
    """

    def __init__(self, in_channels: int, width: int, positions: torch.Tensor, radius: float, kernel_hidden: int = 32,
                 quadrature: str = "knn", knn: int = 4):
        super().__init__()
        if quadrature not in ("knn", "mean"):
            raise ValueError(f"GNOEncoder quadrature must be 'knn' or 'mean', got {quadrature!r}")
        d = positions.shape[-1]
        self.radius, self.quadrature, self.knn = radius, quadrature, knn
        self.register_buffer("positions", positions)
        self.lift = nn.Linear(in_channels + d, width)
        self.kernel = nn.Sequential(nn.Linear(d, kernel_hidden), nn.GELU(), nn.Linear(kernel_hidden, width))

    def forward(self, values: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        feats = self.lift(torch.cat([values, coords], dim=-1))  # (B, N, W)
        shared = coords.shape[0] == 1 or coords.stride(0) == 0  # one point set for the batch: one graph
        pts = coords[:1] if shared else coords
        diff = self.positions[None, :, None, :] - pts[:, None, :, :]  # (B or 1, M, N, d)
        inside = (diff.norm(dim=-1) < self.radius).to(feats.dtype)  # the radius graph, (B or 1, M, N)
        if self.quadrature == "knn" and pts.shape[1] > 1:
            # w_j = r_k(x_j)^d, the distance to the k-th nearest other point: the cell volume of x_j (an inverse
            # density) estimated from the points themselves
            k = min(self.knn, pts.shape[1] - 1)
            rk = torch.cdist(pts, pts).topk(k + 1, dim=-1, largest=False).values[..., -1]  # (B or 1, N)
            inside = inside * rk.pow(pts.shape[-1])[:, None, :]
        weight = self.kernel(diff / self.radius) * (inside / inside.sum(-1, keepdim=True).clamp_min(1e-12)).unsqueeze(-1)
        # the (quadrature-weighted) mean over the ball of kappa * features; an empty ball gives 0
        if shared:
            return torch.einsum("mnw,bnw->bmw", weight[0], feats)
        return torch.einsum("bmnw,bnw->bmw", weight, feats)


class _Block(nn.Module):
    """A pre-norm Transformer block: self-attention then an MLP, both residual."""

    def __init__(self, width: int, heads: int):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        x = self.norm1(h)
        h = h + self.attn(x, x, x, need_weights=False)[0]
        return h + self.mlp(self.norm2(h))


def _time_features(t: torch.Tensor, n: int = 8) -> torch.Tensor:
    """Sinusoidal features of the flow time, ``(B,) -> (B, 2n)``."""
    freq = torch.exp(torch.linspace(0, math.log(100.0), n))
    ang = t.view(-1, 1) * freq
    return torch.cat([ang.sin(), ang.cos()], dim=-1)


class MINOVelocity(nn.Module):
    """MINO as a velocity field ``(f_t (B, N, C), coords (B, N, d), t (B,)) -> (B, N, C)`` at any N and point set."""

    def __init__(self, channels: int = 1, d: int = 1, tokens: int = 16, width: int = 32, blocks: int = 2,
                 heads: int = 4, radius: float = 0.1):
        super().__init__()
        positions = token_grid(tokens, d)
        self.encoder = GNOEncoder(channels, width, positions, radius)
        self.token_embed = nn.Sequential(nn.Linear(d, width), nn.GELU(), nn.Linear(width, width))
        self.time_embed = nn.Sequential(nn.Linear(16, width), nn.GELU(), nn.Linear(width, width))
        self.blocks = nn.ModuleList([_Block(width, heads) for _ in range(blocks)])
        self.query = nn.Sequential(nn.Linear(d + channels, width), nn.GELU(), nn.Linear(width, width))
        self.norm_q, self.norm_kv = nn.LayerNorm(width), nn.LayerNorm(width)
        self.cross = nn.MultiheadAttention(width, heads, batch_first=True)
        self.head = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, channels))

    def forward(self, f: torch.Tensor, coords: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        temb = self.time_embed(_time_features(t.to(f.dtype)))[:, None, :]
        h = self.encoder(f, coords) + self.token_embed(self.encoder.positions) + temb
        for block in self.blocks:
            h = block(h)
        q = self.query(torch.cat([coords, f], dim=-1)) + temb
        kv = self.norm_kv(h)
        out = q + self.cross(self.norm_q(q), kv, kv, need_weights=False)[0]
        return self.head(out)


class PointwiseMLPVelocity(nn.Module):
    """The point-agnostic baseline velocity: an MLP of [f_t(x_i), x_i, t] at each point alone (no interaction)."""

    def __init__(self, channels: int = 1, d: int = 1, width: int = 64, depth: int = 3):
        super().__init__()
        layers: list[nn.Module] = []
        dims = [channels + d + 16] + [width] * depth
        for a, b in zip(dims[:-1], dims[1:], strict=True):
            layers += [nn.Linear(a, b), nn.GELU()]
        self.mlp = nn.Sequential(*layers, nn.Linear(width, channels))

    def forward(self, f: torch.Tensor, coords: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        tf = _time_features(t.to(f.dtype))[:, None, :].expand(*f.shape[:2], 16)
        return self.mlp(torch.cat([f, coords, tf], dim=-1))


def _config(preset: str, given: dict[str, Any]) -> dict[str, Any]:
    if preset not in ("cpu", "paper"):
        raise ValueError(f"mino preset must be 'cpu' or 'paper', got {preset!r}")
    cfg = dict(CPU if preset == "cpu" else PAPER)
    cfg.update({k: v for k, v in given.items() if v is not None})
    return cfg


def mino(*, preset: str = "cpu", channels: int = 1, d: int = 1, tokens: int | None = None, width: int | None = None,
         blocks: int | None = None, heads: int | None = None, radius: float | None = None,
         reference: dict[str, Any] | None = None, coupling: str = "ot", lr: float | None = None,
         batch_size: int | None = None, ode_steps: int | None = None) -> FunctionalFlow:
    """MINO velocity trained by functional flow matching (OFM's); ``preset`` "cpu" (default) or "paper".

    >>> model = mino(tokens=4, width=8, blocks=1)
    >>> model.sample(torch.rand(10, 1), 3, seed=0).shape
    torch.Size([3, 10, 1])
    """
    cfg = _config(preset, {"tokens": tokens, "width": width, "blocks": blocks, "heads": heads, "radius": radius,
                           "lr": lr, "batch_size": batch_size, "ode_steps": ode_steps})
    velocity = MINOVelocity(channels, d, cfg["tokens"], cfg["width"], cfg["blocks"], cfg["heads"], cfg["radius"])
    return FunctionalFlow(velocity, channels=channels, reference={**REFERENCE, **(reference or {})}, coupling=coupling,
                          lr=cfg["lr"], batch_size=cfg["batch_size"], ode_steps=cfg["ode_steps"])


def pointwise_mlp_flow(*, channels: int = 1, d: int = 1, width: int = 64, depth: int = 3, lr: float = 1e-3,
                       batch_size: int = 32, ode_steps: int = 16, reference: dict[str, Any] | None = None) -> FunctionalFlow:
    """The claim's baseline: the same flow matching with the point-agnostic MLP velocity."""
    return FunctionalFlow(PointwiseMLPVelocity(channels, d, width, depth), channels=channels,
                          reference={**REFERENCE, **(reference or {})}, lr=lr, batch_size=batch_size, ode_steps=ode_steps)
