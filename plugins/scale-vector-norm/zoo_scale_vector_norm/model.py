"""Scale-vector strategies for the RMSNorms of a pre-norm GPT.

Wang et al. 2026, "Negligible in Size, Significant in Effect: On Scale Vectors in Large Language
Models" (arXiv:2605.26895). An RMSNorm is ``gamma * x / rms(x)``; ``gamma`` is the scale vector.
The paper separates Input-Norms (a norm whose output feeds linear maps: the pre-norms; their
scale can be folded into the next weight matrix, so it only preconditions it) from Output-Norms
(a norm on a linear map's output, whose scale adds expressivity), and proposes, Sec. 3:

1. branch-specific heterogeneity: one scale per branch that reads a pre-norm (q, k, v; gate, up)
   instead of one shared scale, so that each projection gets its own preconditioner;
2. improved placement around linear maps: a scale on the input side (columns of W) and one on
   the output side (rows of W) of each branch, ``y = beta * (W (gamma * x_hat))``;
3. magnitude-direction reparameterisation: ``gamma = m * v / ||v||`` with a learnable scalar m;
and weight decay on Input-Norm scales but not on Output-Norm scales (Sec. 2).

Only the abstract and the section headings of the paper were available to us, so the concrete
forms above are our reading of it (see the plugin README): Output-Norms are QK-norms (per-head
RMSNorm of queries and keys), branches followed by a QK-norm get no output-side scale (the norm
would cancel it), the LM head counts as a branch of the final norm, magnitude-direction is
``m * v / ||v||`` with ``m = sqrt(dim)`` and ``v = 1`` at init (so every scale starts at 1), and the
unified strategy is all three improvements with decay on Input-Norm scales only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import torch
from torch import nn

from zoo_nn.gpt import GPT
from zoo_task_char_lm.task import GPT_DEFAULTS

__all__ = ["ScaleVector", "ScaledLinear", "ScaleStrategy", "STRATEGIES", "apply_scale_strategy", "svn_gpt"]


class ScaleVector(nn.Module):
    """A per-channel scale ``gamma`` (``"plain"``) or ``gamma = m * v / ||v||`` (``"magdir"``), all ones at init."""

    def __init__(self, dim: int, reparam: str = "plain"):
        super().__init__()
        if reparam not in ("plain", "magdir"):
            raise ValueError(f"reparam must be 'plain' or 'magdir', got {reparam!r}")
        self.reparam = reparam
        if reparam == "plain":
            self.weight = nn.Parameter(torch.ones(dim))
        else:
            self.magnitude = nn.Parameter(torch.tensor(math.sqrt(dim)))
            self.direction = nn.Parameter(torch.ones(dim))

    def gamma(self) -> torch.Tensor:
        """The effective scale vector."""
        if self.reparam == "plain":
            return self.weight
        return self.magnitude * self.direction / self.direction.norm().clamp_min(1e-12)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gamma()


class ScaledLinear(nn.Module):
    """``out_scale * (linear(in_scale * x) - b) + b``: a linear map with scale vectors around it.

    The bias stays outside the output scale, so the scales only touch ``W``'s rows and columns.
    """

    def __init__(self, linear: nn.Linear, in_scale: ScaleVector | None = None, out_scale: ScaleVector | None = None):
        super().__init__()
        self.linear, self.in_scale, self.out_scale = linear, in_scale, out_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.in_scale is not None:
            x = self.in_scale(x)
        if self.out_scale is None:
            return self.linear(x)
        y = nn.functional.linear(x, self.linear.weight)
        y = self.out_scale(y)
        return y if self.linear.bias is None else y + self.linear.bias


@dataclass(frozen=True)
class ScaleStrategy:
    """Where the scale vectors of a pre-norm GPT live and which ones get weight decay.

    ``scales=False`` removes every scale vector (Input- and Output-Norms). ``branch_specific``
    moves the pre-norm scales onto the branches (q, k, v; gate, up; head); ``placement="both"``
    adds an output-side scale on each branch; ``reparam="magdir"`` reparameterises the branch
    scales; ``wd_input``/``wd_output`` put weight decay on Input-/Output-Norm scales.
    """

    scales: bool = True
    branch_specific: bool = False
    placement: str = "input"
    reparam: str = "plain"
    wd_input: bool = False
    wd_output: bool = False


STRATEGIES = {
    "none": ScaleStrategy(scales=False),
    "standard": ScaleStrategy(),
    "standard_wd_in": ScaleStrategy(wd_input=True),
    "standard_wd_out": ScaleStrategy(wd_output=True),
    "branch": ScaleStrategy(branch_specific=True),
    "unified": ScaleStrategy(branch_specific=True, placement="both", reparam="magdir", wd_input=True),
}


def _tag(module: nn.Module, decay: bool) -> None:
    for p in module.parameters():
        p.zoo_weight_decay = decay  # read by GPT.optim_groups


def _scale_free(norm: nn.RMSNorm) -> nn.RMSNorm:
    return nn.RMSNorm(norm.normalized_shape, eps=norm.eps, elementwise_affine=False)


def _branch(parent: nn.Module, name: str, cfg: ScaleStrategy, output_side: bool) -> None:
    lin = getattr(parent, name)
    in_scale = ScaleVector(lin.in_features, cfg.reparam)
    out_scale = ScaleVector(lin.out_features, cfg.reparam) if output_side else None
    wrapped = ScaledLinear(lin, in_scale, out_scale)
    _tag(in_scale, cfg.wd_input)
    if out_scale is not None:
        _tag(out_scale, cfg.wd_input)  # it preconditions W's rows and can be folded into W like the input one
    setattr(parent, name, wrapped)


def apply_scale_strategy(model: GPT, cfg: ScaleStrategy | str) -> GPT:
    """Rearrange the scale vectors of a ``GPT`` built with ``norm_layer=nn.RMSNorm`` (in place).

    >>> m = apply_scale_strategy(GPT(dim=32, depth=1, heads=2, block_size=8, norm_layer=nn.RMSNorm, qk_norm=True),
    ...                          "unified")
    >>> type(m.blocks[0].attn.q).__name__, m.blocks[0].norm1.weight is None
    ('ScaledLinear', True)
    """
    cfg = STRATEGIES[cfg] if isinstance(cfg, str) else cfg
    if cfg.placement not in ("input", "both"):
        raise ValueError(f"placement must be 'input' or 'both', got {cfg.placement!r}")
    if not all(isinstance(n, nn.RMSNorm) for n in [model.norm] + [b.norm1 for b in model.blocks]):
        raise TypeError("apply_scale_strategy expects a GPT built with norm_layer=nn.RMSNorm")
    for block in model.blocks:
        attn = block.attn
        for qk_norm in (attn.q_norm, attn.k_norm):
            if isinstance(qk_norm, nn.RMSNorm):  # Output-Norms
                _tag(qk_norm, cfg.wd_output)
        if not cfg.scales:
            attn.q_norm = _scale_free(attn.q_norm) if isinstance(attn.q_norm, nn.RMSNorm) else attn.q_norm
            attn.k_norm = _scale_free(attn.k_norm) if isinstance(attn.k_norm, nn.RMSNorm) else attn.k_norm
        if not cfg.scales or cfg.branch_specific:
            block.norm1, block.norm2 = _scale_free(block.norm1), _scale_free(block.norm2)
        else:
            _tag(block.norm1, cfg.wd_input)
            _tag(block.norm2, cfg.wd_input)
        if cfg.scales and cfg.branch_specific:
            both = cfg.placement == "both"
            has_qk_norm = isinstance(attn.q_norm, nn.RMSNorm)
            for name in ("q", "k"):
                _branch(attn, name, cfg, both and not has_qk_norm)
            _branch(attn, "v", cfg, both)
            for name in ("gate", "up"):
                if getattr(block.mlp, name) is not None:
                    _branch(block.mlp, name, cfg, both)
    if not cfg.scales or cfg.branch_specific:
        model.norm = _scale_free(model.norm)
    else:
        _tag(model.norm, cfg.wd_input)
    if cfg.scales and cfg.branch_specific:
        _branch(model, "head", cfg, cfg.placement == "both")
    return model


def svn_gpt(strategy: str = "unified", vocab_size: int = GPT_DEFAULTS["vocab_size"], dim: int = 128, depth: int = 4,
            heads: int = 4, block_size: int = 128, mlp_ratio: float = 4.0, act: str = "swiglu",
            qk_norm: bool = True) -> GPT:
    """The char_lm reference GPT (RMSNorm, SwiGLU, QK-norm) with a scale-vector strategy of ``STRATEGIES``.

    Weight decay on each scale vector follows the strategy through ``GPT.optim_groups``.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {sorted(STRATEGIES)}")
    model = GPT(vocab_size=vocab_size, dim=dim, depth=depth, heads=heads, block_size=block_size, mlp_ratio=mlp_ratio,
                act=act, norm_layer=nn.RMSNorm, qk_norm=qk_norm)
    model.reference_baselines = ("gpt-rms-swiglu",)
    return apply_scale_strategy(model, replace(STRATEGIES[strategy]))
