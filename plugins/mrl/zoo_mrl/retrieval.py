"""Adaptive retrieval with Matryoshka embeddings: shortlist with a few dimensions, rerank with more.

Kusupati et al. 2022, Section 5.3 ("Adaptive Retrieval"): retrieve a shortlist of ``k_shortlist``
neighbours with the first ``shortlist_dim`` coordinates (cheap), then reorder that shortlist with
the first ``rerank_dim`` coordinates (the full embedding by default) and keep the top ``k``. Its
cost per query is ``N * shortlist_dim + k_shortlist * rerank_dim`` multiply-adds against ``N * D``
for exact search over the full embedding (``search_flops``). ``PrefixIndex`` stores the database
prefixes normalised once, for timing the two searches on equal terms (``speedups``); ``map_at_k`` is
the paper's label-based retrieval metric (mAP@10); ``MatryoshkaProjection`` makes frozen sentence
vectors Matryoshka embeddings.
"""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.nn import functional as F

from .model import default_nesting

__all__ = ["adaptive_retrieve", "knn", "search_flops", "map_at_k", "PrefixIndex", "speedups", "MatryoshkaProjection"]

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


def search_flops(n_db: int, shortlist_dim: int, k_shortlist: int = 0, rerank_dim: int | None = None) -> int:
    """Multiply-adds per query: ``n_db * shortlist_dim`` for the shortlist, plus ``k_shortlist * rerank_dim`` to rerank.

    Exact search with ``D`` dims is ``search_flops(n_db, D)``.

    >>> search_flops(1000, 64), search_flops(1000, 8, 50, 64)
    (64000, 11200)
    """
    return n_db * shortlist_dim + (k_shortlist * rerank_dim if k_shortlist and rerank_dim else 0)


def map_at_k(ids: torch.Tensor, query_labels: torch.Tensor, db_labels: torch.Tensor, k: int = 10) -> float:
    """Mean over queries of average precision at ``k``, a retrieved item relevant when its label matches.

    AP@k = (1 / min(k, R)) * sum_{i <= k} precision@i * rel_i, with R the number of relevant items
    in the database.

    >>> round(map_at_k(torch.tensor([[0, 1, 2]]), torch.tensor([1]), torch.tensor([1, 0, 1]), k=3), 4)  # ranks 1, 3
    0.8333
    """
    ids = ids[:, :k]
    rel = (db_labels[ids] == query_labels[:, None]).float()
    precision = rel.cumsum(1) / torch.arange(1, ids.shape[1] + 1, dtype=torch.float32)
    n_rel = (db_labels[None, :] == query_labels[:, None]).sum(1).clamp(max=ids.shape[1]).clamp_min(1)
    return float(((precision * rel).sum(1) / n_rel).mean())


class PrefixIndex:
    """A database of Matryoshka embeddings with each prefix size it will be searched at, normalised once.

    ``search(q, k)`` is exact cosine search at the full size; ``adaptive(q, shortlist_dim,
    k_shortlist, k)`` shortlists at ``shortlist_dim`` and reranks at the full size. Both return the
    same ids as ``knn``/``adaptive_retrieve`` with ``metric="cosine"``, without renormalising the
    database per query, so their times compare the arithmetic of the two searches.

    >>> index = PrefixIndex(torch.randn(100, 16), dims=(4,))
    >>> index.adaptive(torch.randn(3, 16), shortlist_dim=4, k_shortlist=20, k=5).shape
    torch.Size([3, 5])
    """

    def __init__(self, db: torch.Tensor, dims: Sequence[int] = ()) -> None:
        self.dim = db.shape[1]
        self.prefix = {m: F.normalize(db[:, :m].float(), dim=-1).contiguous() for m in {*dims, self.dim}}

    def __len__(self) -> int:
        return len(self.prefix[self.dim])

    def search(self, q: torch.Tensor, k: int, dim: int | None = None, chunk: int = 256) -> torch.Tensor:
        """Exact top ``k`` (Q, k) by cosine over the first ``dim`` coordinates (all by default)."""
        dim = dim or self.dim
        db = self.prefix[dim].T
        return torch.cat([(F.normalize(c[:, :dim].float(), dim=-1) @ db).topk(k, dim=1).indices for c in q.split(chunk)])

    def adaptive(self, q: torch.Tensor, shortlist_dim: int, k_shortlist: int, k: int = 10, chunk: int = 256) -> torch.Tensor:
        """Top ``k_shortlist`` at ``shortlist_dim``, reranked at the full size: (Q, k) ids."""
        out = []
        for c in q.split(chunk):  # bounds the gathered candidates at chunk * k_shortlist * D values
            short = self.search(c, k_shortlist, shortlist_dim, chunk)  # (q, K)
            cand = self.prefix[self.dim][short]  # (q, K, D)
            scores = torch.bmm(cand, F.normalize(c.float(), dim=-1).unsqueeze(-1)).squeeze(-1)
            out.append(short.gather(1, scores.topk(k, dim=1).indices))
        return torch.cat(out)


class MatryoshkaProjection(nn.Module):
    """A linear map of frozen sentence vectors trained so every prefix is a retrieval embedding.

    ``loss`` is the MRL loss on the in-batch contrastive objective: sum over ``nesting`` of the
    cross-entropy of cos(q[:m], d[:m]) / ``temperature`` (all c_m = 1).
    """

    def __init__(self, dim: int = 384, nesting: Sequence[int] | None = None, temperature: float = 0.05) -> None:
        super().__init__()
        self.nesting, self.temperature = tuple(nesting or default_nesting(dim)), temperature
        self.proj = nn.Linear(dim, dim, bias=False)
        nn.init.eye_(self.proj.weight)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x.float())

    encode_queries = encode_docs = forward

    def loss(self, q: torch.Tensor, d: torch.Tensor, target: torch.Tensor, ignore: torch.Tensor) -> torch.Tensor:
        total = q.new_zeros(())
        for m in self.nesting:
            s = F.normalize(q[:, :m], dim=-1) @ F.normalize(d[:, :m], dim=-1).T / self.temperature
            total = total + F.cross_entropy(s.masked_fill(ignore, float("-inf")), target)
        return total


def _seconds(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def speedups(index: PrefixIndex, queries: torch.Tensor, m: int, k_shortlist: int, repeats: int,
             n_latency: int = 64) -> dict[str, float]:
    """Measured exact / adaptive time ratios, the two searches interleaved so machine load hits both alike.

    ``latency speed-up``: medians over ``n_latency`` queries searched one at a time; ``batch
    speed-up``: medians over ``repeats`` searches of the whole query set at once.
    """
    lat_e, lat_a = [], []
    for i in range(min(n_latency, len(queries))):
        q = queries[i:i + 1]
        lat_e.append(_seconds(lambda q=q: index.search(q, 10)))
        lat_a.append(_seconds(lambda q=q: index.adaptive(q, m, k_shortlist, 10)))
    bat_e, bat_a = [], []
    for _ in range(repeats):
        bat_e.append(_seconds(lambda: index.search(queries, 10)))
        bat_a.append(_seconds(lambda: index.adaptive(queries, m, k_shortlist, 10)))
    med = statistics.median
    return {"latency ms exact": 1e3 * med(lat_e), "latency ms adaptive": 1e3 * med(lat_a),
            "latency speed-up": med(lat_e) / med(lat_a), "batch speed-up": med(bat_e) / med(bat_a)}
