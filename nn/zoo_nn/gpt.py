"""The reference GPT of the ``char_lm`` task: a small pre-norm decoder with a pluggable MLP.

Layer-type plugins (activations, norms, sparsity methods) are evaluated by swapping their piece
into this backbone:

- ``act``: an activation name (``"relu"``, ``"gelu"``, ``"silu"``, or a gated one,
  ``"swiglu"``, ``"reglu"``, ``"geglu"``), or a layer factory called as ``act()`` (``nn.ReLU``, a
  plugin's class). Gated MLPs use ``2/3`` of the hidden width so that every MLP has (almost) the
  same parameter count: ``3 * dim * (2/3 * h)`` equals ``2 * dim * h``.
- ``norm_layer``: called as ``norm_layer(dim)`` (``nn.LayerNorm``, ``nn.RMSNorm``, a plugin's class);
  with ``qk_norm=True`` also as ``norm_layer(head_dim)`` on queries and keys.
- Every MLP passes its hidden activation (the input of ``down``) through ``mlp.hidden``, an
  ``nn.Identity``: a forward hook there reads the activation, and a hook that returns a tensor
  replaces it (used to measure activation sparsity and to truncate inactive neurons).

Initialisation follows GPT-2: weights N(0, 0.02), residual output projections N(0, 0.02 / sqrt(2 depth)),
biases zero, learned absolute position embeddings, untied output head.
"""
from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["GPT", "MLP", "Attention", "Block", "ACTIVATIONS", "GATED", "mlp_hidden_width",
           "hidden_hooks", "capture_hidden"]

Layer = Callable[..., nn.Module]
Act = str | Layer


# name -> elementwise layer; names in GATED are GLU variants: act(gate(x)) * up(x) (Shazeer 2020).
ACTIVATIONS: dict[str, Layer] = {"relu": nn.ReLU, "gelu": nn.GELU, "silu": nn.SiLU,
                                 "swiglu": nn.SiLU, "reglu": nn.ReLU, "geglu": nn.GELU}
GATED = frozenset({"swiglu", "reglu", "geglu"})


def mlp_hidden_width(dim: int, mlp_ratio: float, gated: bool) -> int:
    """Hidden width: ``mlp_ratio * dim``, times 2/3 for gated MLPs (equal parameter count)."""
    hidden = mlp_ratio * dim
    return max(1, int(round(hidden * 2 / 3)) if gated else int(hidden))


def _act_layer(act: Act) -> tuple[Layer, bool]:
    if isinstance(act, str):
        if act not in ACTIVATIONS:
            raise ValueError(f"unknown activation {act!r}; choose from {sorted(ACTIVATIONS)} or pass a layer factory")
        return ACTIVATIONS[act], act in GATED
    if callable(act):
        return act, False
    raise TypeError(f"act must be a name or a layer factory, got {type(act).__name__}")


