"""FLOPs-regularised sparse embeddings and the inverted index that retrieves with them.

Paria, Yeh, Yen, Xu, Ravikumar, Poczos, "Minimizing FLOPs to Learn Efficient Sparse
Representations", ICLR 2020 (arXiv 2004.05665). With non-negative sparse embeddings stored in an
inverted index (one posting list per dimension), scoring a query costs one multiplication per
(query non-zero j, document in posting list j) pair. If dimension j is active with probability
p_j, the expected cost over N documents is N * sum_j p_j^2 (Sec. 3): for a given number of
non-zeros per vector it is smallest when they are spread evenly over the dimensions, where it
falls quadratically with sparsity. The paper trains the embeddings with a metric-learning loss
plus a continuous relaxation of that cost over a batch of B embeddings a_i (Sec. 4):

    FLOPs(a) = sum_j ( (1/B) sum_i |a_ij| )^2

(L1 regularisation, the baseline, is (1/B) sum_i sum_j |a_ij|). Architecture as in the paper's
face models: the encoder's features -> a high-dimensional linear layer (D = 1024) -> ReLU -> L2
normalisation; the regulariser acts on the normalised embeddings, its weight ramps up as
lambda * min(1, (t / T)^2) over the first T steps (the authors' "dynamic_4" schedule). The
metric-learning loss here is the retrieval task's in-batch contrastive loss (cosine / 0.05) on
query-document pairs (the paper uses ArcFace on face identities; retrieval pairs have no classes).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["flops_regularizer", "l1_regularizer", "expected_flops", "query_flops", "InvertedIndex", "SparseEmbedder",
           "flops_sparse_embed", "REGULARIZERS", "ACTIVATIONS"]

REGULARIZERS = ("flops", "l1", "none")
ACTIVATIONS = ("relu", "log1p")


def flops_regularizer(a: torch.Tensor) -> torch.Tensor:
    """The paper's FLOPs relaxation of a batch (B, D): sum_j (mean_i |a_ij|)^2.

    >>> flops_regularizer(torch.tensor([[1.0, 0.0], [0.0, 1.0]])).item()   # (1/2)^2 + (1/2)^2
    0.5
    """
    return a.abs().mean(0).pow(2).sum()


def l1_regularizer(a: torch.Tensor) -> torch.Tensor:
    """The L1 baseline of a batch (B, D): mean_i sum_j |a_ij|.

    >>> l1_regularizer(torch.tensor([[1.0, 0.0], [0.0, 1.0]])).item()
    1.0
    """
    return a.abs().sum(1).mean()


def expected_flops(docs: torch.Tensor) -> float:
    """The paper's expected cost per query, N * sum_j p_j^2, with p_j the fraction of ``docs`` active in j."""
    p = (docs != 0).float().mean(0)
    return float(len(docs) * p.pow(2).sum())


def query_flops(queries: torch.Tensor, docs_per_dim: torch.Tensor) -> torch.Tensor:
    """Exact multiplications an inverted index does for each query: sum over its non-zeros j of |posting list j|.

    >>> query_flops(torch.tensor([[1.0, 0.0, 2.0]]), torch.tensor([5, 7, 1])).tolist()
    [6.0]
    """
    return (queries != 0).float() @ docs_per_dim.float()


