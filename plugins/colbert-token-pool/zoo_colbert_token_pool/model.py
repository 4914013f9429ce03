"""Clustering-based token pooling for multi-vector (ColBERT-style) indexes.

Clavié, Chaffin, Adams, "Reducing the Footprint of Multi-Vector Retrieval with Minimal Performance
Impact via Token Pooling" (arXiv 2409.14683), Section 3 (Token Pooling): at indexing time, the token
vectors of each document are grouped by hierarchical clustering with Ward linkage into
``n / pool_factor`` clusters, each cluster is replaced by the mean of its vectors, and the means are
L2-normalised again. Queries and the MaxSim scoring are unchanged. As in the authors' released
implementation, the first ``protected_tokens`` vectors (ColBERT's [CLS]/[D] positions) are kept
as they are and the cluster count is ``max(n // pool_factor, 1)`` over the remaining n vectors.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from zoo_task_retrieval.task import PaddedSets, SearchResult, VectorSets

__all__ = ["TokenPool", "RandomTokenPrune", "ward_pool", "token_pool", "token_prune"]


def ward_pool(tokens: torch.Tensor, pool_factor: int, protected_tokens: int = 1) -> torch.Tensor:
    """Pool one document's token vectors (n, d) into about n / pool_factor vectors (Ward clustering).

    >>> t = torch.nn.functional.normalize(torch.tensor([[1.0, 0], [1, 0.01], [0, 1], [0.01, 1]]), dim=-1)
    >>> ward_pool(t, 2, protected_tokens=0).shape
    torch.Size([2, 2])
    """
    import numpy as np
    from scipy.cluster.hierarchy import fcluster, linkage

    keep, rest = tokens[:protected_tokens], tokens[protected_tokens:]
    if pool_factor <= 1 or len(rest) < 2:
        return tokens
    n_clusters = max(len(rest) // pool_factor, 1)
    xg = rest.detach().to(torch.float64 if rest.dtype == torch.float64 else torch.float32).numpy()
    x = xg.astype(np.float64)
    tree = linkage(_euclidean_condensed(xg), method="ward")  # Ward on the vectors (Euclidean)
    labels = fcluster(tree, t=n_clusters, criterion="maxclust") - 1
    member = np.zeros((int(labels.max()) + 1, len(x)))
    member[labels, np.arange(len(x))] = 1.0
    means = (member @ x) / member.sum(1, keepdims=True)
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)  # renormalised
    return torch.cat([keep, torch.from_numpy(means).to(tokens.dtype)])


def _euclidean_condensed(x: Any) -> Any:
    """Condensed pairwise Euclidean distances of the rows of ``x`` (an array), what ``linkage`` computes
    from observations with scipy's ``pdist``, but from one BLAS Gram product in ``x``'s precision (float32
    token vectors: the same Ward tree on all 1000 wiki documents of the reproduction) and the rest in
    float64: pdist's loop took three quarters of the pooling time."""
    import numpy as np
    from scipy.spatial.distance import squareform

    gram = (x @ x.T).astype(np.float64)
    sq = np.diag(gram).copy()
    d2 = sq[:, None] + sq[None, :] - 2.0 * gram
    np.maximum(d2, 0.0, out=d2)
    np.fill_diagonal(d2, 0.0)
    return squareform(np.sqrt(d2, out=d2), checks=False)


class _IndexTimeReduction(nn.Module):
    """Shared shape: reduce each document's vectors at index time, then exact MaxSim search."""

    kind = "multi"

    def __init__(self, pool_factor: int = 2, protected_tokens: int = 1) -> None:
        super().__init__()
        if pool_factor < 1:
            raise ValueError(f"pool_factor must be >= 1, got {pool_factor}")
        self.pool_factor, self.protected_tokens = pool_factor, protected_tokens

    def reduce_one(self, tokens: torch.Tensor, doc_id: int) -> torch.Tensor:
        raise NotImplementedError

    def reduce(self, docs: VectorSets) -> VectorSets:
        """Every document's reduced vector set."""
        return VectorSets.from_list([self.reduce_one(docs[i], i) for i in range(len(docs))])

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """The task's forward contract: the reduced document vectors, padded, with their mask."""
        reduced = self.reduce(VectorSets.from_padded(x, mask))
        vectors, out_mask = reduced.padded()
        return {"vectors": vectors, "mask": out_mask}

    def encode_docs(self, docs: VectorSets) -> VectorSets:
        return self.reduce(docs)

    def encode_queries(self, queries: VectorSets) -> VectorSets:
        return queries  # no query-time change

    @torch.no_grad()
    def build_index(self, docs: VectorSets) -> PaddedSets:
        return PaddedSets(self.reduce(docs.to(torch.float32)))

    @torch.no_grad()
    def search(self, index: PaddedSets, queries: VectorSets, k: int) -> SearchResult:
        from zoo_task_retrieval.task import ExactMaxSim

        return ExactMaxSim().search(index, queries, k)

    def extra_repr(self) -> str:
        return f"pool_factor={self.pool_factor}, protected_tokens={self.protected_tokens}"


class TokenPool(_IndexTimeReduction):
    """Ward token pooling at ``pool_factor`` (1 = no pooling)."""

    def reduce_one(self, tokens: torch.Tensor, doc_id: int) -> torch.Tensor:
        return ward_pool(tokens, self.pool_factor, self.protected_tokens)


class RandomTokenPrune(_IndexTimeReduction):
    """Keep a random ``max(n // pool_factor, 1)`` of each document's vectors (same count as pooling)."""

    def __init__(self, pool_factor: int = 2, protected_tokens: int = 1, seed: int = 0) -> None:
        super().__init__(pool_factor, protected_tokens)
        self.seed = seed

    def reduce_one(self, tokens: torch.Tensor, doc_id: int) -> torch.Tensor:
        keep, rest = tokens[:self.protected_tokens], tokens[self.protected_tokens:]
        if self.pool_factor <= 1 or len(rest) < 2:
            return tokens
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + doc_id)
        pick = torch.randperm(len(rest), generator=g)[:max(len(rest) // self.pool_factor, 1)].sort().values
        return torch.cat([keep, rest[pick]])


def token_pool(pool_factor: int = 2, protected_tokens: int = 1) -> TokenPool:
    """Builder of ``token_pool_ward``."""
    return TokenPool(pool_factor=pool_factor, protected_tokens=protected_tokens)


def token_prune(pool_factor: int = 2, protected_tokens: int = 1, seed: int = 0) -> RandomTokenPrune:
    """Builder of ``token_prune_random``."""
    return RandomTokenPrune(pool_factor=pool_factor, protected_tokens=protected_tokens, seed=seed)


def vector_count(model: Any, docs: VectorSets) -> int:
    """Vectors stored after the model's index-time reduction."""
    return len(model.reduce(docs).vectors)
