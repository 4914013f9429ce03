"""The GPTs of ``icl_toy`` with head and residual hook points, and the hooks the interventions use.

``HookedGPT`` is the reference GPT of ``zoo_nn.gpt`` (pre-norm, GPT-2 init, learned positions) with two kinds of
``nn.Identity`` hook points added (zoo_nn's ``Attention`` has no per-head access, so its forward is re-stated here with
one extra line; the parameters and their names are zoo_nn's):

* ``blocks[l].attn.z``: every head's output before the output projection, (B, T, heads, head_dim);
  head ``h``'s contribution to the residual stream is ``z[..., h, :] @ W_O[:, h * head_dim:(h + 1) * head_dim].T``
  (``head_vectors``);
* ``resid[l]``: the residual stream entering block ``l`` (``resid[depth]``: entering the final norm), (B, T, dim).

A forward hook on either that returns a tensor replaces it (``patch_heads``, ``add_to_residual``); both also work
with ``zoo.activations(gpt, ids, layers=["resid.*", "blocks.*.attn.z"])``.

``RegressionGPT`` reads (d + 2)-vectors with a linear ``read_in`` and returns one number per position (the
``head`` of a GPT with ``vocab_size=1``), as Garg et al. 2022 set up in-context linear regression.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

import torch
from torch import nn
from torch.nn import functional as F

from zoo_nn.gpt import GPT, Attention


class HeadAttention(Attention):
    """zoo_nn's causal attention with a hook point ``z`` on the per-head outputs (B, T, heads, head_dim)."""

    def __init__(self, dim: int, heads: int, bias: bool = True):
        super().__init__(dim, heads, bias=bias)
        self.z = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
        q, k, v = self.q_norm(split(self.q(x))), self.k_norm(split(self.k(x))), split(self.v(x))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(self.z(y.transpose(1, 2)).reshape(b, t, d))


class HookedGPT(GPT):
    """``zoo_nn.gpt.GPT`` with per-head (``blocks[l].attn.z``) and residual (``resid[l]``) hook points.

    >>> g = HookedGPT(vocab_size=39, dim=32, depth=2, heads=4, block_size=16)
    >>> g(torch.zeros(2, 5, dtype=torch.long)).shape
    torch.Size([2, 5, 39])
    """

    def __init__(self, vocab_size: int, dim: int = 64, depth: int = 4, heads: int = 4, block_size: int = 32,
                 mlp_ratio: float = 4.0):
        super().__init__(vocab_size=vocab_size, dim=dim, depth=depth, heads=heads, block_size=block_size,
                         mlp_ratio=mlp_ratio)
        for block in self.blocks:  # same parameters and initial values, one more hook point
            attn = HeadAttention(dim, heads)
            attn.load_state_dict(block.attn.state_dict())
            block.attn = attn
        self.resid = nn.ModuleList([nn.Identity() for _ in range(depth + 1)])
        self.depth, self.heads, self.dim = depth, heads, dim

    def embed(self, inputs: torch.Tensor) -> torch.Tensor:
        t = inputs.shape[1]
        if t > self.block_size:
            raise ValueError(f"sequence length {t} exceeds block_size {self.block_size}")
        return self.tok(inputs) + self.pos(torch.arange(t, device=inputs.device))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        x = self.embed(inputs)
        for i, block in enumerate(self.blocks):
            x = block(self.resid[i](x))
        return self.head(self.norm(self.resid[self.depth](x)))

    def unembed(self, h: torch.Tensor) -> torch.Tensor:
        """The logit lens: residual states ``h`` (..., dim) through the final norm and the head."""
        return self.head(self.norm(h))


class RegressionGPT(HookedGPT):
    """``HookedGPT`` on (d + 2)-vectors (``data.regression_prompts``): ``read_in`` replaces the token table, the head
    returns one number.

    >>> g = RegressionGPT(d=4, dim=32, depth=2, heads=4, block_size=21)
    >>> g(torch.zeros(2, 21, 6)).shape
    torch.Size([2, 21, 1])
    """

    def __init__(self, d: int = 4, dim: int = 64, depth: int = 4, heads: int = 4, block_size: int = 21,
                 mlp_ratio: float = 4.0):
        super().__init__(vocab_size=1, dim=dim, depth=depth, heads=heads, block_size=block_size, mlp_ratio=mlp_ratio)
        del self.tok
        self.read_in = nn.Linear(d + 2, dim)
        nn.init.normal_(self.read_in.weight, std=0.02)
        nn.init.zeros_(self.read_in.bias)
        self.d = d

    def embed(self, inputs: torch.Tensor) -> torch.Tensor:
        t = inputs.shape[1]
        if inputs.ndim != 3 or inputs.shape[-1] != self.d + 2:
            raise ValueError(f"RegressionGPT takes (B, T, {self.d + 2}) vectors, got {tuple(inputs.shape)}")
        if t > self.block_size:
            raise ValueError(f"sequence length {t} exceeds block_size {self.block_size}")
        return self.read_in(inputs) + self.pos(torch.arange(t, device=inputs.device))


