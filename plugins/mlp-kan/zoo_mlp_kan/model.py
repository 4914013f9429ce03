"""MLP-KAN: a transformer whose feed-forward layer is a mixture of MLP experts and KAN experts.

He, Xie, Yuan & Sun 2024, "MLP-KAN: Unifying Deep Representation and Function Learning"
(arXiv:2410.03027), Sec. 4 and the authors' code (github.com/DLYuanGod/MLP-KAN, ``models_kan.py``):
each block is ``x + Attn(LN(x))``, then ``x + MoE(LN(x))``. The MoE routes every token to its top-k
(k = 2) of E experts with a bias-free linear gate, ``softmax`` over experts, the top-k weights
renormalised to sum to one; half the experts are "representation experts" (MLPs: ``fc1 -> GELU ->
fc2`` with ``ffn_dim`` hidden units, timm's ``Mlp``), half "function experts" (FasterKAN networks
``[dim, ffn_dim // 2, dim]``: LayerNorm, reflectional-switch basis ``1 - tanh((x - u_g) / h)^2`` on 8
centres in [-1.2, 0.2] with ``1/h = 0.5``, then a bias-free linear map).

Load balancing (issue 14): the released ``MoE_KAN_MLP`` trains the router with the task loss only, and
at our scale it collapsed onto the MLP experts (about 95% of the top-2 slots on digits). The paper's
Sec. 4.1 describes its gate in soft-MoE terms (slots, dispatch weights), which need no auxiliary loss,
but the routing the code and this plugin implement is sparse top-2, which does. The one balancing loss
in the authors' repository is in its GShard-style ``Top2Gating`` (``hi_moe.py``, not used by their
models): GShard's auxiliary loss (Lepikhin et al. 2020, Sec. 2.2, Algorithm 1), in the normalisation of
the Switch Transformer (Fedus et al. 2022, Sec. 2.2, Eq. 4-6), ``aux = E * sum_e f_e P_e``, with
``f_e`` the fraction of tokens whose first choice is expert ``e`` and ``P_e`` the mean router
probability of ``e`` (1 when balanced), added to the task loss with weight ``aux_loss_coef = 1e-2``
(Switch's alpha and that module's ``loss_coef``). The models add it in their ``loss(output, target)``,
which the digits_classify and formula_regress trainers call; ``aux_loss_coef=0`` restores the old
training.
"""
from __future__ import annotations

import functools

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.backbones import Attention, TinyViT
from zoo_nn.kan import RBFKANLayer

__all__ = ["FasterKAN", "MLPExpert", "MLPKANMoE", "load_balancing_loss", "mlp_slot_share", "balanced_loss", "attention",
           "feed_forward", "MLPKANBlock", "MLPKANViT", "MLPKANRegressor", "mlp_kan_vit", "mlp_kan_formula", "mlp_kan_deit"]


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


# GShard (Lepikhin et al. 2020, Algorithm 1) / Switch Transformer (Fedus et al. 2022, Eq. 4-6) auxiliary loss
def load_balancing_loss(probs: torch.Tensor, first_choice: torch.Tensor) -> torch.Tensor:
    """``E * sum_e f_e P_e`` for router probabilities ``probs (N, E)`` and each token's top-1 expert ``(N,)``:
    ``f_e`` the fraction of tokens whose first choice is ``e`` (not differentiable), ``P_e`` the mean of
    ``probs[:, e]`` (carries the gradient). 1 for a uniform router, up to E when one expert takes all.

    >>> load_balancing_loss(torch.full((4, 2), 0.5), torch.tensor([0, 1, 0, 1])).item()
    1.0
    >>> load_balancing_loss(torch.tensor([[1.0, 0.0]] * 4), torch.zeros(4, dtype=torch.long)).item()
    2.0
    """
    num_experts = probs.shape[-1]
    fraction = F.one_hot(first_choice, num_experts).to(probs.dtype).mean(0)
    return num_experts * (fraction * probs.mean(0)).sum()


class MLPKANMoE(nn.Module):
    """Top-k mixture of ``num_experts // 2`` MLP experts and ``num_experts // 2`` FasterKAN experts.

    ``(..., dim) -> (..., dim)``; ``last_router_probs`` keeps the softmax of the last call and
    ``last_choice`` its top-k experts (for inspection); ``aux_loss`` is the last call's
    ``load_balancing_loss`` (with its graph while gradients are on), for the model's ``loss``.

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
        self.last_choice: torch.Tensor | None = None
        self.aux_loss: torch.Tensor | None = None

    def route(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(N, dim) -> (weights (N, k), experts (N, k))``: top-k of the gate's softmax, renormalised."""
        probs = F.softmax(self.gate(x), dim=-1, dtype=torch.float32)
        weights, chosen = probs.topk(self.top_k, dim=-1)
        self.last_router_probs, self.last_choice = probs.detach(), chosen
        self.aux_loss = load_balancing_loss(probs, chosen[:, 0])
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


