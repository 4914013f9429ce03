"""BraInCoRL (Yu et al. 2025, "Meta-Learning an In-Context Transformer Model of Human Higher Visual Cortex", Sec. 3
and Fig. 2): a transformer reads a voxel's context of (image feature, response) pairs and emits the weights of that
voxel's linear encoder, which then predicts the voxel's responses to new images.

1. Each context pair is one token: ``concat(feature, response)`` through a residual MLP block (pre-LayerNorm,
   LeakyReLU 0.1, a projection shortcut) into the transformer width.
2. ``n_register`` learned register tokens are prepended (initialised N(0, 1) / sqrt(width + 1)); there is no
   positional encoding and no mask, so every token attends to every token and the result does not depend on the
   order of the context.
3. ``depth`` pre-LayerNorm blocks: multi-head self-attention whose queries are scaled by ``log(sequence length)``
   (keeps attention sharp as the context grows) and a SwiGLU feed-forward, each with a residual.
4. The first register token, through another residual MLP block, gives the hyperweights ``(w, b)`` of size F + 1;
   the prediction for a query image is ``<w, query_feature> + b``. Queries never enter the transformer.

Meta-training (the task's loop, ``zoo_task_voxel_encode.task.meta_train``): MSE of predicted query responses, AdamW
(lr 1e-3, weight decay 1e-4), a random context size per batch; the paper's ranges were 30..500 context images and 10
queries, here 2..100 and 50 (the task's defaults: its voxels have 1497 meta-train images).

Which parts come from where: the token design, register tokens, log-scaled attention, SwiGLU blocks, hyperweight
head and loss follow the authors' public code (read to understand, github.com/leomqyu/BraInCoRL, scripts/model.py);
the paper's text gives the hypernetwork view. Deviations: widths and depth are CPU-sized (``preset="cpu"``: width
64, 2 layers, 4 heads; ``preset="paper"``: the CLIP configuration, width 560, 20 layers, 10 heads, FFN 2048, for
F = 512 features); the features are the task's 64 random-CNN features instead of CLIP/DINO/SigLIP embeddings; the
paper's learning-rate schedule (reduce on plateau) is not used.

>>> import torch
>>> m = braincorl(n_features=8)
>>> m(torch.randn(3, 5, 8), torch.randn(3, 5), torch.randn(3, 7, 8)).shape
torch.Size([3, 7])
"""
from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

CPU: dict[str, Any] = {"n_features": 64, "width": 64, "depth": 2, "heads": 4, "ffn_hidden": 128, "n_register": 4}
PAPER: dict[str, Any] = {"n_features": 512, "width": 560, "depth": 20, "heads": 10, "ffn_hidden": 2048, "n_register": 4}
PRESETS = {"cpu": CPU, "paper": PAPER}


class ResidualMLP(nn.Module):
    """``block(x) + shortcut(x)`` with block = LN, LeakyReLU, Linear, LN, LeakyReLU, Linear (identity-mapping
    ordering); the shortcut is a Linear when the widths differ."""

    def __init__(self, d_in: int, d_out: int, hidden: int, slope: float = 0.1):
        super().__init__()
        self.block = nn.Sequential(nn.LayerNorm(d_in), nn.LeakyReLU(slope), nn.Linear(d_in, hidden),
                                   nn.LayerNorm(hidden), nn.LeakyReLU(slope), nn.Linear(hidden, d_out))
        self.shortcut = nn.Identity() if d_in == d_out else nn.Linear(d_in, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x) + self.shortcut(x)


class SwiGLU(nn.Module):
    """``W2 (silu(x W1a) * x W1b)``."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.w1 = nn.Linear(dim, 2 * hidden)
        self.w2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.w1(x).chunk(2, dim=-1)
        return self.w2(F.silu(a) * b)


class LogScaledBlock(nn.Module):
    """Pre-LN self-attention with queries scaled by ``log(n_tokens)``, then a pre-LN SwiGLU feed-forward."""

    def __init__(self, dim: int, heads: int, ffn_hidden: int):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ffn = SwiGLU(dim, ffn_hidden)
        self.last_attention: torch.Tensor | None = None  # (B, T, T) head-averaged, when keep_attention is set
        self.keep_attention = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        out, w = self.attn(math.log(x.shape[1]) * h, h, h, need_weights=self.keep_attention)
        self.last_attention = w
        x = x + out
        return x + self.ffn(self.norm2(x))


class BraInCoRL(nn.Module):
    """In-context voxelwise encoder: ``forward(ctx_feats (B, Nc, F), ctx_resp (B, Nc), query_feats (B, Nq, F)) ->
    (B, Nq)``; ``hyperweights(ctx_feats, ctx_resp) -> (B, F + 1)`` gives the voxel's linear encoder itself."""

    def __init__(self, n_features: int = 64, width: int = 64, depth: int = 2, heads: int = 4, ffn_hidden: int = 128,
                 n_register: int = 4):
        super().__init__()
        if width % heads:
            raise ValueError(f"braincorl: width={width} must be a multiple of heads={heads}")
        if n_register < 1:
            raise ValueError(f"braincorl: n_register={n_register} must be >= 1 (the first one carries the hyperweights)")
        self.n_features = n_features
        self.embed = ResidualMLP(n_features + 1, width, 2 * width)
        self.registers = nn.Parameter(torch.randn(1, n_register, width) / math.sqrt(width + 1))
        self.blocks = nn.ModuleList(LogScaledBlock(width, heads, ffn_hidden) for _ in range(depth))
        self.head = ResidualMLP(width, n_features + 1, 2 * width)

    def hyperweights(self, ctx_feats: torch.Tensor, ctx_resp: torch.Tensor) -> torch.Tensor:
        if ctx_feats.shape[-1] != self.n_features:
            raise ValueError(f"braincorl: built for {self.n_features} features, got ctx_feats {tuple(ctx_feats.shape)}; "
                             f"create it with n_features={ctx_feats.shape[-1]}")
        tokens = self.embed(torch.cat([ctx_feats, ctx_resp.unsqueeze(-1)], dim=-1))
        x = torch.cat([self.registers.expand(len(tokens), -1, -1), tokens], dim=1)
        for block in self.blocks:
            x = block(x)
        return self.head(x[:, 0])

    def forward(self, ctx_feats: torch.Tensor, ctx_resp: torch.Tensor, query_feats: torch.Tensor) -> torch.Tensor:
        wb = self.hyperweights(ctx_feats, ctx_resp)
        return (query_feats @ wb[:, :-1].unsqueeze(-1)).squeeze(-1) + wb[:, -1:]


def braincorl(preset: str = "cpu", **overrides: Any) -> BraInCoRL:
    """BraInCoRL at ``preset`` ("cpu" or "paper"), with ``overrides`` of its keyword arguments."""
    if preset not in PRESETS:
        raise ValueError(f"braincorl: unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    return BraInCoRL(**{**PRESETS[preset], **overrides})
