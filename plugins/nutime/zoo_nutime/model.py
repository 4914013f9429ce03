"""NuTime (Lin, Wen, Cao, Huang, Bian, Lin and Wu, TMLR 2024, arXiv:2310.07402): numerically multi-scaled embedding.

A series (B, C, L) is cut into non-overlapping windows of ``w`` samples; each window becomes three things (Sec. 3.1):
its normalised shape ``(x - mu) / (sigma + eps)``, its mean ``mu`` and its standard deviation ``sigma``. The shape is
embedded linearly (a stride-w convolution) and layer-normalised; the two scalars, whose magnitude can be anything,
go through the numerically multi-scaled embedding (NME, Sec. 3.2): for the enumerated scales ``s_k = b^k``,

    e(x) = sum_k alpha_k(x) LN(x w_k + s_k b_k),   alpha_k(x) proportional to 1 / (|log(|x| / s_k + eps)| + eps),

with learned ``w_k, b_k`` (uniform in [-1, 1]) and a LayerNorm without affine parameters. Since
``LN(x w_k + s_k b_k) = LN((x / s_k) w_k + b_k)``, each term sees ``x`` at the scale ``s_k`` where it is O(1), every
term has norm sqrt(dim), and the weights favour the scales closest to |x|: the embedding stays well-conditioned from
1e-4 to 1e4 where a linear embedding ``x w`` grows by eight orders of magnitude. The shape embedding and the two NME
vectors are concatenated and mapped to the token width (linear + LayerNorm); several channels are concatenated per
window and mapped the same way. A class token and fixed sinusoidal positions go into a pre-norm transformer; the
class token (after a final LayerNorm) is the representation.

Pretraining (official code, ``configs/train_ssl.json``: "BYOL"; the abstract says "a simple contrastive
objective"): an online network (encoder, projector MLP with BatchNorm, predictor MLP of the same shape) predicts a
momentum (EMA) copy of encoder + projector on the other view; loss ``MSE(normalize(p1), normalize(z2)) +
MSE(normalize(p2), normalize(z1))`` (the official loss is ``nn.MSELoss`` on the normalised vectors).

``scalar_embed="linear"`` swaps the NME for a plain ``Linear(1, dim)`` of each scalar (the comparison model); all the
rest is unchanged. Paper defaults (``preset="paper"``): window 16, width 128, 6 layers, 8 heads of 16, MLP 512, NME
width 16 with 5 scales 1e-2..1e2, projector 4096 -> 256, AdamW lr 2e-3, weight decay 0.05, EMA 0.999 raised to 1 by a
cosine schedule. CPU default (``CPU``): width 64, 2 layers, 4 heads, MLP 128, 9 scales 1e-4..1e4 (the catalog's
k = -4..4, wide enough for the task's 1e-3..1e3 series), projector 256 -> 64, EMA 0.99 fixed.

Deviations: each NME term is computed as ``LN((x / s_k) w_k + b_k)``, which equals the official
``LN(x w_k + s_k b_k)`` except where LayerNorm's eps (1e-5) dominates the official form's variance, i.e. for scales
and values below ~1e-2 (the official 5 scales stop at 1e-2; the CPU default's 9 go down to 1e-4);
the EMA rate is fixed (``ssl_loss`` does not know the schedule's length); no dropout (the paper's 0.1);
a length that is not a multiple of ``w`` is linearly resized up to the next multiple (the official pipeline resizes
every series to 512); the transformer blocks are ``zoo_nn.backbones.Block`` (QKV with biases).
"""
from __future__ import annotations

import copy
import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.backbones import Block

__all__ = ["CPU", "PAPER", "NME", "LinearScalarEmbedding", "NuTime", "nutime", "window_tokens"]

CPU: dict[str, Any] = {"window": 16, "dim": 64, "depth": 2, "heads": 4, "mlp_dim": 128, "nme_dim": 16,
                       "num_scales": 9, "base": 10.0, "proj_hidden": 256, "proj_dim": 64, "ema": 0.99,
                       "scalar_embed": "nme", "in_chans": 1}
PAPER: dict[str, Any] = {"window": 16, "dim": 128, "depth": 6, "heads": 8, "mlp_dim": 512, "nme_dim": 16,
                         "num_scales": 5, "base": 10.0, "proj_hidden": 4096, "proj_dim": 256, "ema": 0.999,
                         "scalar_embed": "nme", "in_chans": 1}
PRESETS = {"cpu": CPU, "paper": PAPER}
SCALAR_EMBEDS = ("nme", "linear")
EPS = 1e-6  # inside the NME's log and weights (official value)
SHAPE_EPS = 1e-8  # in the window normalisation (official value)


