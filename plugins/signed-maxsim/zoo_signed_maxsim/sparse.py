"""Exact constructions: sparse inner products as MaxSim (non-negative) and Signed MaxSim (any sign).

The paper proves that MaxSim replicates <u, v> for non-negative k-sparse u, v of any dimension with
O(k) token vectors, and Signed MaxSim for any real k-sparse u, v. Its own construction could not be
read here; this one is ours and satisfies the same statement (checked in the tests and in
``reproduce``). Write index i in b = ceil(log2 n) bits and give each bit a two-slot block; for a
document with values v_j and M = max_j v_j,

    query token  q(i, a) = a * [1, x(i)],  x(i) = -(1 - onehot(bit_t(i))) over the bits t
    doc token    d(j, v) = [v, M y(j)],    y(j) = onehot(bit_t(j)) over the bits t,  plus one zero token,

so <q(i, a), d(j, v)> = a (v - M * #{bits where i and j differ}): a * v when j = i and <= 0 otherwise
(a >= 0), and the zero token makes the max 0 when i is not in the document. Hence MaxSim(Q(u), D(v))
= <u, v>, with k query and k + 1 document tokens of dimension 1 + 2b.

Why bits and not a shorter token: on a match every product but a * v is an exact zero (0 * M or
-a * 0), so the token score is fl(a * v) in any floating dtype, and MaxSim rounds exactly like a
float dot product of u and v. An earlier 4-d form, <q, d> = a (v - M (i - j)^2), cancelled terms of
size a M i^2 and was exact only in float64 (float32 errors of about 50 at n = 10^4).

Signed: coordinate i of v is stored at index 2i when positive and 2i + 1 (magnitude) when negative;
Q+ holds u_i > 0 at 2i and u_i < 0 at 2i + 1 (with |u_i|), Q- the other index of each, so
MaxSim(Q+, D) - MaxSim(Q-, D) = <u+, v+> + <u-, v-> - <u+, v-> - <u-, v+> = <u, v>, with 2k query and
k + 1 document tokens over 2n indices.
"""
from __future__ import annotations

import torch

__all__ = ["encode_sparse", "encode_sparse_query", "encode_sparse_doc", "maxsim_exact", "random_sparse", "n_bits"]


def n_bits(n: int) -> int:
    """Bits that index ``n`` coordinates (at least 1)."""
    if n < 1:
        raise ValueError(f"n (the sparse vectors' dimension) must be >= 1, got {n}")
    return max(1, (n - 1).bit_length())


def _bit_onehot(indices: torch.Tensor, bits: int, dtype: torch.dtype) -> torch.Tensor:
    """(k, 2 * bits): per bit of each index, [1, 0] for a 0 bit and [0, 1] for a 1 bit."""
    b = (indices.long()[:, None] >> torch.arange(bits)) & 1
    return torch.stack([1 - b, b], -1).flatten(1).to(dtype)


def encode_sparse_query(indices: torch.Tensor, values: torch.Tensor, n: int,
                        dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Query tokens (k, 1 + 2 ceil(log2 n)) of a non-negative sparse vector of dimension ``n``."""
    a = values.to(dtype)
    x = _bit_onehot(indices, n_bits(n), dtype) - 1
    return a[:, None] * torch.cat([torch.ones_like(a)[:, None], x], 1)


def encode_sparse_doc(indices: torch.Tensor, values: torch.Tensor, n: int,
                      dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """Document tokens (k + 1, 1 + 2 ceil(log2 n)) of a non-negative sparse vector, the last one zero."""
    v = values.to(dtype)
    m = v.max() if len(v) else v.new_zeros(())
    tokens = torch.cat([v[:, None], m * _bit_onehot(indices, n_bits(n), dtype)], 1)
    return torch.cat([tokens, tokens.new_zeros(1, tokens.shape[1])])


def encode_sparse(indices: torch.Tensor, values: torch.Tensor, role: str, n: int, signed: bool = False,
                  dtype: torch.dtype = torch.float32):
    """Tokens of a sparse vector of dimension ``n`` for MaxSim (``signed=False``, values >= 0) or Signed MaxSim.

    ``role`` is "query" or "doc"; a query and a document must be encoded with the same ``n``. Signed
    queries return ``(Q+, Q-)``; everything else one tensor, in ``dtype``.

    >>> q = encode_sparse(torch.tensor([3, 7]), torch.tensor([2.0, 1.0]), "query", n=10)
    >>> d = encode_sparse(torch.tensor([7, 9]), torch.tensor([4.0, 5.0]), "doc", n=10)
    >>> maxsim_exact(q, d)
    4.0
    """
    if role not in ("query", "doc"):
        raise ValueError(f"role must be 'query' or 'doc', got {role!r}")
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= n):
        raise ValueError(f"indices must lie in [0, {n}) (n = the vectors' dimension), got {indices.tolist()}")
    if not signed:
        if bool((values < 0).any()):
            raise ValueError("plain MaxSim needs non-negative values; use signed=True")
        enc = encode_sparse_query if role == "query" else encode_sparse_doc
        return enc(indices, values, n, dtype)
    pos = values > 0
    slot = 2 * indices + (~pos).long()  # 2i for positive values, 2i + 1 for negative ones
    if role == "doc":
        return encode_sparse_doc(slot, values.abs(), 2 * n, dtype)
    other = 2 * indices + pos.long()
    return encode_sparse_query(slot, values.abs(), 2 * n, dtype), encode_sparse_query(other, values.abs(), 2 * n, dtype)


def maxsim_exact(q: torch.Tensor, d: torch.Tensor) -> float:
    """sum_i max_j <q_i, d_j> of one query and one document, computed in the tokens' dtype."""
    return float((q @ d.T).amax(1).sum())


def random_sparse(n: int, k: int, signed: bool, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A random k-sparse vector of dimension n: (indices, values), values in (0, 1] or [-1, 1]."""
    idx = torch.randperm(n, generator=g)[:k]
    vals = torch.rand(k, generator=g, dtype=torch.float64)
    vals = (vals * 2 - 1) if signed else vals.clamp_min(1e-3)
    return idx, vals
