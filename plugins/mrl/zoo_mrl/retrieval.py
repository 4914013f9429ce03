"""Adaptive retrieval with Matryoshka embeddings: shortlist with a few dimensions, rerank with more.

Kusupati et al. 2022, Section 5.3 ("Adaptive Retrieval"): retrieve a shortlist of ``k_shortlist``
neighbours with the first ``shortlist_dim`` coordinates (cheap), then reorder that shortlist with
the first ``rerank_dim`` coordinates (the full embedding by default) and keep the top ``k``.
"""
from __future__ import annotations

import torch
from torch.nn import functional as F

__all__ = ["adaptive_retrieve", "knn"]

METRICS = ("l2", "cosine")


def _scores(q: torch.Tensor, d: torch.Tensor, metric: str) -> torch.Tensor:
    """Distances between rows of ``q`` and ``d``, smaller is closer: (..., Q, D) x (..., N, D) -> (..., Q, N)."""
    if metric == "cosine":
        return -F.normalize(q, dim=-1) @ F.normalize(d, dim=-1).transpose(-1, -2)
    return torch.cdist(q, d)


def _check(metric: str, size: int, dim: int, what: str) -> None:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if not 1 <= size <= dim:
        raise ValueError(f"{what}={size} must be in [1, {dim}] (the embedding size)")


def knn(query_emb: torch.Tensor, db_emb: torch.Tensor, k: int, dim: int | None = None, metric: str = "l2",
        chunk: int = 1024) -> torch.Tensor:
    """Exact k nearest neighbours of each query using the first ``dim`` coordinates: indices (Q, k)."""
    dim = dim or db_emb.shape[1]
    _check(metric, dim, db_emb.shape[1], "dim")
    if not 1 <= k <= len(db_emb):
        raise ValueError(f"k={k} must be in [1, {len(db_emb)}] (the database size)")
    db = db_emb[:, :dim]
    return torch.cat([_scores(q[:, :dim], db, metric).topk(k, dim=1, largest=False).indices
                      for q in query_emb.split(chunk)])


@torch.no_grad()
def adaptive_retrieve(query_emb: torch.Tensor, db_emb: torch.Tensor, shortlist_dim: int, k_shortlist: int,
                      rerank_dim: int | None = None, k: int = 10, metric: str = "l2",
                      chunk: int = 1024) -> torch.Tensor:
    """Shortlist ``k_shortlist`` neighbours with ``shortlist_dim`` dims, rerank them with ``rerank_dim`` dims.

    Args:
        query_emb: (Q, D) Matryoshka embeddings of the queries.
        db_emb: (N, D) Matryoshka embeddings of the database.
        shortlist_dim: coordinates used for the shortlist (``D_s``).
        k_shortlist: shortlist length (``k <= k_shortlist <= N``).
        rerank_dim: coordinates used to rerank (``D_r``); None means all ``D``.
        k: neighbours returned.
        metric: "l2" (Euclidean) or "cosine" (each truncation normalised on its own).
        chunk: queries scored at a time, to bound memory at ``chunk * N`` scores.

    Returns:
        (Q, k) database indices, nearest first by the rerank distance.

    >>> idx = adaptive_retrieve(q, db, shortlist_dim=16, k_shortlist=200, k=10)  # doctest: +SKIP
    """
    n, d = db_emb.shape
    rerank_dim = rerank_dim or d
    _check(metric, rerank_dim, d, "rerank_dim")
    if query_emb.ndim != 2 or query_emb.shape[1] != d:
        raise ValueError(f"query_emb must be (Q, {d}) like db_emb, got {tuple(query_emb.shape)}")
    if not 1 <= k <= k_shortlist <= n:
        raise ValueError(f"need 1 <= k ({k}) <= k_shortlist ({k_shortlist}) <= database size ({n})")
    out = []
    for q in query_emb.split(chunk):
        short = knn(q, db_emb, k_shortlist, dim=shortlist_dim, metric=metric, chunk=chunk)  # (q, K)
        cand = db_emb[short, :rerank_dim]  # (q, K, D_r)
        dist = _scores(q[:, None, :rerank_dim], cand, metric).squeeze(1)  # (q, K)
        out.append(short.gather(1, dist.topk(k, dim=1, largest=False).indices))
    return torch.cat(out)
