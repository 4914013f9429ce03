"""CRATE-MAE (Pai, Wu, Buchanan, Yu and Ma, ICLR 2024, arXiv:2404.02446): a white-box masked autoencoder.

Every encoder layer is one step of an optimiser of the sparse rate reduction objective (CRATE, Yu et al. 2023): a
compression step, multi-head subspace self-attention (MSSA), followed by a sparsification step, one ISTA step towards
a sparse code of the tokens in a learned dictionary ``D``. Each decoder layer is built as the (distributional)
inverse of the encoder layer it mirrors, in reverse order (paper Sec. 3, Fig. 1: ``g^{L-l}`` partially inverts
``f^l``). With ``LN`` a LayerNorm, ``z`` the tokens (N x d) and ``U_k`` (d x d/K) the subspace basis of head k:

    MSSA(z)  = W_out [SSA(z | U_1); ...; SSA(z | U_K)],   SSA(z | U_k) = (U_k^T z) softmax((U_k^T z)^T (U_k^T z) / sqrt(p))
    encoder  f^l:  z' = z + MSSA(LN(z));          z'' = ReLU(x + eta D^T (x - D x) - eta lambda),  x = LN(z')
    decoder  g^l:  y' = D_dec LN(y);              y'' = y' - MSSA(LN(y'))

The query, key and value of a head are the SAME projection ``U_k^T z`` (one d x d matrix ``[U_1 .. U_K]`` per layer
instead of three), and the ISTA step replaces the MLP (one d x d matrix instead of 8 d^2): a block holds 3 d^2
weights against 12 d^2 for a ViT block, hence "about 30% of the parameters of the standard MAE with the same
configuration" (abstract; ``param_count`` gives the exact figure for any configuration). The decoder reverses the
encoder's two steps: a linear map ``D_dec`` undoes the sparse coding (a code times a dictionary), then the
compression is undone by the opposite MSSA step (``y - MSSA(y)`` instead of ``z + MSSA(z)``).

Masked autoencoding (paper Sec. 4, as in the official code): 75% of the patches are replaced by a learned mask
token before the encoder (the encoder completes them: "masked completion"), fixed 2D sine-cosine position
embeddings, a class token, the loss is the MSE on the masked patches only. ``mae_vit`` is the comparison model of
the paper: the same pipeline with ViT blocks (separate Q, K, V and a 4x GELU MLP: ``zoo_nn.backbones.Block``).

Paper presets by name: ``PAPER["tiny"|"small"|"base"|"large"]`` (224 px RGB, patch 16; base: d 768, 12 + 12 layers,
12 heads; eta 0.1, lambda 0.5, Xavier-uniform linear layers, as in the official code). CPU default (``CPU``): 8x8
one-channel digits, patch 2 (16 tokens), d 32, 3 + 3 layers, 4 heads.

Deviations: the dictionaries ``D`` are drawn like PyTorch's ``nn.Linear`` weights (Kaiming-uniform, a = sqrt(5),
bound 1/sqrt(d)) where the official code uses Kaiming-uniform with a = 0 (bound sqrt(6/d)); the official code
defines a ``decoder_embed`` layer it never uses (left out: our counts are 0.6M lower at base size); the MSSA output
map is a separate learned ``W_out`` as in the official code, where the paper's derivation has ``[U_1 .. U_K]``
(``tied_output=True`` uses the ``U_k`` themselves); features for probing are the mean of the encoder's patch tokens
on the unmasked image (``pool="cls"`` takes the class token); training is the ssl_probe task's AdamW loop, not the
paper's 800-epoch ImageNet schedule.
"""
from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.backbones import Block as ViTBlock

__all__ = ["CPU", "PAPER", "MSSA", "ISTA", "CrateEncoderLayer", "CrateDecoderLayer", "MaskedAutoencoder",
           "crate_mae", "mae_vit", "param_count", "sincos_pos_embed_2d"]

CPU: dict[str, Any] = {"img_size": 8, "in_chans": 1, "patch": 2, "dim": 32, "depth": 3, "decoder_depth": 3,
                       "heads": 4, "mask_ratio": 0.75, "eta": 0.1, "lam": 0.5}
PAPER: dict[str, dict[str, Any]] = {
    name: {"img_size": 224, "in_chans": 3, "patch": 16, "dim": d, "depth": L, "decoder_depth": L, "heads": h,
           "mask_ratio": 0.75, "eta": 0.1, "lam": 0.5}
    for name, (d, L, h) in {"tiny": (384, 12, 6), "small": (576, 12, 12), "base": (768, 12, 12),
                            "large": (1024, 24, 16)}.items()}
