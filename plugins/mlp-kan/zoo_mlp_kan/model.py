"""MLP-KAN: a transformer whose feed-forward layer is a mixture of MLP experts and KAN experts.

He, Xie, Yuan & Sun 2024, "MLP-KAN: Unifying Deep Representation and Function Learning"
(arXiv:2410.03027), Sec. 4 and the authors' code (github.com/DLYuanGod/MLP-KAN, ``models_kan.py``):
each block is ``x + Attn(LN(x))``, then ``x + MoE(LN(x))``. The MoE routes every token to its top-k
(k = 2) of E experts with a bias-free linear gate, ``softmax`` over experts, the top-k weights
renormalised to sum to one; half the experts are "representation experts" (MLPs: ``fc1 -> GELU ->
fc2`` with ``ffn_dim`` hidden units, timm's ``Mlp``), half "function experts" (FasterKAN networks
``[dim, ffn_dim // 2, dim]``: LayerNorm, reflectional-switch basis ``1 - tanh((x - u_g) / h)^2`` on 8
centres in [-1.2, 0.2] with ``1/h = 0.5``, then a bias-free linear map). No load-balancing loss
(none in the released code).
"""
from __future__ import annotations

import functools

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.backbones import Attention, TinyViT
from zoo_nn.kan import RBFKANLayer

__all__ = ["FasterKAN", "MLPExpert", "MLPKANMoE", "attention", "feed_forward", "MLPKANBlock", "MLPKANViT", "MLPKANRegressor",
           "mlp_kan_vit", "mlp_kan_formula", "mlp_kan_deit"]


