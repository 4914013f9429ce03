"""Matryoshka Representation Learning (Kusupati et al. 2022, arXiv 2205.13147, §3) for a contrastive encoder.

MRL trains one embedding z in R^D so that every prefix z[:m], m in a nested set M, is an embedding of its
own: the training loss is the sum over m of the loss computed on the prefixes (relative importance c_m = 1).
For a bi-encoder trained with in-batch negatives (InfoNCE, van den Oord et al. 2018) that is

    L_MRL = sum_{m in M} c_m * CE( cos(q_i[:m], d_j[:m]) / tau ,  j = i )

with the cosine taken after truncating (each prefix is renormalised). M = (D,) is the plain contrastive loss.

    >>> q, d = torch.eye(4), torch.eye(4)
    >>> total, parts = mrl_infonce(q, d, (2, 4), temperature=0.05)
    >>> sorted(parts), bool(parts[4] < parts[2])
    ([2, 4], True)
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch.nn import functional as F

__all__ = ["check_nesting", "doubling", "truncate", "infonce", "mrl_infonce"]


def doubling(dim: int, smallest: int) -> tuple[int, ...]:
    """``smallest, 2 * smallest, ...`` up to ``dim`` (always ending at ``dim``).

    >>> doubling(64, 8), doubling(768, 64)
    ((8, 16, 32, 64), (64, 128, 256, 512, 768))
    """
    out, m = [], smallest
    while m < dim:
        out.append(m)
        m *= 2
    return (*out, dim)


def check_nesting(nesting: Sequence[int], dim: int) -> tuple[int, ...]:
    """The sizes M as an increasing tuple inside [1, dim]; raises ValueError naming the bad value."""
    ms = tuple(int(m) for m in nesting)
    if not ms or any(m < 1 or m > dim for m in ms) or list(ms) != sorted(set(ms)):
        raise ValueError(f"nesting must be increasing sizes in [1, {dim}] (the embedding size), got {list(nesting)}")
    return ms


def truncate(z: torch.Tensor, m: int | None) -> torch.Tensor:
    """The Matryoshka embedding of size ``m``: the first ``m`` coordinates of ``z`` (all when None)."""
    if m is None:
        return z
    if not 1 <= m <= z.shape[-1]:
        raise ValueError(f"cannot truncate a {z.shape[-1]}-dim embedding to {m}; pick 1 <= m <= {z.shape[-1]}")
    return z[..., :m]


def infonce(q: torch.Tensor, d: torch.Tensor, temperature: float) -> torch.Tensor:
    """In-batch InfoNCE: row i of ``q`` must pick row i of ``d`` among all rows, by cosine / temperature."""
    logits = F.normalize(q, dim=-1) @ F.normalize(d, dim=-1).T / temperature
    return F.cross_entropy(logits, torch.arange(len(q), device=q.device))


def mrl_infonce(q: torch.Tensor, d: torch.Tensor, nesting: Sequence[int], temperature: float,
                weights: Sequence[float] | None = None) -> tuple[torch.Tensor, dict[int, torch.Tensor]]:
    """``(sum_m c_m * infonce(q[:, :m], d[:, :m]), {m: the term of m})`` (module docstring)."""
    weights = [1.0] * len(nesting) if weights is None else list(weights)
    if len(weights) != len(nesting):
        raise ValueError(f"{len(weights)} relative importances for {len(nesting)} nesting sizes {list(nesting)}")
    parts = {int(m): infonce(truncate(q, m), truncate(d, m), temperature) for m in nesting}
    total = sum(c * parts[int(m)] for m, c in zip(nesting, weights, strict=True))
    return total, parts