def mlp_slot_share(model: nn.Module) -> float:
    """Fraction of the top-k slots that the last forward pass of ``model`` sent to MLP experts (all its
    ``MLPKANMoE`` layers together; 0.5 is an even split between MLP and KAN experts)."""
    moes = [m for m in model.modules() if isinstance(m, MLPKANMoE) and m.last_choice is not None]
    if not moes:
        raise ValueError("mlp_slot_share: no MLPKANMoE layer has routed anything yet; call the model first")
    to_mlp = sum(float((m.last_choice < m.num_experts // 2).sum()) for m in moes)
    return to_mlp / sum(m.last_choice.numel() for m in moes)


def balanced_loss(model: nn.Module, task_loss: torch.Tensor, coef: float) -> torch.Tensor:
    """``task_loss + coef * sum of every MLPKANMoE layer's aux_loss`` from the last forward pass (Switch
    Transformer: one auxiliary loss per MoE layer, added to the total loss)."""
    if not coef:
        return task_loss
    aux = [m.aux_loss for m in model.modules() if isinstance(m, MLPKANMoE) and m.aux_loss is not None]
    return task_loss + coef * sum(aux) if aux else task_loss


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
    class token) with every block replaced by an ``MLPKANBlock``: ``(B, C, H, W) -> (B, num_classes)``.

    ``loss(output, target)``: cross-entropy plus ``aux_loss_coef`` times the routers' load-balancing losses."""

    def __init__(self, num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2,
                 dim: int = 64, depth: int = 2, heads: int = 4, ffn_dim: int = 32, num_experts: int = 8,
                 top_k: int = 2, qkv_bias: bool = False, norm_eps: float = 1e-6, num_grids: int = 8,
                 ffn: str = "moe", aux_loss_coef: float = 1e-2):
        super().__init__(num_classes=num_classes, in_chans=in_chans, img_size=img_size, patch_size=patch_size,
                         dim=dim, depth=depth, heads=heads, norm_layer=functools.partial(nn.LayerNorm, eps=norm_eps))
        self.blocks = nn.Sequential(*[MLPKANBlock(dim, heads, ffn_dim, num_experts, top_k, qkv_bias, num_grids, ffn)
                                      for _ in range(depth)])
        self.aux_loss_coef = aux_loss_coef

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return balanced_loss(self, F.cross_entropy(output, target), self.aux_loss_coef)


class MLPKANRegressor(nn.Module):
    """MLP-KAN for function learning: ``(B, d) -> (B, 1)``.

    Each scalar input becomes a token ``x_i * w_i + b_i`` (a per-feature linear embedding; the paper
    does not say how function-learning inputs are embedded, this is our choice), a class token is
    prepended, MLP-KAN blocks follow, and a linear head reads the class token. ``loss(output, target)``:
    MSE plus ``aux_loss_coef`` times the routers' load-balancing losses.
    """

    def __init__(self, in_features: int = 2, dim: int = 8, depth: int = 1, heads: int = 2, ffn_dim: int = 8,
                 num_experts: int = 8, top_k: int = 2, num_grids: int = 8, ffn: str = "moe",
                 aux_loss_coef: float = 1e-2):
        super().__init__()
        self.in_features, self.aux_loss_coef = in_features, aux_loss_coef
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

    def loss(self, output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return balanced_loss(self, F.mse_loss(output, target), self.aux_loss_coef)


def mlp_kan_vit(num_classes: int = 10, in_chans: int = 1, img_size: int = 8, patch_size: int = 2, dim: int = 64,
                depth: int = 2, heads: int = 4, ffn_dim: int = 32, num_experts: int = 8, top_k: int = 2,
                ffn: str = "moe", aux_loss_coef: float = 1e-2) -> MLPKANViT:
    """Tiny MLP-KAN ViT for digits_classify (D=64, 4 MLP + 4 KAN experts, top-2): ``(B, 1, 8, 8) -> (B, 10)``.

    ``ffn="mlp"`` / ``"kan"`` give the pure-MLP / pure-KAN ViT with the same attention and layout;
    ``aux_loss_coef``: weight of the routers' load-balancing loss in ``model.loss`` (0: none).
    """
    return MLPKANViT(num_classes, in_chans, img_size, patch_size, dim, depth, heads, ffn_dim, num_experts, top_k,
                     ffn=ffn, aux_loss_coef=aux_loss_coef)


def mlp_kan_formula(in_features: int = 2, dim: int = 8, depth: int = 1, heads: int = 2, ffn_dim: int = 8,
                    num_experts: int = 8, top_k: int = 2, ffn: str = "moe", aux_loss_coef: float = 1e-2) -> MLPKANRegressor:
    """Tiny MLP-KAN for formula_regress (D=8, one block, 4 + 4 experts, top-2): ``(B, in_features) -> (B, 1)``.

    >>> mlp_kan_formula(in_features=3)(torch.rand(4, 3)).shape
    torch.Size([4, 1])
    """
    return MLPKANRegressor(in_features, dim, depth, heads, ffn_dim, num_experts, top_k, ffn=ffn,
                           aux_loss_coef=aux_loss_coef)


def mlp_kan_deit(num_classes: int = 100, in_chans: int = 3, img_size: int = 224, patch_size: int = 16,
                 dim: int = 192, depth: int = 12, heads: int = 3, ffn_dim: int = 192, num_experts: int = 8,
                 top_k: int = 2, qkv_bias: bool = False, num_grids: int = 8) -> MLPKANViT:
    """The authors' ``deit_tiny_patch16_224_KAN`` (``hdim_kan=192``, 8 experts, top-2), the target of
    ``zoo convert mlp_kan_deit.official``. Their blocks' attention has no qkv bias."""
    return MLPKANViT(num_classes, in_chans, img_size, patch_size, dim, depth, heads, ffn_dim, num_experts, top_k,
                     qkv_bias, 1e-6, num_grids)
