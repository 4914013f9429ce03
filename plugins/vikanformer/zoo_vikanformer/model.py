"""ViKANformer: the reference TinyViT with each block's MLP replaced by a two-layer KAN ``[D, h, D]``.

S & M 2025, "ViKANformer: Embedding Kolmogorov Arnold Networks in Vision Transformers for
Pattern-Based Learning" (arXiv:2503.01124): five KAN expansions of the feed-forward sub-layer, and
optionally fused ("flash") attention. Each expansion follows the paper it comes from:

- ``vanilla``: B-spline KAN, Liu et al. 2024 (``zoo_nn.kan.BSplineKANLayer``, the paper's init).
- ``efficient``: efficient-kan (github.com/Blealtan/efficient-kan): the same B-spline edge
  ``w_b silu(x) + w_s spline(x)``, computed as one matmul over the bases, Kaiming-uniform ``w_b, w_s``.
  Our vanilla layer is vectorised the same way, so only the initialisation differs here.
- ``fast``: FastKAN, Li 2024 (arXiv:2405.06721): LayerNorm, Gaussian RBFs on 8 centres in [-2, 2],
  plus ``Linear(silu(x))`` (``zoo_nn.kan.RBFKANLayer``).
- ``sine``: SineKAN, Reinhardt et al. 2024 (arXiv:2407.04149): ``y_o = sum_{i,g} A_oig sin(w_g x_i + p_ig) + b_o``.
- ``fourier``: FourierKAN (github.com/GistNoesis/FourierKAN):
  ``y_o = sum_{i,k} a_oik cos(k x_i) + b_oik sin(k x_i) + bias``.

Two choices the transformer setting forces (issue 14), each measured on digits_classify:

- B-spline grids (``vanilla``, ``efficient``): a block's KAN sees LayerNorm outputs (zero mean, unit
  variance over each token's features), of which 32-42% fell outside the KAN default grid [-1, 1],
  where only the ``silu`` branch acts, and nothing moved the grid. The KAN paper's remedy is to update
  each grid from its input activations (Sec. 2.2, "Update of spline grids"; pykan: every 5 steps until
  step 50). We tried it (``zoo_nn.kan.KAN(grid_update_num=10)``, quantile and uniform grids): on
  digits the least-squares refit onto the patch tokens' clustered values (identical background
  patches) multiplied the spline coefficients 5-15x and training broke (loss 2.1, 20-23% accuracy
  after 200 steps, against 0.84 and 67% without updates). So the grid is fixed on a range matching
  LayerNorm's output instead, ``GRID_RANGE = (-3, 3)`` (three standard deviations): 0.1-1.6% of the
  inputs of either KAN layer fall outside it after training, and the same run reaches loss 0.36, 88%.
- FourierKAN: with the reference code's default init (``N(0, 1) / sqrt(in G)``, a flat spectrum) each
  edge function starts as high-frequency noise on unit-variance inputs (mean squared slope about
  ``sum_k k^2 / G = 11`` for ``G = 5``), and the second layer composes such noise again; the ViT stayed
  at chance (train loss 2.2, 22% accuracy after 200 steps; also at lr 5e-4). The reference code's
  ``smooth_initialization`` (coefficients ``/ k^2``: same output variance, slope about 1.5) trains
  (loss 0.44, 82%, as SineKAN's 0.41, 83%); so does the flat init at a tenth of its scale.

The paper's hyperparameter table was not available to us: hidden widths default to the values in
``MATCHED_HIDDEN``, chosen so that every variant has the parameter count of the task's MLP ViT
baseline (``vit-ln-gelu``, 4 blocks of D=64).
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.backbones import Attention, TinyViT
from zoo_nn.kan import KAN, RBFKANLayer

__all__ = ["SineKANLayer", "FourierKANLayer", "kan_ffn", "ViKANformer", "vikanformer", "VARIANTS", "MATCHED_HIDDEN",
           "GRID_RANGE"]

VARIANTS = ("vanilla", "efficient", "fast", "sine", "fourier")
# hidden width h of the [64, h, 64] KAN per variant: total parameters within 3% of TinyViT(D=64, depth 4,
# mlp_ratio 2)'s (see tests/test_vikanformer.py)
MATCHED_HIDDEN = {"vanilla": 13, "efficient": 13, "fast": 14, "sine": 16, "fourier": 13}
# B-spline grid interval of the block KANs: a block's KAN sees LayerNorm outputs (unit variance per token), a
# third of which lie outside the KAN default [-1, 1]; +-3 covers them (see the module docstring)
GRID_RANGE = (-3.0, 3.0)

# SineKAN's phase-scaling constants (Reinhardt et al. 2024, Sec. 2): the initial phases are multiplied by
# prod_{i=1}^{G-1} (A i^-K + C), which keeps deep stacks stable.
_SINE_A, _SINE_K, _SINE_C = 0.9724108095811765, 0.9884401790754128, 0.999449553483052


class SineKANLayer(nn.Module):
    """SineKAN layer: learnable frequencies ``w_g`` (shared over edges), amplitudes ``A``, fixed phases.

    Init (the SineKAN paper and its code): ``w_g = g`` in the network's first layer and ``g / (G + 1)``
    after it; phases ``p_ig = (pi * i / (in - 1) + g / (G + 1)) * prod_i (A i^-K + C)`` (a buffer);
    amplitudes ``N(0, 0.4)`` (first layer) or ``U(-1, 1)``, divided by ``out * g``; bias ``1 / out``.

    >>> SineKANLayer(3, 2)(torch.rand(5, 3)).shape
    torch.Size([5, 2])
    """

    def __init__(self, in_features: int, out_features: int, grid_size: int = 8, is_first: bool = False,
                 bias: bool = True):
        super().__init__()
        self.in_features, self.out_features, self.grid_size = in_features, out_features, grid_size
        g = torch.arange(1, grid_size + 1, dtype=torch.float32)
        self.freq = nn.Parameter(g if is_first else g / (grid_size + 1))
        scale = math.prod(_SINE_A * i ** -_SINE_K + _SINE_C for i in range(1, grid_size))
        phase = torch.linspace(0, math.pi, in_features).unsqueeze(1) + g / (grid_size + 1)
        self.register_buffer("phase", phase * scale)
        amp = torch.empty(out_features, in_features, 1)
        amp.normal_(0, 0.4) if is_first else amp.uniform_(-1, 1)
        self.amplitude = nn.Parameter(amp / out_features / g)
        self.bias = nn.Parameter(torch.full((out_features,), 1.0 / out_features)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.sin(x.unsqueeze(-1) * self.freq + self.phase)  # (..., in, G)
        y = s.flatten(-2) @ self.amplitude.flatten(1).T
        return y + self.bias if self.bias is not None else y


class FourierKANLayer(nn.Module):
    """FourierKAN layer: a truncated Fourier series per edge, ``grid_size`` frequencies ``k = 1..G``.

    Coefficients ``N(0, 1) / (sqrt(in) * sqrt(G))`` (the reference code's default: unit output variance
    for unit-variance inputs, every frequency equally strong), or ``/ (sqrt(in) * k^2)`` with
    ``smooth_init`` (the reference code's ``smooth_initialization``: the same output variance, the
    energy in the low frequencies). ``kan_ffn`` uses ``smooth_init``: see the module docstring.

    >>> FourierKANLayer(3, 2)(torch.rand(5, 3)).shape
    torch.Size([5, 2])
    """

    def __init__(self, in_features: int, out_features: int, grid_size: int = 5, bias: bool = True,
                 smooth_init: bool = False):
        super().__init__()
        self.in_features, self.out_features, self.grid_size = in_features, out_features, grid_size
        k = torch.arange(1, grid_size + 1, dtype=torch.float32)
        norm = k ** 2 if smooth_init else torch.full_like(k, math.sqrt(grid_size))
        self.register_buffer("k", k)
        self.coef = nn.Parameter(torch.randn(2, out_features, in_features, grid_size) / (math.sqrt(in_features) * norm))
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kx = x.unsqueeze(-1) * self.k  # (..., in, G)
        y = torch.cos(kx).flatten(-2) @ self.coef[0].flatten(1).T + torch.sin(kx).flatten(-2) @ self.coef[1].flatten(1).T
        return y + self.bias if self.bias is not None else y


class _Stack(nn.Sequential):
    """Layers applied in order to ``(..., features)`` (KAN layers accept any leading shape)."""


def kan_ffn(variant: str, dim: int, hidden: int, grid_size: int | None = None) -> nn.Module:
    """The ``[dim, hidden, dim]`` KAN that replaces a block's MLP; ``grid_size`` defaults per variant
    (B-spline 5, FastKAN 8 centres, SineKAN 8, FourierKAN 5).

    B-spline variants put their grids on ``GRID_RANGE`` (LayerNorm's output range); FourierKAN
    starts smooth (``smooth_init=True``). Both are explained in the module docstring."""
    if variant in ("vanilla", "efficient"):
        return KAN([dim, hidden, dim], grid_size=grid_size or 5, spline_order=3,
                   init="kan" if variant == "vanilla" else "efficient", grid_range=GRID_RANGE)
    if variant == "fast":
        return _Stack(RBFKANLayer(dim, hidden, num_grids=grid_size or 8), RBFKANLayer(hidden, dim, num_grids=grid_size or 8))
    if variant == "sine":
        return _Stack(SineKANLayer(dim, hidden, grid_size or 8, is_first=True), SineKANLayer(hidden, dim, grid_size or 8))
    if variant == "fourier":
        return _Stack(FourierKANLayer(dim, hidden, grid_size or 5, smooth_init=True),
                      FourierKANLayer(hidden, dim, grid_size or 5, smooth_init=True))
    raise ValueError(f"unknown ViKANformer variant {variant!r}; choose from {VARIANTS}")


class ExplicitAttention(Attention):
    """The core ViT attention written out (``softmax(q k^T / sqrt(d)) v``): the non-fused path."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        attn = F.softmax(q @ k.transpose(-2, -1) / math.sqrt(d // self.heads), dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(b, n, d))


class ViKANformer(TinyViT):
    """``TinyViT`` with KAN feed-forward layers; ``flash=True`` keeps the fused SDPA attention.

    ``variant="mlp"`` keeps the MLPs (the baseline with the same attention path).
    """

    def __init__(self, variant: str = "sine", hidden: int | None = None, grid_size: int | None = None,
                 flash: bool = False, num_classes: int = 10, in_chans: int = 1, img_size: int = 8,
                 patch_size: int = 2, dim: int = 64, depth: int = 4, heads: int = 4):
        super().__init__(num_classes=num_classes, in_chans=in_chans, img_size=img_size, patch_size=patch_size,
                         dim=dim, depth=depth, heads=heads)
        if variant not in (*VARIANTS, "mlp"):
            raise ValueError(f"unknown ViKANformer variant {variant!r}; choose from {VARIANTS} or 'mlp'")
        for block in self.blocks:
            if variant != "mlp":
                block.mlp = kan_ffn(variant, dim, hidden or MATCHED_HIDDEN[variant], grid_size)
            if not flash:
                attn = ExplicitAttention(dim, heads)
                attn.load_state_dict(block.attn.state_dict())
                block.attn = attn
        self.variant, self.flash = variant, flash


def vikanformer(variant: str = "sine", hidden: int | None = None, grid_size: int | None = None, flash: bool = False,
                num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2, dim: int = 64,
                depth: int = 4, heads: int = 4) -> ViKANformer:
    """ViKANformer for digits_classify: ``(B, 1, 8, 8) -> (B, 10)``.

    >>> vikanformer("fourier", depth=1)(torch.rand(2, 1, 8, 8)).shape
    torch.Size([2, 10])
    """
    return ViKANformer(variant, hidden, grid_size, flash, num_classes, in_chans, img_size, patch_size, dim, depth, heads)
