"""Exact constructions: sparse inner products as MaxSim (non-negative) and Signed MaxSim (any sign).

The paper proves that MaxSim replicates <u, v> for non-negative k-sparse u, v of any dimension with
O(k) token vectors, and Signed MaxSim for any real k-sparse u, v. Its own construction could not be
read here; this one is ours and satisfies the same statement (checked exactly in the tests and in
``reproduce``). Coordinate i with value a becomes a 4-d token; for a document with values v_j,

    query token  q(i, a) = a * [1, -i^2, 2i, -1]
    doc token    d(j, v) = [v, M, M j, M j^2],   M = max_j v_j,   plus one zero token,

so <q(i, a), d(j, v)> = a (v - M (i - j)^2): a * v_i when j = i and <= 0 otherwise (a >= 0), and the
zero token makes the max 0 when i is not in the document. Hence MaxSim(Q(u), D(v)) = <u, v>, with k
query tokens and k + 1 document tokens. Signed: coordinate i of v is stored at index 2i when
positive and 2i + 1 (magnitude) when negative; Q+ holds u_i > 0 at 2i and u_i < 0 at 2i + 1 (with
|u_i|), Q- the other index of each, so MaxSim(Q+, D) - MaxSim(Q-, D) = <u+, v+> + <u-, v-> -
<u+, v-> - <u-, v+> = <u, v>, with 2k query and k + 1 document tokens.
"""
from __future__ import annotations

import torch

__all__ = ["encode_sparse", "encode_sparse_query", "encode_sparse_doc", "maxsim_exact", "random_sparse"]


def encode_sparse_query(indices: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Query tokens (k, 4) of a non-negative sparse vector (float64)."""
    i, a = indices.double(), values.double()
    return a[:, None] * torch.stack([torch.ones_like(i), -i ** 2, 2 * i, -torch.ones_like(i)], 1)


def encode_sparse_doc(indices: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Document tokens (k + 1, 4) of a non-negative sparse vector (float64), the last one zero."""
    j, v = indices.double(), values.double()
    m = float(v.max()) if len(v) else 0.0
    tokens = torch.stack([v, torch.full_like(j, m), m * j, m * j ** 2], 1)
    return torch.cat([tokens, tokens.new_zeros(1, 4)])


def encode_sparse(indices: torch.Tensor, values: torch.Tensor, role: str, signed: bool = False):
    """Tokens of a sparse vector for MaxSim (``signed=False``, values >= 0) or Signed MaxSim.

    ``role`` is "query" or "doc". Signed queries return ``(Q+, Q-)``; everything else one tensor.

    >>> q = encode_sparse(torch.tensor([3, 7]), torch.tensor([2.0, 1.0]), "query")
    >>> d = encode_sparse(torch.tensor([7, 9]), torch.tensor([4.0, 5.0]), "doc")
    >>> maxsim_exact(q, d)
    4.0
    """
    if role not in ("query", "doc"):
        raise ValueError(f"role must be 'query' or 'doc', got {role!r}")
    if not signed:
        if bool((values < 0).any()):
            raise ValueError("plain MaxSim needs non-negative values; use signed=True")
        return encode_sparse_query(indices, values) if role == "query" else encode_sparse_doc(indices, values)
    pos = values > 0
    slot = 2 * indices + (~pos).long()  # 2i for positive values, 2i + 1 for negative ones
    if role == "doc":
        return encode_sparse_doc(slot, values.abs())
    other = 2 * indices + pos.long()
    return encode_sparse_query(slot, values.abs()), encode_sparse_query(other, values.abs())


def maxsim_exact(q: torch.Tensor, d: torch.Tensor) -> float:
    """sum_i max_j <q_i, d_j> of one query and one document (float64)."""
    return float((q.double() @ d.double().T).amax(1).sum())


def random_sparse(n: int, k: int, signed: bool, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A random k-sparse vector of dimension n: (indices, values), values in (0, 1] or [-1, 1]."""
    idx = torch.randperm(n, generator=g)[:k]
    vals = torch.rand(k, generator=g, dtype=torch.float64)
    vals = (vals * 2 - 1) if signed else vals.clamp_min(1e-3)
    return idx, vals