class InvertedIndex:
    """Documents' sparse embeddings, one posting list per dimension (scipy CSC: column j = list j)."""

    def __init__(self, docs: torch.Tensor) -> None:
        import scipy.sparse as sp

        self.csc = sp.csc_matrix(docs.detach().float().numpy())  # (N, D)
        self.docs_per_dim = torch.from_numpy(self.csc.getnnz(axis=0)).long()
        self.n_docs = docs.shape[0]

    def __len__(self) -> int:
        return self.n_docs

    @property
    def nbytes(self) -> int:
        return int(self.csc.data.nbytes + self.csc.indices.nbytes + self.csc.indptr.nbytes)

    def scores(self, queries: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(Q, N) inner products by sparse x sparse product, and the docs each query touched (Q,)."""
        import scipy.sparse as sp

        prod = sp.csr_matrix(queries.detach().float().numpy()) @ self.csc.T.tocsc()  # (Q, N) sparse
        touched = torch.from_numpy(prod.getnnz(axis=1)).long()
        return torch.from_numpy(prod.toarray()), touched


class SparseEmbedder(nn.Module):
    """High-dimensional sparse embeddings of encoder features, trained with a FLOPs (or L1) regulariser.

    Args:
        in_dim: encoder feature size (the task's wiki sentence vectors: 384).
        dim: embedding size D (the paper: 512-1024).
        regularizer: "flops" (the paper), "l1" (baseline) or "none".
        lam: regulariser weight lambda (reached after ``ramp_steps``).
        ramp_steps: T of the quadratic ramp lambda * min(1, (t / T)^2); 0 switches it off.
        activation: "relu" (the paper) or "log1p" (log(1 + relu), the log-saturated variant of later
            sparse retrievers).
        normalize: L2-normalise the embeddings (the paper's face models do).
        temperature: of the in-batch contrastive loss (cosine / temperature).

    ``encode_queries``/``encode_docs`` give (B, D) non-negative sparse vectors; ``build_index``/
    ``search`` score them through an ``InvertedIndex``.
    """

    kind = "single"
    default_corpus = "wiki"

    def __init__(self, in_dim: int = 384, dim: int = 1024, regularizer: str = "flops", lam: float = 1.0,
                 ramp_steps: int = 300, activation: str = "relu", normalize: bool = True,
                 temperature: float = 0.05) -> None:
        super().__init__()
        if regularizer not in REGULARIZERS:
            raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {regularizer!r}")
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {ACTIVATIONS}, got {activation!r}")
        self.regularizer, self.lam, self.ramp_steps = regularizer, lam, ramp_steps
        self.activation, self.normalize, self.temperature = activation, normalize, temperature
        self.proj = nn.Linear(in_dim, dim)
        self.steps_seen = 0  # loss() calls in training mode: drives the lambda ramp

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """(B, in_dim) features -> (B, D) non-negative embeddings."""
        a = F.relu(self.proj(x.float()))
        if self.activation == "log1p":
            a = torch.log1p(a)
        return F.normalize(a, dim=-1) if self.normalize else a

    encode_queries = encode_docs = embed

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if x.ndim == 3:  # a token set: mean of the valid vectors
            m = (mask if mask is not None else torch.ones(x.shape[:2], dtype=torch.bool)).unsqueeze(-1).to(x.dtype)
            x = (x * m).sum(1) / m.sum(1).clamp_min(1)
        return self.embed(x)

    def current_lambda(self) -> float:
        """lambda * min(1, (t / T)^2) at the current training step t."""
        if self.ramp_steps <= 0:
            return self.lam
        return self.lam * min(1.0, (self.steps_seen / self.ramp_steps) ** 2)

    def penalty(self, a: torch.Tensor) -> torch.Tensor:
        """The regulariser (unweighted) of a batch of embeddings."""
        if self.regularizer == "flops":
            return flops_regularizer(a)
        if self.regularizer == "l1":
            return l1_regularizer(a)
        return a.new_zeros(())

    def loss(self, q: torch.Tensor, d: torch.Tensor, target: torch.Tensor, ignore: torch.Tensor) -> torch.Tensor:
        """In-batch contrastive loss + lambda_t * regulariser over the batch's queries and documents."""
        s = (q @ d.T / self.temperature).masked_fill(ignore, float("-inf"))
        out = F.cross_entropy(s, target) + self.current_lambda() * self.penalty(torch.cat([q, d]))
        if self.training:
            self.steps_seen += 1
        return out

    def build_index(self, docs: torch.Tensor) -> InvertedIndex:
        return InvertedIndex(self.embed(docs))

    def search(self, index: InvertedIndex, queries: torch.Tensor, k: int) -> Any:
        from zoo_task_retrieval.task import SearchResult

        scores, touched = index.scores(self.embed(queries))
        kk = min(k, scores.shape[1])
        s, i = scores.topk(kk, dim=1)
        if kk < k:
            s = torch.cat([s, s.new_full((len(s), k - kk), float("-inf"))], 1)
            i = torch.cat([i, i.new_full((len(i), k - kk), -1)], 1)
        return SearchResult(i, s, touched)


def flops_sparse_embed(in_dim: int = 384, dim: int = 1024, regularizer: str = "flops", lam: float = 1.0,
                       ramp_steps: int = 300, activation: str = "relu", normalize: bool = True,
                       temperature: float = 0.05) -> SparseEmbedder:
    """Builder of ``flops_sparse_embed``: 384 -> 1024 ReLU embeddings, FLOPs regulariser."""
    return SparseEmbedder(in_dim, dim, regularizer, lam, ramp_steps, activation, normalize, temperature)
