"""R-Sparse: rank-aware activation sparsity for linear layers, training-free.

Zhang et al. 2025, "R-Sparse: Rank-Aware Activation Sparsity for Efficient LLM Inference"
(arXiv:2504.19449), Sec. 3: a linear layer ``y = W x + b`` is approximated by computing the
large-magnitude input channels exactly and the rest through the top singular components of W,

    y ~= W (x * m) + U_r S_r V_r^T (x * (1 - m)) + b,     m_j = [ |x_j| * ||W[:, j]|| > tau ],

with no active-channel predictor: ``m`` is read from the input itself, ``U_r S_r V_r^T`` is the
rank-r truncated SVD of W, and ``tau`` is calibrated on a few inputs so that a target share of
channel entries falls under it. The compute budget of a layer at sparsity ``s`` is ``(1 - s)`` of
its dense multiply-adds; the sparse-rank ratio ``alpha`` gives ``alpha`` of it to exact channels
(``in * (1 - s) * alpha`` of them) and the rest to the low-rank part (rank
``(in * out * (1 - s) - channels * out) / (in + out)``). ``alpha = 1`` is plain magnitude sparsity
of the inputs, ``alpha = 0`` a pure low-rank layer. Channel scores weight ``|x_j|`` by the column
norm of W, and the budget arithmetic follows the authors' released code
(github.com/VITA-Group/R-Sparse, read, not copied).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.gpt import GPT
from zoo_task_char_lm.task import GPT_DEFAULTS, NORMS

__all__ = ["RSparseLinear", "budget", "rsparsify", "rsparse_linears", "block_linears", "layer_inputs", "calibrate", "rsparse_gpt"]


def budget(in_features: int, out_features: int, sparsity: float, sparse_ratio: float) -> tuple[int, int]:
    """``(channels, rank)``: exact input channels and SVD rank that fit ``(1 - sparsity)`` of the layer's MACs.

    >>> budget(128, 512, sparsity=0.5, sparse_ratio=0.5)
    (32, 25)
    """
    if not (0.0 <= sparsity <= 1.0 and 0.0 <= sparse_ratio <= 1.0):
        raise ValueError(f"sparsity and sparse_ratio must be in [0, 1], got {sparsity}, {sparse_ratio}")
    channels = int(in_features * (1 - sparsity) * sparse_ratio)
    low_rank = in_features * out_features * (1 - sparsity) - channels * out_features
    rank = min(int(low_rank / (in_features + out_features)), min(in_features, out_features))
    return channels, max(rank, 0)


class RSparseLinear(nn.Module):
    """A drop-in ``nn.Linear`` that runs the R-Sparse approximation (see the module docstring).

    Args:
        in_features, out_features, bias: as ``nn.Linear``.
        sparsity: share of the dense multiply-adds to skip (the paper's layer sparsity).
        sparse_ratio: ``alpha``, the share of the remaining budget spent on exact channels.
        score: ``"rsparse"`` ranks channels by ``|x_j| * ||W[:, j]||`` (the paper); ``"magnitude"``
            by ``|x_j|`` alone (magnitude-only input sparsity, for comparison).

    Until ``calibrate`` sets ``threshold`` (initially 0), every non-zero channel is exact, so the
    layer equals the dense one. ``from_linear`` wraps a trained ``nn.Linear`` (and runs the SVD).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, sparsity: float = 0.5,
                 sparse_ratio: float = 0.5, score: str = "rsparse"):
        super().__init__()
        if score not in ("rsparse", "magnitude"):
            raise ValueError(f"score must be 'rsparse' or 'magnitude', got {score!r}")
        self.in_features, self.out_features = in_features, out_features
        self.sparsity, self.sparse_ratio, self.score = sparsity, sparse_ratio, score
        self.channels, self.rank = budget(in_features, out_features, sparsity, sparse_ratio)
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features)) if bias else None
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.register_buffer("lr_in", torch.zeros(in_features, self.rank))  # V_r diag(S_r)
        self.register_buffer("lr_out", torch.zeros(self.rank, out_features))  # U_r^T
        self.register_buffer("col_norm", torch.ones(in_features))
        self.register_buffer("threshold", torch.zeros(()))
        self.refresh()

    @classmethod
    def from_linear(cls, linear: nn.Linear, sparsity: float = 0.5, sparse_ratio: float = 0.5,
                    score: str = "rsparse") -> RSparseLinear:
        layer = cls(linear.in_features, linear.out_features, linear.bias is not None, sparsity, sparse_ratio, score)
        with torch.no_grad():
            layer.weight.copy_(linear.weight)
            if linear.bias is not None:
                layer.bias.copy_(linear.bias)
        layer.refresh()
        return layer

    @torch.no_grad()
    def refresh(self) -> None:
        """Recompute the truncated SVD and the column norms from ``weight`` (training-free)."""
        w = self.weight.detach().double()
        u, s, vh = torch.linalg.svd(w, full_matrices=False)
        r = self.rank
        self.lr_in.copy_((vh[:r].T * s[:r]).to(self.lr_in.dtype))
        self.lr_out.copy_(u[:, :r].T.to(self.lr_out.dtype))
        self.col_norm.copy_(w.norm(dim=0).to(self.col_norm.dtype))

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """Per-channel importance: ``|x_j| * ||W[:, j]||`` (or ``|x_j|`` for ``score='magnitude'``)."""
        return x.abs() * self.col_norm if self.score == "rsparse" else x.abs()

    @property
    def target_sparsity(self) -> float:
        """Share of input entries to route to the low-rank part: ``1 - (1 - s) * alpha``."""
        return 1.0 - self.channels / self.in_features

    @torch.no_grad()
    def calibrate(self, x: torch.Tensor) -> float:
        """Set ``threshold`` so that ``target_sparsity`` of the entries of ``x`` (..., in) score below it."""
        sc = self.scores(x).flatten()
        k = int(self.target_sparsity * sc.numel())
        self.threshold.fill_(float(sc.kthvalue(k).values) if k > 0 else 0.0)
        return float(self.threshold)

    def mask(self, x: torch.Tensor) -> torch.Tensor:
        return self.scores(x) > self.threshold

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        m = self.mask(x).to(x.dtype)
        y = F.linear(x * m, self.weight, self.bias)
        if self.rank:
            y = y + (x * (1 - m)) @ self.lr_in @ self.lr_out
        return y

    def extra_repr(self) -> str:
        return (f"{self.in_features}, {self.out_features}, sparsity={self.sparsity}, sparse_ratio={self.sparse_ratio}, "
                f"channels={self.channels}, rank={self.rank}, score={self.score}")