class FasterKAN(nn.Module):
    """A stack of FasterKAN layers (``RBFKANLayer`` with the reflectional-switch basis, no base branch)."""

    def __init__(self, widths: list[int], grid_min: float = -1.2, grid_max: float = 0.2, num_grids: int = 8,
                 inv_denominator: float = 0.5):
        super().__init__()
        self.layers = nn.ModuleList(
            RBFKANLayer(a, b, grid_min=grid_min, grid_max=grid_max, num_grids=num_grids, basis="rswaf",
                        inv_denominator=inv_denominator, base_activation=None, spline_init_std=None)
            for a, b in zip(widths[:-1], widths[1:], strict=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class MLPExpert(nn.Module):
    """``fc1 -> GELU -> fc2`` (the parameter names of timm's ``Mlp``)."""

    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.act(self.fc1(x)))


class MLPKANMoE(nn.Module):
    """Top-k mixture of ``num_experts // 2`` MLP experts and ``num_experts // 2`` FasterKAN experts.

    ``(..., dim) -> (..., dim)``; ``last_router_probs`` keeps the softmax of the last call (for inspection).

    >>> moe = MLPKANMoE(dim=8, ffn_dim=8)
    >>> moe(torch.rand(2, 5, 8)).shape
    torch.Size([2, 5, 8])
    """

    def __init__(self, dim: int, ffn_dim: int, num_experts: int = 8, top_k: int = 2, num_grids: int = 8):
        super().__init__()
        if num_experts % 2 or not 1 <= top_k <= num_experts:
            raise ValueError(f"need an even num_experts >= top_k >= 1, got {num_experts} and {top_k}")
        self.dim, self.num_experts, self.top_k = dim, num_experts, top_k
        self.gate = nn.Linear(dim, num_experts, bias=False)
        half = num_experts // 2
        self.experts = nn.ModuleList([MLPExpert(dim, ffn_dim) for _ in range(half)]
                                     + [FasterKAN([dim, ffn_dim // 2, dim], num_grids=num_grids) for _ in range(half)])
        self.last_router_probs: torch.Tensor | None = None

    def route(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(N, dim) -> (weights (N, k), experts (N, k))``: top-k of the gate's softmax, renormalised."""
        probs = F.softmax(self.gate(x), dim=-1, dtype=torch.float32)
        self.last_router_probs = probs.detach()
        weights, chosen = probs.topk(self.top_k, dim=-1)
        return (weights / weights.sum(-1, keepdim=True)).to(x.dtype), chosen

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        x = x.reshape(-1, self.dim)
        weights, chosen = self.route(x)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):  # E experts: each runs only on the tokens routed to it
            token, slot = torch.nonzero(chosen == e, as_tuple=True)
            if token.numel():
                out.index_add_(0, token, weights[token, slot, None] * expert(x[token]))
        return out.reshape(shape)


def attention(dim: int, heads: int, qkv_bias: bool) -> Attention:
    """The core ViT attention (timm's parameter names ``qkv``, ``proj``), optionally without qkv bias."""
    attn = Attention(dim, heads)
    if not qkv_bias:
        attn.qkv = nn.Linear(dim, dim * 3, bias=False)
    return attn


def feed_forward(kind: str, dim: int, ffn_dim: int, num_experts: int = 8, top_k: int = 2,
                 num_grids: int = 8) -> nn.Module:
    """The block's feed-forward layer: ``"moe"`` (MLP-KAN), or one expert alone for the pure baselines:
    ``"mlp"`` (``MLPExpert(dim, ffn_dim)``) or ``"kan"`` (``FasterKAN([dim, ffn_dim // 2, dim])``)."""
    if kind == "moe":
        return MLPKANMoE(dim, ffn_dim, num_experts, top_k, num_grids)
    if kind == "mlp":
        return MLPExpert(dim, ffn_dim)
    if kind == "kan":
        return FasterKAN([dim, ffn_dim // 2, dim], num_grids=num_grids)
    raise ValueError(f"ffn must be 'moe', 'mlp' or 'kan', got {kind!r}")


class MLPKANBlock(nn.Module):
    """Pre-norm transformer block with the MLP-KAN mixture (or one expert type, ``ffn``) as feed-forward."""

    def __init__(self, dim: int, heads: int, ffn_dim: int, num_experts: int = 8, top_k: int = 2,
                 qkv_bias: bool = False, num_grids: int = 8, ffn: str = "moe"):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = attention(dim, heads, qkv_bias)
        self.norm2 = nn.LayerNorm(dim)
        self.ffn = feed_forward(ffn, dim, ffn_dim, num_experts, top_k, num_grids)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class MLPKANViT(TinyViT):
    """The reference ``TinyViT`` (patch embedding, class token, learned positions, final norm, head on the
    class token) with every block replaced by an ``MLPKANBlock``: ``(B, C, H, W) -> (B, num_classes)``."""

    def __init__(self, num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2,
                 dim: int = 64, depth: int = 2, heads: int = 4, ffn_dim: int = 32, num_experts: int = 8,
                 top_k: int = 2, qkv_bias: bool = False, norm_eps: float = 1e-6, num_grids: int = 8,
                 ffn: str = "moe"):
        super().__init__(num_classes=num_classes, in_chans=in_chans, img_size=img_size, patch_size=patch_size,
                         dim=dim, depth=depth, heads=heads, norm_layer=functools.partial(nn.LayerNorm, eps=norm_eps))
        self.blocks = nn.Sequential(*[MLPKANBlock(dim, heads, ffn_dim, num_experts, top_k, qkv_bias, num_grids, ffn)
                                      for _ in range(depth)])


class MLPKANRegressor(nn.Module):
    """MLP-KAN for function learning: ``(B, d) -> (B, 1)``.

    Each scalar input becomes a token ``x_i * w_i + b_i`` (a per-feature linear embedding; the paper
    does not say how function-learning inputs are embedded, this is our choice), a class token is
    prepended, MLP-KAN blocks follow, and a linear head reads the class token.
    """

    def __init__(self, in_features: int = 2, dim: int = 8, depth: int = 1, heads: int = 2, ffn_dim: int = 8,
                 num_experts: int = 8, top_k: int = 2, num_grids: int = 8, ffn: str = "moe"):
        super().__init__()
        self.in_features = in_features
        self.feature_weight = nn.Parameter(torch.randn(in_features, dim) * 0.02)
        self.feature_bias = nn.Parameter(torch.zeros(in_features, dim))
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.blocks = nn.Sequential(*[MLPKANBlock(dim, heads, ffn_dim, num_experts, top_k, True, num_grids, ffn)
                                      for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        tokens = x.unsqueeze(-1) * self.feature_weight + self.feature_bias  # (B, d, dim)
        tokens = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), tokens], dim=1)
        return self.head(self.norm(self.blocks(tokens))[:, 0])


def mlp_kan_vit(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2, dim: int = 64,
                depth: int = 2, heads: int = 4, ffn_dim: int = 32, num_experts: int = 8, top_k: int = 2,
                ffn: str = "moe") -> MLPKANViT:
    """Tiny MLP-KAN ViT for digits_classify (D=64, 4 MLP + 4 KAN experts, top-2): ``(B, 1, 8, 8) -> (B, 10)``.

    ``ffn="mlp"`` / ``"kan"`` give the pure-MLP / pure-KAN ViT with the same attention and layout.
    """
    return MLPKANViT(num_classes, in_chans, img_size, patch_size, dim, depth, heads, ffn_dim, num_experts, top_k,
                     ffn=ffn)


def mlp_kan_formula(in_features: int = 2, dim: int = 8, depth: int = 1, heads: int = 2, ffn_dim: int = 8,
                    num_experts: int = 8, top_k: int = 2, ffn: str = "moe") -> MLPKANRegressor:
    """Tiny MLP-KAN for formula_regress (D=8, one block, 4 + 4 experts, top-2): ``(B, in_features) -> (B, 1)``.

    >>> mlp_kan_formula(in_features=3)(torch.rand(4, 3)).shape
    torch.Size([4, 1])
    """
    return MLPKANRegressor(in_features, dim, depth, heads, ffn_dim, num_experts, top_k, ffn=ffn)


def mlp_kan_deit(num_classes: int = 100, in_chans: int = 3, img_size: int = 224, patch_size: int = 16,
                 dim: int = 192, depth: int = 12, heads: int = 3, ffn_dim: int = 192, num_experts: int = 8,
                 top_k: int = 2, qkv_bias: bool = False, num_grids: int = 8) -> MLPKANViT:
    """The authors' ``deit_tiny_patch16_224_KAN`` (``hdim_kan=192``, 8 experts, top-2), the target of
    ``zoo convert mlp_kan_deit.official``. Their blocks' attention has no qkv bias."""
    return MLPKANViT(num_classes, in_chans, img_size, patch_size, dim, depth, heads, ffn_dim, num_experts, top_k,
                     qkv_bias, 1e-6, num_grids)