class MLP(nn.Module):
    """``down(hidden(act(up(x))))``, or ``down(hidden(act(gate(x)) * up(x)))`` when gated."""

    def __init__(self, dim: int, hidden: int, act: Act = "gelu", gated: bool | None = None, bias: bool = True):
        super().__init__()
        layer, is_gated = _act_layer(act)
        self.gated = is_gated if gated is None else gated
        self.up = nn.Linear(dim, hidden, bias=bias)
        self.gate = nn.Linear(dim, hidden, bias=bias) if self.gated else None
        self.act = layer()
        self.hidden = nn.Identity()  # hook point: the (..., hidden) activation that `down` reads
        self.down = nn.Linear(hidden, dim, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.act(self.gate(x)) * self.up(x) if self.gate is not None else self.act(self.up(x))
        return self.down(self.hidden(h))


class Attention(nn.Module):
    """Causal multi-head self-attention with separate q, k, v and output projections."""

    def __init__(self, dim: int, heads: int, bias: bool = True, qk_norm: Layer | None = None):
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} must be a multiple of heads {heads}")
        self.heads = heads
        self.q = nn.Linear(dim, dim, bias=bias)
        self.k = nn.Linear(dim, dim, bias=bias)
        self.v = nn.Linear(dim, dim, bias=bias)
        self.out = nn.Linear(dim, dim, bias=bias)
        self.q_norm = qk_norm(dim // heads) if qk_norm is not None else nn.Identity()
        self.k_norm = qk_norm(dim // heads) if qk_norm is not None else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = self.q_norm(split(self.q(x))), self.k_norm(split(self.k(x))), split(self.v(x))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    """Pre-norm block: ``x + attn(norm1(x))``, then ``x + mlp(norm2(x))``."""

    def __init__(self, dim: int, heads: int, hidden: int, act: Act, norm_layer: Layer, bias: bool = True,
                 qk_norm: bool = False, gated: bool | None = None):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, heads, bias=bias, qk_norm=norm_layer if qk_norm else None)
        self.norm2 = norm_layer(dim)
        self.mlp = MLP(dim, hidden, act, gated=gated, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class GPT(nn.Module):
    """A small GPT: token + position embeddings, ``depth`` pre-norm blocks, final norm, linear head.

    Args:
        vocab_size: number of token ids; ``forward`` takes ids in ``[0, vocab_size)``.
        dim, depth, heads: width, number of blocks, attention heads.
        block_size: longest sequence (the size of the position table).
        mlp_ratio: MLP hidden width over ``dim`` (gated MLPs use 2/3 of it).
        act: an activation name from ``ACTIVATIONS`` or a layer factory (see the module docstring).
        norm_layer: ``norm_layer(dim)`` for every norm (default LayerNorm).
        bias: biases in the linear layers.
        qk_norm: also normalise queries and keys per head with ``norm_layer(head_dim)``.
        gated: force a gated (True) or plain (False) MLP; None follows ``act``.

    >>> m = GPT(vocab_size=97, dim=32, depth=2, heads=2, block_size=16, act="swiglu")
    >>> m(torch.zeros(2, 16, dtype=torch.long)).shape
    torch.Size([2, 16, 97])
    """

    def __init__(self, vocab_size: int = 97, dim: int = 128, depth: int = 4, heads: int = 4, block_size: int = 128,
                 mlp_ratio: float = 4.0, act: Act = "gelu", norm_layer: Layer = nn.LayerNorm, bias: bool = True,
                 qk_norm: bool = False, gated: bool | None = None):
        super().__init__()
        _, is_gated = _act_layer(act)
        self.block_size = block_size
        self.vocab_size = vocab_size
        self.arch = {"dim": dim, "depth": depth, "heads": heads, "block_size": block_size, "mlp_ratio": mlp_ratio}
        self.hidden = mlp_hidden_width(dim, mlp_ratio, is_gated if gated is None else gated)
        self.tok = nn.Embedding(vocab_size, dim)
        self.pos = nn.Embedding(block_size, dim)
        self.blocks = nn.ModuleList([Block(dim, heads, self.hidden, act, norm_layer, bias, qk_norm, gated)
                                     for _ in range(depth)])
        self.norm = norm_layer(dim)
        self.head = nn.Linear(dim, vocab_size, bias=False)
        self.apply(self._init)
        for block in self.blocks:  # GPT-2: residual projections scaled by 1/sqrt(2 * depth)
            for proj in (block.attn.out, block.mlp.down):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * depth))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
        if isinstance(m, nn.Linear) and m.bias is not None:
            nn.init.zeros_(m.bias)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        t = ids.shape[1]
        if t > self.block_size:
            raise ValueError(f"sequence length {t} exceeds block_size {self.block_size}")
        x = self.tok(ids) + self.pos(torch.arange(t, device=ids.device))
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))

    def mlps(self) -> list[MLP]:
        """The MLP of every block, in order (``mlps()[i].hidden`` is layer i's hook point)."""
        return [block.mlp for block in self.blocks]

    def optim_groups(self, weight_decay: float) -> list[dict]:
        """AdamW parameter groups: decay on matrices and embeddings, none on biases and norm scales.

        A parameter with a ``zoo_weight_decay`` attribute (True/False) overrides the rule; plugins
        use it for a per-parameter weight-decay policy.
        """
        decay, no_decay = [], []
        for p in self.parameters():
            if p.requires_grad:
                (decay if getattr(p, "zoo_weight_decay", p.ndim >= 2) else no_decay).append(p)
        return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


HiddenFn = Callable[[int, torch.Tensor], torch.Tensor | None]


@contextlib.contextmanager
def hidden_hooks(model: nn.Module, fn: HiddenFn) -> Iterator[None]:
    """Call ``fn(layer, h)`` on every MLP hidden activation while the context is open.

    ``fn`` may return a tensor, which replaces ``h`` (e.g. with inactive neurons zeroed); the hooks
    are removed on exit. ``model`` is a ``GPT`` or any module whose ``mlps()`` lists MLPs.

    >>> m = GPT(dim=32, depth=2, heads=2, block_size=8)
    >>> with hidden_hooks(m, lambda i, h: torch.zeros_like(h)):
    ...     y = m(torch.zeros(1, 8, dtype=torch.long))
    """
    handles = [mlp.hidden.register_forward_hook(lambda _m, _i, out, i=i: fn(i, out))
               for i, mlp in enumerate(model.mlps())]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def capture_hidden(model: nn.Module) -> Iterator[dict[int, list[torch.Tensor]]]:
    """Record every MLP hidden activation (detached) per layer while the context is open.

    >>> m = GPT(dim=32, depth=2, heads=2, block_size=8)
    >>> with capture_hidden(m) as acts:
    ...     _ = m(torch.zeros(1, 8, dtype=torch.long))
    >>> acts[0][0].shape
    torch.Size([1, 8, 128])
    """
    acts: dict[int, list[torch.Tensor]] = {i: [] for i in range(len(model.mlps()))}
    with hidden_hooks(model, lambda i, h: acts[i].append(h.detach())):
        yield acts