def rsparse_linears(model: nn.Module) -> list[tuple[str, RSparseLinear]]:
    """Every ``RSparseLinear`` of ``model`` with its name, in module order."""
    return [(n, m) for n, m in model.named_modules() if isinstance(m, RSparseLinear)]


def block_linears(model: nn.Module) -> list[tuple[nn.Module, str, nn.Linear]]:
    """``(parent, attribute, linear)`` for every ``nn.Linear`` of the attention and MLP of each block."""
    blocks = getattr(model, "blocks", None)
    if blocks is None:
        raise TypeError("rsparsify expects a zoo_nn.gpt.GPT-like model with .blocks")
    out = []
    for block in blocks:
        for parent in (block.attn, block.mlp):
            for name, child in parent.named_children():
                if isinstance(child, nn.Linear):
                    out.append((parent, name, child))
    return out


def rsparsify(model: nn.Module, sparsity: float = 0.5, sparse_ratio: float | Sequence[float] = 0.5,
              score: str = "rsparse") -> nn.Module:
    """Replace every linear layer of the GPT's blocks (q, k, v, out, up, gate, down) by ``RSparseLinear``.

    ``sparse_ratio`` is one alpha for all layers or one per layer (in ``rsparse_linears`` order).
    In place; returns ``model``. Call ``calibrate(model, ids)`` afterwards.
    """
    targets = block_linears(model)
    ratios = [sparse_ratio] * len(targets) if isinstance(sparse_ratio, (int, float)) else list(sparse_ratio)
    if len(ratios) != len(targets):
        raise ValueError(f"{len(ratios)} sparse ratios given for {len(targets)} linear layers")
    for (parent, name, lin), a in zip(targets, ratios, strict=True):
        setattr(parent, name, RSparseLinear.from_linear(lin, sparsity, float(a), score))
    return model


@torch.no_grad()
def layer_inputs(model: nn.Module, layers: Sequence[nn.Module], ids: torch.Tensor,
                 fn: Callable[[int, torch.Tensor], object] | None = None) -> list[torch.Tensor]:
    """Run ``model(ids)`` once and return what each of ``layers`` received, flattened to (N, in).

    ``fn(i, x)``, when given, is called on layer i's input before the layer runs (so it may change
    the layer, e.g. calibrate it).
    """
    seen: list[torch.Tensor] = [torch.empty(0)] * len(layers)

    def hook(i: int):
        def pre(_m, args):
            x = args[0]
            seen[i] = x.reshape(-1, x.shape[-1]).detach()
            if fn is not None:
                fn(i, x)
        return pre

    handles = [layer.register_forward_pre_hook(hook(i)) for i, layer in enumerate(layers)]
    try:
        model.eval()
        model(ids)
    finally:
        for h in handles:
            h.remove()
    return seen


def calibrate(model: nn.Module, ids: torch.Tensor) -> dict[str, float]:
    """Run ``ids`` (B, T) through the model once and calibrate every layer's threshold on its input.

    Layers are calibrated in order with the earlier layers already sparse, as at inference.
    """
    names, layers = zip(*rsparse_linears(model), strict=True)
    out: dict[str, float] = {}
    layer_inputs(model, layers, ids, lambda i, x: out.__setitem__(names[i], layers[i].calibrate(x)))
    return out


def rsparse_gpt(vocab_size: int = GPT_DEFAULTS["vocab_size"], dim: int = 128, depth: int = 4, heads: int = 4,
                block_size: int = 128, mlp_ratio: float = 4.0, act: str = "swiglu", norm: str = "rmsnorm",
                sparsity: float = 0.5, sparse_ratio: float | list[float] = 0.5) -> GPT:
    """The char_lm reference GPT (LLaMA-like: RMSNorm, SwiGLU) with R-Sparse linear layers.

    Uncalibrated (dense-equivalent) until ``calibrate`` runs; R-Sparse is training-free, so the
    usual route is ``rsparsify(trained_gpt)`` (see ``zoo_r_sparse.reproduce``).
    """
    model = GPT(vocab_size=vocab_size, dim=dim, depth=depth, heads=heads, block_size=block_size, mlp_ratio=mlp_ratio,
                act=act, norm_layer=NORMS[norm])
    model.reference_baselines = ("gpt-rms-swiglu",)
    return rsparsify(model, sparsity, sparse_ratio)