def window_tokens(x: torch.Tensor, window: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Non-overlapping windows of ``x`` (B, C, L) as (shape (B, C, N, w), mean (B, C, N), std (B, C, N)).

    ``shape * (std + 1e-8) + mean`` gives the windows back; ``std`` is the unbiased sample deviation.

    >>> s, m, sd = window_tokens(torch.arange(8.0).reshape(1, 1, 8), 4)
    >>> m.tolist(), [round(v, 3) for v in sd.flatten().tolist()]
    ([[[1.5, 5.5]]], [1.291, 1.291])
    """
    if x.ndim != 3 or x.shape[-1] % window:
        raise ValueError(f"window_tokens: expected (B, C, L) with L a multiple of {window}, got {tuple(x.shape)}")
    b, c, n = x.shape[0], x.shape[1], x.shape[-1] // window
    win = x.reshape(b, c, n, window)
    mean, std = win.mean(-1), win.std(-1)
    return (win - mean[..., None]) / (std[..., None] + SHAPE_EPS), mean, std


class NME(nn.Module):
    """Numerically multi-scaled embedding of scalars: (...) -> (..., dim) (Sec. 3.2; see the module docstring)."""

    def __init__(self, dim: int = 16, num_scales: int = 9, base: float = 10.0) -> None:
        super().__init__()
        if num_scales < 1:
            raise ValueError(f"NME: num_scales={num_scales} must be >= 1")
        lo = -((num_scales - 1) // 2)
        self.register_buffer("scales", torch.tensor([base ** k for k in range(lo, lo + num_scales)]),
                             persistent=False)
        self.w = nn.Parameter(torch.empty(num_scales, dim).uniform_(-1, 1))
        self.b = nn.Parameter(torch.empty(num_scales, dim).uniform_(-1, 1))
        self.dim = dim

    def weights(self, x: torch.Tensor) -> torch.Tensor:
        """alpha_k(x) (..., K), summing to 1: largest for the scale nearest |x| on a log axis."""
        a = 1.0 / ((torch.log(x.abs()[..., None] / self.scales + EPS)).abs() + EPS)
        return a / a.sum(-1, keepdim=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # LN(x w_k + s_k b_k) computed as LN((x / s_k) w_k + b_k): equal but for LayerNorm's eps, which in the
        # first form swamps every term whose pre-norm magnitude is below ~sqrt(eps) (x and s_k under ~1e-2)
        e = F.layer_norm((x[..., None] / self.scales)[..., None] * self.w + self.b, (self.dim,))  # (..., K, dim)
        return (self.weights(x)[..., None] * e).sum(-2)


class LinearScalarEmbedding(nn.Module):
    """The plain alternative: ``x -> x w + b`` (Linear(1, dim)), scale-blind."""

    def __init__(self, dim: int = 16, **_: Any) -> None:
        super().__init__()
        self.lin = nn.Linear(1, dim)
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x[..., None])


def _sincos_1d(n: int, dim: int) -> torch.Tensor:
    pos = torch.arange(n, dtype=torch.float64)[:, None]
    div = torch.exp(torch.arange(0, dim, 2, dtype=torch.float64) * (-math.log(10000.0) / dim))
    pe = torch.zeros(n, dim, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * div), torch.cos(pos * div)
    return pe.float()


class NuTimeEncoder(nn.Module):
    """Windows -> (shape, mean, std) tokens -> transformer -> class token (B, dim)."""

    def __init__(self, *, window: int, dim: int, depth: int, heads: int, mlp_dim: int, nme_dim: int,
                 num_scales: int, base: float, scalar_embed: str, in_chans: int, max_tokens: int = 1024) -> None:
        super().__init__()
        if scalar_embed not in SCALAR_EMBEDS:
            raise ValueError(f"scalar_embed={scalar_embed!r}: choose one of {SCALAR_EMBEDS}")
        self.window, self.in_chans = window, in_chans
        self.shape_embed = nn.Linear(window, dim)  # the official stride-w Conv1d(1, dim, w)
        self.shape_norm = nn.LayerNorm(dim)
        embed = NME if scalar_embed == "nme" else LinearScalarEmbedding
        self.scalar = embed(nme_dim, num_scales=num_scales, base=base)
        self.token_fc = nn.Sequential(nn.Linear(dim + 2 * nme_dim, dim), nn.LayerNorm(dim))
        self.channel_fc = (nn.Sequential(nn.Linear(in_chans * dim, dim), nn.LayerNorm(dim)) if in_chans > 1
                           else nn.Identity())
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 1e-6)
        self.register_buffer("pos", _sincos_1d(max_tokens + 1, dim), persistent=False)
        self.blocks = nn.ModuleList(Block(dim, heads, mlp_dim / dim, nn.LayerNorm, nn.GELU) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)

    def as_series(self, x: torch.Tensor) -> torch.Tensor:
        """(B, L) or (B, C, L) -> (B, C, L') with L' the next multiple of the window (linear resize if needed)."""
        if x.ndim == 2:
            x = x[:, None]
        if x.ndim != 3 or x.shape[1] != self.in_chans:
            raise ValueError(f"expected series (B, L) or (B, {self.in_chans}, L), got {tuple(x.shape)}")
        if x.shape[-1] % self.window:
            n = math.ceil(x.shape[-1] / self.window) * self.window
            x = F.interpolate(x, size=n, mode="linear", align_corners=True)
        return x

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        """Window tokens (B, N, dim) before the transformer."""
        shape, mean, std = window_tokens(self.as_series(x), self.window)
        t = self.shape_norm(self.shape_embed(shape))  # (B, C, N, dim)
        t = self.token_fc(torch.cat([t, self.scalar(mean), self.scalar(std)], -1))
        b, c, n, d = t.shape
        return self.channel_fc(t.transpose(1, 2).reshape(b, n, c * d))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.tokens(x)
        z = torch.cat([self.cls_token.expand(t.shape[0], -1, -1), t], 1) + self.pos[: t.shape[1] + 1]
        for blk in self.blocks:
            z = blk(z)
        return self.norm(z)[:, 0]


def _mlp(i: int, hidden: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(i, hidden, bias=False), nn.BatchNorm1d(hidden), nn.ReLU(), nn.Linear(hidden, out))


class NuTime(nn.Module):
    """NuTime encoder with its BYOL pretraining head (``ssl_probe`` contract: ``ssl_views = 2``).

    >>> net = NuTime(dim=32, depth=1, heads=2, mlp_dim=64, proj_hidden=64, proj_dim=16)
    >>> x = 1e3 * torch.randn(4, 100)  # any length, any scale
    >>> net.encode(x).shape, net.ssl_loss(x, x + 1).ndim
    (torch.Size([4, 32]), 0)
    """

    ssl_views = 2
    ssl_input = "series"
    ssl_defaults = {"optimizer": "adamw", "lr": 2e-3, "weight_decay": 0.05, "batch": 128}

    def __init__(self, window: int = CPU["window"], dim: int = CPU["dim"], depth: int = CPU["depth"],
                 heads: int = CPU["heads"], mlp_dim: int = CPU["mlp_dim"], nme_dim: int = CPU["nme_dim"],
                 num_scales: int = CPU["num_scales"], base: float = CPU["base"],
                 proj_hidden: int = CPU["proj_hidden"], proj_dim: int = CPU["proj_dim"], ema: float = CPU["ema"],
                 scalar_embed: str = CPU["scalar_embed"], in_chans: int = CPU["in_chans"]) -> None:
        super().__init__()
        if not 0.0 <= ema < 1.0:
            raise ValueError(f"ema={ema} must be in [0, 1)")
        if dim % heads:
            raise ValueError(f"dim={dim} must be a multiple of heads={heads}")
        self.scalar_embed, self.ema, self.dim = scalar_embed, ema, dim
        self.encoder = NuTimeEncoder(window=window, dim=dim, depth=depth, heads=heads, mlp_dim=mlp_dim,
                                     nme_dim=nme_dim, num_scales=num_scales, base=base, scalar_embed=scalar_embed,
                                     in_chans=in_chans)
        self.projector = _mlp(dim, proj_hidden, proj_dim)
        self.predictor = _mlp(proj_dim, proj_hidden, proj_dim)
        # the momentum target: a frozen copy of encoder + projector, moved by EMA only (not counted as parameters)
        self.target = copy.deepcopy(nn.ModuleDict({"encoder": self.encoder, "projector": self.projector}))
        for p in self.target.parameters():
            p.requires_grad_(False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder(x)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """The representation (B, dim): the class token of the online encoder."""
        return self.encoder(x)

    @torch.no_grad()
    def update_target(self) -> None:
        """target <- ema * target + (1 - ema) * online (BYOL's momentum update)."""
        online = list(self.encoder.parameters()) + list(self.projector.parameters())
        for t, o in zip(self.target.parameters(), online, strict=True):
            t.mul_(self.ema).add_(o.detach(), alpha=1 - self.ema)

    def ssl_loss(self, v1: torch.Tensor, v2: torch.Tensor) -> torch.Tensor:
        """Symmetric BYOL loss between two views (the official ``MSELoss`` on normalised vectors)."""
        p1 = F.normalize(self.predictor(self.projector(self.encoder(v1))), dim=1)
        p2 = F.normalize(self.predictor(self.projector(self.encoder(v2))), dim=1)
        if self.training:
            self.update_target()
        with torch.no_grad():
            z1 = F.normalize(self.target["projector"](self.target["encoder"](v1)), dim=1)
            z2 = F.normalize(self.target["projector"](self.target["encoder"](v2)), dim=1)
        return F.mse_loss(p1, z2) + F.mse_loss(p2, z1)


def nutime(preset: str | None = None, **overrides: Any) -> NuTime:
    """NuTime with its CPU defaults, or ``preset="paper"``; ``scalar_embed="linear"`` for the comparison model."""
    if preset is not None and preset not in PRESETS:
        raise ValueError(f"preset={preset!r}: choose one of {sorted(PRESETS)} (or None for the CPU default)")
    unknown = sorted(set(overrides) - set(CPU))
    if unknown:
        raise ValueError(f"unknown option(s) {unknown}; valid: {sorted(CPU)}")
    return NuTime(**{**PRESETS[preset or "cpu"], **overrides})