# ------------------------------------------------------------------------------------------ hooks
def head_vectors(gpt: HookedGPT, z: torch.Tensor) -> torch.Tensor:
    """Per-head outputs ``z`` (..., depth, heads, head_dim) mapped into the residual stream: (..., depth, heads, dim).

    Head h of layer l writes ``z[l, h] @ W_O^l[:, h-th block].T`` (the output bias belongs to no head).
    """
    hd = gpt.dim // gpt.heads
    w = torch.stack([b.attn.out.weight for b in gpt.blocks])  # (L, dim, heads * hd)
    w = w.view(gpt.depth, gpt.dim, gpt.heads, hd)
    return torch.einsum("...lhk,ldhk->...lhd", z, w)


@contextlib.contextmanager
def record_heads(gpt: HookedGPT, position: int = -1) -> Iterator[list[torch.Tensor]]:
    """Record every head's output at ``position`` while open: the list gets one (B, heads, head_dim) per layer
    and forward pass, in layer order (``torch.stack(rec[-depth:], 1)`` is the last pass's (B, depth, heads, hd))."""
    rec: list[torch.Tensor] = []
    handles = [b.attn.z.register_forward_hook(lambda _m, _i, out: rec.append(out[:, position].detach()))
               for b in gpt.blocks]
    try:
        yield rec
    finally:
        for h in handles:
            h.remove()


@torch.no_grad()
def mean_head_outputs(gpt: HookedGPT, inputs: torch.Tensor, position: int = -1, batch: int = 256) -> torch.Tensor:
    """Every head's mean output at ``position`` over ``inputs``: (depth, heads, head_dim)."""
    parts = []
    for s in range(0, len(inputs), batch):
        with record_heads(gpt, position) as rec:
            gpt(inputs[s:s + batch])
        parts.append(torch.stack(rec, 1))
    return torch.cat(parts).mean(0)


@contextlib.contextmanager
def patch_heads(gpt: HookedGPT, values: Mapping[tuple[int, int], torch.Tensor], position: int = -1) -> Iterator[None]:
    """Replace head ``(l, h)``'s output at ``position`` by ``values[(l, h)]`` (head_dim,) or (B, head_dim)."""
    by_layer: dict[int, dict[int, torch.Tensor]] = {}
    for (layer, head), v in values.items():
        by_layer.setdefault(int(layer), {})[int(head)] = v

    def hook(layer: int):
        def fn(_m: nn.Module, _i: tuple, out: torch.Tensor) -> torch.Tensor:
            out = out.clone()
            for head, v in by_layer[layer].items():
                out[:, position, head] = v
            return out
        return fn

    handles = [gpt.blocks[layer].attn.z.register_forward_hook(hook(layer)) for layer in by_layer]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def add_to_residual(gpt: HookedGPT, vectors: Mapping[int, torch.Tensor], position: int = -1) -> Iterator[None]:
    """Add ``vectors[l]`` (dim,) or (B, dim) to the residual stream entering block ``l`` at ``position``
    (``l = depth``: entering the final norm). Gradients flow into the vectors (learned task vectors need them)."""
    def hook(layer: int):
        def fn(_m: nn.Module, _i: tuple, out: torch.Tensor) -> torch.Tensor:
            add = torch.zeros_like(out)
            add[:, position] = vectors[layer]
            return out + add
        return fn

    bad = [k for k in vectors if not 0 <= int(k) <= gpt.depth]
    if bad:
        raise ValueError(f"add_to_residual: layers {bad} out of range 0..{gpt.depth}")
    handles = [gpt.resid[int(layer)].register_forward_hook(hook(int(layer))) for layer in vectors]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@torch.no_grad()
def residual_states(gpt: HookedGPT, inputs: torch.Tensor, position: int = -1) -> torch.Tensor:
    """The residual stream at ``position`` entering every block and the final norm: (B, depth + 1, dim)."""
    rec: list[torch.Tensor] = []
    handles = [r.register_forward_hook(lambda _m, _i, out: rec.append(out[:, position])) for r in gpt.resid]
    try:
        gpt(inputs)
    finally:
        for h in handles:
            h.remove()
    return torch.stack(rec, 1)
