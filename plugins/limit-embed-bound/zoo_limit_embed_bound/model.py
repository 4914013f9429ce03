"""LIMIT's free-embedding experiment and a single-vector encoder (Weller et al. 2025, arXiv 2508.21038).

Section 4 of the paper ("best case" free embeddings): for ``n`` documents and ``k = 2``, the qrel
matrix ``A`` holds one query per k-subset of the documents (``m = C(n, k)`` rows, ``k`` ones each).
Query and document vectors of dimension ``d`` are free parameters, optimised directly on ``A`` with
Adam and the multi-positive InfoNCE loss over all documents

    L = -1/m sum_i log( sum_{r in R_i} exp(<q_i, d_r> / tau) / sum_{j} exp(<q_i, d_j> / tau) ),

the vectors re-normalised to the unit sphere after each update, stopping early at 100% accuracy
(every query's top-k is exactly its k relevant docs) or after ``patience`` steps without a lower
loss. For each ``d``, ``n`` is increased until 100% accuracy is no longer reached: the last
``n`` that was solved is the *critical n* of ``d``. Theorem (sec. 3): the top-k subsets realisable
in ``d`` dimensions are bounded via the sign-rank of ``2A - 1`` (rank_± (2A - 1) - 1 <= d), so the
critical n is finite for each ``d`` and grows with it; the paper fits a cubic in ``d``.
"""
from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_retrieval.data import VectorSets

log = logging.getLogger(__name__)

__all__ = ["all_k_subsets_qrels", "topk_accuracy", "FreeEmbeddingResult", "optimise_free_embeddings",
           "critical_n", "fit_polynomial", "SingleVector", "single_vector"]


def all_k_subsets_qrels(n: int, k: int = 2) -> torch.Tensor:
    """The (C(n, k), n) 0/1 qrel matrix with one row per k-subset of ``n`` documents.

    >>> all_k_subsets_qrels(3).tolist()
    [[1.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    """
    rows = list(itertools.combinations(range(n), k))
    a = torch.zeros(len(rows), n)
    for i, r in enumerate(rows):
        a[i, list(r)] = 1.0
    return a


def topk_accuracy(scores: torch.Tensor, qrels: torch.Tensor) -> float:
    """Fraction of queries whose top-|R_i| docs are exactly their relevant set R_i (ties count as errors).

    >>> topk_accuracy(torch.tensor([[3., 2., 1.], [1., 2., 3.]]), torch.tensor([[1., 1., 0.], [1., 1., 0.]]))
    0.5
    """
    rel = qrels > 0
    worst_rel = scores.masked_fill(~rel, math.inf).amin(1)
    best_irrel = scores.masked_fill(rel, -math.inf).amax(1)
    return float((worst_rel > best_irrel).float().mean())


@dataclass
class FreeEmbeddingResult:
    """Outcome of one free-embedding optimisation: ``accuracy`` (top-k exact), steps run, the vectors."""

    accuracy: float
    steps: int
    queries: torch.Tensor
    docs: torch.Tensor

    @property
    def solved(self) -> bool:
        return self.accuracy >= 1.0


def _infonce(scores: torch.Tensor, rel: torch.Tensor, temperature: float, pooled: bool = False) -> torch.Tensor:
    """Multi-positive InfoNCE over all docs: each relevant doc is a target (``pooled``: the sum inside the log)."""
    logits = scores / temperature
    lse = logits.logsumexp(1)
    if pooled:
        return (lse - logits.masked_fill(~rel, -math.inf).logsumexp(1)).mean()
    nll = (lse[:, None] - logits) * rel
    return (nll.sum(1) / rel.sum(1)).mean()