POOLS = ("mean", "cls")
KINDS = ("crate", "vit")


class MSSA(nn.Module):
    """Multi-head subspace self-attention: one projection ``U_k^T z`` per head is query, key and value at once."""

    def __init__(self, dim: int, heads: int, tied_output: bool = False) -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"MSSA: dim={dim} must be a multiple of heads={heads}")
        self.heads, self.tied_output = heads, tied_output
        self.U = nn.Linear(dim, dim, bias=False)  # rows of head k are U_k^T
        self.out = None if tied_output else nn.Linear(dim, dim)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        b, n, d = z.shape
        w = self.U(z).reshape(b, n, self.heads, d // self.heads).transpose(1, 2)  # (b, K, n, p): U_k^T z
        attn = torch.softmax(w @ w.transpose(-1, -2) / math.sqrt(d // self.heads), dim=-1)
        y = (attn @ w).transpose(1, 2).reshape(b, n, d)
        return F.linear(y, self.U.weight.t()) if self.out is None else self.out(y)


class ISTA(nn.Module):
    """One ISTA step of sparse coding in dictionary ``D`` from ``a = x``: ReLU(x + eta D^T(x - D x) - eta lambda)."""

    def __init__(self, dim: int, eta: float = 0.1, lam: float = 0.5) -> None:
        super().__init__()
        self.eta, self.lam = eta, lam
        self.D = nn.Parameter(torch.empty(dim, dim))
        nn.init.kaiming_uniform_(self.D, a=math.sqrt(5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        residual = x - F.linear(x, self.D)  # x - D x (tokens are rows: x D^T)
        return F.relu(x + self.eta * F.linear(residual, self.D.t()) - self.eta * self.lam)


class CrateEncoderLayer(nn.Module):
    """f^l: compression ``z + MSSA(LN z)``, then sparsification ``ISTA(LN z)`` (non-negative output)."""

    def __init__(self, dim: int, heads: int, eta: float, lam: float, tied_output: bool = False) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mssa = MSSA(dim, heads, tied_output)
        self.ista = ISTA(dim, eta, lam)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        z = z + self.mssa(self.norm1(z))
        return self.ista(self.norm2(z))


class CrateDecoderLayer(nn.Module):
    """g^l, the encoder layer's steps undone in reverse: a linear map out of the sparse code, then ``y - MSSA(LN y)``."""

    def __init__(self, dim: int, heads: int, tied_output: bool = False) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.D = nn.Parameter(torch.empty(dim, dim))
        nn.init.kaiming_uniform_(self.D, a=math.sqrt(5))
        self.mssa = MSSA(dim, heads, tied_output)

    def forward(self, y: torch.Tensor) -> torch.Tensor:
        y = F.linear(self.norm1(y), self.D)
        return y - self.mssa(self.norm2(y))


def sincos_pos_embed_2d(dim: int, grid: int) -> torch.Tensor:
    """Fixed 2D sine-cosine position embeddings (grid*grid, dim): half the channels code the row, half the column."""
    if dim % 4:
        raise ValueError(f"sincos_pos_embed_2d: dim={dim} must be a multiple of 4")
    omega = 1.0 / 10000 ** (torch.arange(dim // 4, dtype=torch.float64) / (dim // 4))
    rows, cols = torch.meshgrid(torch.arange(grid, dtype=torch.float64), torch.arange(grid, dtype=torch.float64),
                                indexing="ij")
    parts = [f(pos.reshape(-1, 1) * omega) for pos in (cols, rows) for f in (torch.sin, torch.cos)]
    return torch.cat(parts, 1).float()


class MaskedAutoencoder(nn.Module):
    """Masked autoencoder with CRATE layers (``kind="crate"``, CRATE-MAE) or ViT blocks (``kind="vit"``, ViT-MAE).

    The ``ssl_probe`` contract: ``ssl_views = 1`` (the clean batch; masking happens inside ``ssl_loss``),
    ``ssl_loss(x)`` the MSE on the masked patches, ``encode(x) -> (N, dim)`` pooled features of the unmasked image,
    ``reconstruct(x, mask=None) -> x_hat`` and ``forward(x) -> tokens (N, 1 + patches, dim)``.

    >>> net = MaskedAutoencoder(kind="crate", dim=32, depth=2, decoder_depth=2, heads=4)
    >>> x = torch.rand(3, 1, 8, 8)
    >>> net(x).shape, net.encode(x).shape, net.reconstruct(x).shape, net.ssl_loss(x).ndim
    (torch.Size([3, 17, 32]), torch.Size([3, 32]), torch.Size([3, 1, 8, 8]), 0)
    """

    ssl_views = 1
    ssl_input = "image"
    ssl_defaults = {"optimizer": "adamw", "lr": 1e-3, "weight_decay": 0.05, "batch": 128}

    def __init__(self, kind: str = "crate", img_size: int = CPU["img_size"], in_chans: int = CPU["in_chans"],
                 patch: int = CPU["patch"], dim: int = CPU["dim"], depth: int = CPU["depth"],
                 decoder_depth: int = CPU["decoder_depth"], heads: int = CPU["heads"],
                 mask_ratio: float = CPU["mask_ratio"], eta: float = CPU["eta"], lam: float = CPU["lam"],
                 tied_output: bool = False, pool: str = "mean") -> None:
        super().__init__()
        if kind not in KINDS:
            raise ValueError(f"kind={kind!r}: choose one of {KINDS}")
        if pool not in POOLS:
            raise ValueError(f"pool={pool!r}: choose one of {POOLS}")
        if img_size % patch:
            raise ValueError(f"img_size={img_size} must be a multiple of patch={patch}")
        if not 0.0 <= mask_ratio < 1.0:
            raise ValueError(f"mask_ratio={mask_ratio} must be in [0, 1)")
        self.kind, self.patch, self.in_chans, self.img_size = kind, patch, in_chans, img_size
        self.mask_ratio, self.pool, self.dim = mask_ratio, pool, dim
        self.grid = img_size // patch
        n, pdim = self.grid ** 2, patch * patch * in_chans
        self.patch_embed = nn.Linear(pdim, dim)  # a stride-p convolution on patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.mask_token = nn.Parameter(torch.zeros(1, 1, dim))
        pos = torch.cat([torch.zeros(1, dim), sincos_pos_embed_2d(dim, self.grid)])[None]
        self.register_buffer("pos_embed", pos, persistent=False)
        if kind == "crate":
            self.blocks = nn.ModuleList(CrateEncoderLayer(dim, heads, eta, lam, tied_output) for _ in range(depth))
            self.decoder_blocks = nn.ModuleList(CrateDecoderLayer(dim, heads, tied_output)
                                                for _ in range(decoder_depth))
        else:
            make = lambda: ViTBlock(dim, heads, 4.0, nn.LayerNorm, nn.GELU)  # noqa: E731
            self.blocks = nn.ModuleList(make() for _ in range(depth))
            self.decoder_blocks = nn.ModuleList(make() for _ in range(decoder_depth))
        self.norm, self.decoder_norm = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.decoder_pred = nn.Linear(dim, pdim)
        self.n_patches = n
        self._init_weights()

    def _init_weights(self) -> None:
        # the official code's (MAE's) init: Xavier-uniform linear layers, zero biases, N(0, 0.02) tokens
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.xavier_uniform_(m.weight)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
        nn.init.normal_(self.cls_token, std=0.02)
        nn.init.normal_(self.mask_token, std=0.02)

    # -- patches -------------------------------------------------------------------------------------------------
    def patchify(self, x: torch.Tensor) -> torch.Tensor:
        """(B, C, H, W) -> (B, patches, p*p*C), patches in row-major order."""
        if x.ndim != 4 or tuple(x.shape[1:]) != (self.in_chans, self.img_size, self.img_size):
            raise ValueError(f"expected images (B, {self.in_chans}, {self.img_size}, {self.img_size}), "
                             f"got {tuple(x.shape)}")
        b, c, p, g = x.shape[0], self.in_chans, self.patch, self.grid
        return x.reshape(b, c, g, p, g, p).permute(0, 2, 4, 3, 5, 1).reshape(b, g * g, p * p * c)

    def unpatchify(self, t: torch.Tensor) -> torch.Tensor:
        """(B, patches, p*p*C) -> (B, C, H, W), the inverse of ``patchify``."""
        b, c, p, g = t.shape[0], self.in_chans, self.patch, self.grid
        return t.reshape(b, g, g, p, p, c).permute(0, 5, 1, 3, 2, 4).reshape(b, c, g * p, g * p)

    def random_mask(self, batch: int, generator: torch.Generator | None = None,
                    device: torch.device | None = None) -> torch.Tensor:
        """A boolean (batch, patches) mask with exactly ``round(mask_ratio * patches)`` True (masked) per row."""
        n_mask = int(round(self.mask_ratio * self.n_patches))
        noise = torch.rand(batch, self.n_patches, generator=generator, device=device)
        ranks = noise.argsort(1).argsort(1)
        return ranks < n_mask

    # -- encoder / decoder ---------------------------------------------------------------------------------------
    def encode_tokens(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Encoder output (B, 1 + patches, dim) after the final norm; masked patches enter as the mask token."""
        tok = self.patch_embed(self.patchify(x))
        if mask is not None:
            tok = torch.where(mask[..., None], self.mask_token.to(tok.dtype), tok)
        z = torch.cat([self.cls_token.expand(tok.shape[0], -1, -1), tok], 1) + self.pos_embed
        for blk in self.blocks:
            z = blk(z)
        return self.norm(z)

    def decode_tokens(self, z: torch.Tensor) -> torch.Tensor:
        """Decoder: tokens (B, 1 + patches, dim) -> predicted patches (B, patches, p*p*C)."""
        for blk in self.decoder_blocks:
            z = blk(z)
        return self.decoder_pred(self.decoder_norm(z))[:, 1:]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encode_tokens(x)

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """Features (B, dim) of the unmasked image: mean patch token (``pool="mean"``) or the class token."""
        z = self.encode_tokens(x)
        return z[:, 1:].mean(1) if self.pool == "mean" else z[:, 0]

    def masked_loss(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean squared error on the masked patches only (the MAE objective)."""
        pred = self.decode_tokens(self.encode_tokens(x, mask))
        err = (pred - self.patchify(x)).pow(2).mean(-1)
        return (err * mask).sum() / mask.sum().clamp(min=1)

    def ssl_loss(self, x: torch.Tensor) -> torch.Tensor:
        return self.masked_loss(x, self.random_mask(x.shape[0], device=x.device))

    def reconstruct(self, x: torch.Tensor, mask: torch.Tensor | None = None, seed: int = 0) -> torch.Tensor:
        """The image completed from its visible patches: visible patches kept, masked ones predicted.

        ``mask`` (B, patches) boolean, True = masked; by default a random mask at ``mask_ratio`` drawn from
        ``seed`` (the same mask for the same batch size and seed, so ``recon_mse`` is reproducible).
        """
        if mask is None:
            mask = self.random_mask(x.shape[0], torch.Generator().manual_seed(seed)).to(x.device)
        pred = self.decode_tokens(self.encode_tokens(x, mask))
        return self.unpatchify(torch.where(mask[..., None], pred, self.patchify(x)))


def crate_mae(preset: str | None = None, **overrides: Any) -> MaskedAutoencoder:
    """CRATE-MAE: CPU defaults, or ``preset="tiny"|"small"|"base"|"large"`` (the paper's sizes)."""
    return MaskedAutoencoder(kind="crate", **_config(preset, overrides))


def mae_vit(preset: str | None = None, **overrides: Any) -> MaskedAutoencoder:
    """The paper's comparison model: the same masked autoencoder with standard ViT blocks (same configuration)."""
    return MaskedAutoencoder(kind="vit", **_config(preset, overrides))


def _config(preset: str | None, overrides: dict[str, Any]) -> dict[str, Any]:
    if preset is not None and preset not in PAPER:
        raise ValueError(f"preset={preset!r}: choose one of {sorted(PAPER)} (or None for the CPU default)")
    allowed = set(CPU) | {"tied_output", "pool"}
    unknown = sorted(set(overrides) - allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {unknown}; valid: {sorted(allowed)}")
    return {**(PAPER[preset] if preset else CPU), **overrides}


def param_count(kind: str, *, img_size: int, in_chans: int, patch: int, dim: int, depth: int, decoder_depth: int,
                tied_output: bool = False, **_: Any) -> int:
    """Closed-form trainable parameter count of ``MaskedAutoencoder(kind, ...)`` (no model is built).

    Per layer: CRATE 3 d^2 + 5 d (encoder: U, W_out + bias, D, two LayerNorms; decoder: D, U, W_out + bias, two
    LayerNorms), 2 d^2 + 4 d with ``tied_output``; ViT 12 d^2 + 13 d (QKV and output with biases, 4x MLP, two
    LayerNorms). Shared: patch embedding and prediction head (each p^2 C d weights plus biases), class and mask
    tokens, two final LayerNorms.

    >>> param_count("crate", **PAPER["base"]) / param_count("vit", **PAPER["base"])  # doctest: +ELLIPSIS
    0.25...
    """
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r}: choose one of {KINDS}")
    d, pdim = dim, patch * patch * in_chans
    per_layer = (2 * d * d + 4 * d if tied_output else 3 * d * d + 5 * d) if kind == "crate" else 12 * d * d + 13 * d
    shared = (pdim * d + d) + (d * pdim + pdim) + 2 * d + 4 * d
    return per_layer * (depth + decoder_depth) + shared
