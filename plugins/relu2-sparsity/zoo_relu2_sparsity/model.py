"""ReLU² and the GPTs it is compared in, on the char_lm task's reference backbone.

Zhang et al. 2024, "ReLU² Wins: Discovering Efficient Activation Functions for Sparse LLMs"
(arXiv:2402.03804) train the same LLM with ReLU, SwiGLU, ReGLU and ReLU² FFNs and compare their
sparsity. ReLU² (So et al. 2021, Primer) is ``relu(x) ** 2`` in a plain (non-gated) FFN; ReGLU is
``relu(x W_gate) * (x W_up)``. Here every variant is ``zoo_nn.gpt.GPT`` with RMSNorm (the paper's
models are LLaMA-like); gated FFNs get 2/3 of the hidden width, so all four have equal parameters.
ReLU and SwiGLU are the task's own baselines ``gpt-rms-relu`` and ``gpt-rms-swiglu``.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.gpt import GPT
from zoo_task_char_lm.task import GPT_DEFAULTS, NORMS

__all__ = ["SquaredReLU", "relu2_gpt", "reglu_gpt"]


# ReLU² (the paper's winning activation): f(x) = max(0, x)^2.
class SquaredReLU(nn.Module):
    """``relu(x) ** 2``, elementwise."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x).square()


def _gpt(act, vocab_size: int, dim: int, depth: int, heads: int, block_size: int, mlp_ratio: float, norm: str) -> GPT:
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {sorted(NORMS)}, got {norm!r}")
    return GPT(vocab_size=vocab_size, dim=dim, depth=depth, heads=heads, block_size=block_size, mlp_ratio=mlp_ratio,
               act=act, norm_layer=NORMS[norm])


def relu2_gpt(vocab_size: int = GPT_DEFAULTS["vocab_size"], dim: int = 128, depth: int = 4, heads: int = 4,
              block_size: int = 128, mlp_ratio: float = 4.0, norm: str = "rmsnorm") -> GPT:
    """The reference GPT with a ReLU² FFN: ``down(relu(up(x)) ** 2)``."""
    model = _gpt(SquaredReLU, vocab_size, dim, depth, heads, block_size, mlp_ratio, norm)
    model.reference_baselines = ("gpt-rms-relu", "gpt-rms-swiglu")
    return model


def reglu_gpt(vocab_size: int = GPT_DEFAULTS["vocab_size"], dim: int = 128, depth: int = 4, heads: int = 4,
              block_size: int = 128, mlp_ratio: float = 4.0, norm: str = "rmsnorm") -> GPT:
    """The reference GPT with a ReGLU FFN (2/3 hidden width): ``down(relu(gate(x)) * up(x))``."""
    model = _gpt("reglu", vocab_size, dim, depth, heads, block_size, mlp_ratio, norm)
    model.reference_baselines = ("gpt-rms-relu", "gpt-rms-swiglu")
    return model
