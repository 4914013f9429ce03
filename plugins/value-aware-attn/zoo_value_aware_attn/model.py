"""The char-LM whose attention ``value-aware-attn`` measures: the ``char_lm`` task's reference GPT (``zoo_nn.gpt``) at
a small size, with ``qkv`` reading every layer's per-head queries, keys and values (Gupta and Berant 2021 measure
the attention of trained language models; here a tiny one trained on the Python standard library's source)."""
from __future__ import annotations

from typing import Any

import torch

from zoo_nn.gpt import GPT

CPU: dict[str, Any] = {"dim": 64, "depth": 2, "heads": 4, "block_size": 64}
PRESETS = {"cpu": CPU}


class AttentionProbeGPT(GPT):
    """The reference GPT plus ``qkv(ids)``: ``{layer: (q, k, v)}``, each ``(B, H, T, d)``, as its attention uses them."""

    @torch.no_grad()
    def qkv(self, ids: torch.Tensor) -> dict[int, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        out: dict[int, tuple[torch.Tensor, ...]] = {}
        hooks = []
        for i, block in enumerate(self.blocks):
            attn = block.attn

            def grab(_mod: Any, args: tuple, _out: Any, i: int = i, attn: Any = attn) -> None:
                x = args[0]
                b, t, d = x.shape
                split = lambda y: y.view(b, t, attn.heads, d // attn.heads).transpose(1, 2)  # noqa: E731
                out[i] = (attn.q_norm(split(attn.q(x))), attn.k_norm(split(attn.k(x))), split(attn.v(x)))

            hooks.append(attn.register_forward_hook(grab))
        try:
            self.eval()
            self(ids)
        finally:
            for h in hooks:
                h.remove()
        return out


def attention_probe_gpt(vocab_size: int = 97, preset: str = "cpu", dim: int | None = None, depth: int | None = None,
                        heads: int | None = None, block_size: int | None = None) -> AttentionProbeGPT:
    """A small char-level GPT (``char_lm``'s reference architecture) whose attention the tool measures."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {sorted(PRESETS)}")
    given = {"dim": dim, "depth": depth, "heads": heads, "block_size": block_size}
    cfg = {**PRESETS[preset], **{k: v for k, v in given.items() if v is not None}}
    return AttentionProbeGPT(vocab_size=vocab_size, **cfg)
