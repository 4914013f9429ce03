"""Reference backbones for small image tasks: an MLP, a small CNN and a small ViT.

Layer-type plugins (norms, activations, KAN layers) are evaluated by passing their layer in place
of the default: ``norm_layer`` is called as ``norm_layer(dim)`` and ``act_layer`` as
``act_layer()``, so ``nn.LayerNorm``, ``nn.RMSNorm``, ``nn.ReLU`` or a plugin's class all fit.
The defaults (LayerNorm with ReLU, GELU for the ViT) are the tasks' baselines.
"""
from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

Layer = Callable[..., nn.Module]


class ChannelNorm2d(nn.Module):
    """Apply a ``(..., C)`` norm layer to ``(B, C, H, W)`` maps (LayerNorm over channels)."""

    def __init__(self, norm: nn.Module):
        super().__init__()
        self.norm = norm

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class DigitsMLP(nn.Module):
    """Flatten -> [Linear -> norm -> act] x depth -> Linear."""

    reference_backbone = "mlp"

    def __init__(self, num_classes: int = 10, in_chans: int = 1, img_size: int = 8, hidden: int = 128,
                 depth: int = 2, norm_layer: Layer = nn.LayerNorm, act_layer: Layer = nn.ReLU):
        super().__init__()
        layers: list[nn.Module] = [nn.Flatten()]
        d = in_chans * img_size * img_size
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), norm_layer(hidden), act_layer()]
            d = hidden
        self.features = nn.Sequential(*layers)
        self.head = nn.Linear(d, num_classes)
        self.num_features = d

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))


class DigitsCNN(nn.Module):
    """[conv3x3 -> norm -> act] x 2 per stage, stride-2 between stages, global pool, linear head."""

    reference_backbone = "cnn"

    def __init__(self, num_classes: int = 10, in_chans: int = 1, img_size: int = 8, width: int = 32,
                 stages: int = 2, norm_layer: Layer = nn.LayerNorm, act_layer: Layer = nn.ReLU,
                 embed_dim: int | None = None):
        super().__init__()
        layers: list[nn.Module] = []
        c_in = in_chans
        for s in range(stages):
            c = width * 2 ** s
            for j in range(2):
                stride = 2 if (s > 0 and j == 0) else 1
                layers += [nn.Conv2d(c_in, c, 3, stride=stride, padding=1, bias=False),
                           ChannelNorm2d(norm_layer(c)), act_layer()]
                c_in = c
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten()]
        if embed_dim is not None:
            layers += [nn.Linear(c_in, embed_dim)]
            c_in = embed_dim
        self.features = nn.Sequential(*layers)
        self.num_features = c_in
        self.head = nn.Linear(c_in, num_classes)

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, d = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v)
        return self.proj(y.transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    """Pre-norm transformer block: x + attn(norm(x)), x + mlp(norm(x))."""

    def __init__(self, dim: int, heads: int, mlp_ratio: float, norm_layer: Layer, act_layer: Layer):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = norm_layer(dim)
        hidden = int(dim * mlp_ratio)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), act_layer(), nn.Linear(hidden, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    """A small ViT for 8x8 digits: patch embedding, class token, learned positions, pre-norm blocks."""

    reference_backbone = "vit"

    def __init__(self, num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2,
                 dim: int = 64, depth: int = 4, heads: int = 4, mlp_ratio: float = 2.0,
                 norm_layer: Layer = nn.LayerNorm, act_layer: Layer = nn.GELU):
        super().__init__()
        if img_size % patch_size:
            raise ValueError(f"img_size {img_size} must be a multiple of patch_size {patch_size}")
        n = (img_size // patch_size) ** 2
        self.patch = nn.Conv2d(in_chans, dim, patch_size, stride=patch_size)
        self.cls = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[Block(dim, heads, mlp_ratio, norm_layer, act_layer) for _ in range(depth)])
        self.norm = norm_layer(dim)
        self.head = nn.Linear(dim, num_classes)
        self.num_features = dim

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        return self.norm(self.blocks(x))[:, 0]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))


BACKBONES = {"mlp": DigitsMLP, "cnn": DigitsCNN, "vit": TinyViT}