def optimise_free_embeddings(qrels: torch.Tensor, dim: int, *, max_steps: int = 5000, patience: int = 1000,
                             lr: float = 0.01, temperature: float = 0.1, pooled: bool = False,
                             seed: int = 0) -> FreeEmbeddingResult:
    """Optimise free query/doc vectors of dimension ``dim`` on ``qrels`` (the paper's best case, sec. 4).

    Adam on the multi-positive InfoNCE loss over every document, full batch, unit-norm projection
    after each step; stops at 100% top-k accuracy, after ``patience`` steps without a better
    loss (relative improvement < 1e-4), or at ``max_steps``; ``accuracy`` is the best seen.
    Initialisation: standard normal vectors, normalised.

    >>> optimise_free_embeddings(all_k_subsets_qrels(4), dim=4, max_steps=500).solved
    True
    """
    g = torch.Generator().manual_seed(seed)
    q = nn.Parameter(F.normalize(torch.randn(qrels.shape[0], dim, generator=g), dim=-1))
    d = nn.Parameter(F.normalize(torch.randn(qrels.shape[1], dim, generator=g), dim=-1))
    opt = torch.optim.Adam([q, d], lr=lr)
    rel = qrels > 0
    best, best_loss, since, step = 0.0, math.inf, 0, 0
    for step in range(1, max_steps + 1):  # noqa: B007 (the step count is returned)
        loss = _infonce(q @ d.T, rel, temperature, pooled)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            q.copy_(F.normalize(q, dim=-1))
            d.copy_(F.normalize(d, dim=-1))
            best = max(best, topk_accuracy(q @ d.T, qrels))
        if loss.item() < best_loss * (1 - 1e-4):
            best_loss, since = loss.item(), 0
        else:
            since += 1
        if best >= 1.0 or since >= patience:
            break
    return FreeEmbeddingResult(best, step, q.detach(), d.detach())


def critical_n(dim: int, *, k: int = 2, n_start: int | None = None, n_max: int = 200,
               **opt_kw: float) -> tuple[int, dict[int, float]]:
    """The largest ``n`` whose all-k-subsets qrel matrix free ``dim``-dim embeddings solve (sec. 4).

    ``n`` starts at ``n_start`` (default ``k + 1``) and grows by one until an optimisation fails to
    reach 100% accuracy; returns that critical n (the last solved) and the accuracy of each n tried.

    >>> critical_n(2, max_steps=400, patience=200)[0] >= 3
    True
    """
    n = n_start or k + 1
    tried: dict[int, float] = {}
    while n <= n_max:
        res = optimise_free_embeddings(all_k_subsets_qrels(n, k), dim, **opt_kw)
        tried[n] = res.accuracy
        log.info("d=%d n=%d accuracy=%.4f steps=%d", dim, n, res.accuracy, res.steps)
        if not res.solved:
            return n - 1, tried
        n += 1
    return n_max, tried


def fit_polynomial(ds: list[float], ys: list[float], degree: int = 3) -> list[float]:
    """Least-squares polynomial coefficients (constant first) of ``ys`` against ``ds`` (the paper: cubic).

    >>> [round(c, 6) for c in fit_polynomial([0, 1, 2, 3], [1, 2, 5, 10], degree=2)]
    [1.0, 0.0, 1.0]
    """
    x = torch.tensor(ds, dtype=torch.float64)
    v = torch.stack([x ** p for p in range(degree + 1)], 1)
    coef = torch.linalg.lstsq(v, torch.tensor(ys, dtype=torch.float64)[:, None]).solution[:, 0]
    return coef.tolist()


class SingleVector(nn.Module):
    """A single-vector encoder of dimension ``dim``: normalise(W · mean(valid token vectors)).

    The class of models LIMIT stress-tests (one vector per text, inner-product search); it reads
    token sets and returns one (B, dim) vector, so the retrieval task searches it exactly.

    >>> m = SingleVector(in_dim=4, dim=2)
    >>> m(torch.ones(3, 5, 4), torch.ones(3, 5, dtype=torch.bool)).shape
    torch.Size([3, 2])
    """

    kind = "multi"

    def __init__(self, in_dim: int = 64, dim: int = 8) -> None:
        super().__init__()
        self.proj = nn.Linear(in_dim, dim, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        m = mask.unsqueeze(-1).to(x.dtype)
        return F.normalize(self.proj((x * m).sum(1) / m.sum(1).clamp_min(1)), dim=-1)

    def _encode(self, sets: VectorSets) -> torch.Tensor:
        x, mask = sets.padded(dtype=torch.float32)
        return self(x, mask)

    encode_docs = _encode
    encode_queries = _encode


def single_vector(in_dim: int = 64, dim: int = 8) -> SingleVector:
    """Builder of ``limit_single_vector``."""
    return SingleVector(in_dim, dim)
