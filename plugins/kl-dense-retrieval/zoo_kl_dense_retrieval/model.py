"""Multivariate representation learning (MRL) for dense retrieval, and its dot-product baseline.

Zamani & Bendersky, "Multivariate Representation Learning for Information Retrieval", SIGIR 2023
(arXiv 2304.14522). A query and a document are each a k-variate normal with diagonal covariance,
N(mu, diag(var)), produced by the encoder's mean and variance heads; relevance is the negative KL
divergence of the query's distribution from the document's:

    score(q, d) = -KL(q || d)
                = -1/2 [ sum log var_d - sum log var_q - k + sum var_q / var_d + sum (mu_q - mu_d)^2 / var_d ].

The paper rewrites it as one inner product so that any maximum-inner-product (ANN) index
retrieves by it. Expanding the square gives, exactly,

    query:    u = [1, sum log var_q + k, var_q + mu_q^2, mu_q]                        (2k + 2 values)
    document: v = 1/2 [-sum (log var_d + mu_d^2 / var_d), 1, -1 / var_d, 2 mu_d / var_d]
    <u, v> = -KL(q || d).

(The paper's printed rewrite carries an error that the reproduction study of Sidiropoulos et al.,
TMLR 2025, points out and fixes; this is the corrected form, with the two k-vectors var_q and mu_q^2 that meet the same
document entry -1/var_d merged into one, and the query-only terms kept so the product is the
score itself, not only rank-equivalent.) With k = D/2 - 1 the index vector has the D values of a
D-dim dot-product model (the paper's "same size" comparison).

Heads: a linear mean head and a linear variance head followed by softplus, no biases, one encoder
shared by queries and documents (the full paper text could not be read here; these choices and
softplus beta = 2.5 follow the public code of the reproduction study cited above). Here the
encoder's output is a frozen sentence vector (all-MiniLM-L6-v2 in ``zoo_task_retrieval.task``'s wiki
corpus), so both heads read the same pooled vector (the paper's encoder reads the variance from a
second special [VAR] token, which a frozen encoder cannot provide).
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["gaussian_kl_score", "ann_query_vectors", "ann_doc_vectors", "MultivariateRetriever", "DotRetriever",
           "kl_dense_retrieval", "dot_dense_retrieval", "MIN_VAR"]

MIN_VAR = 1e-6  # floor on variances before division and log (numerical guard, not in the paper)


def gaussian_kl_score(mu_q: torch.Tensor, var_q: torch.Tensor, mu_d: torch.Tensor, var_d: torch.Tensor) -> torch.Tensor:
    """-KL(N(mu_q, var_q) || N(mu_d, var_d)) for every query/document pair: (Bq, k) x (Bd, k) -> (Bq, Bd).

    >>> z = torch.zeros(1, 1); o = torch.ones(1, 1)
    >>> round(gaussian_kl_score(z, o, z, 4 * o).item(), 4)   # -1/2 (log 4 - 1 + 1/4)
    -0.3181
    """
    var_q, var_d = var_q.clamp_min(MIN_VAR), var_d.clamp_min(MIN_VAR)
    inv_d = 1.0 / var_d
    k = mu_q.shape[-1]
    log_det = var_d.log().sum(-1)[None, :] - var_q.log().sum(-1)[:, None] - k
    trace = var_q @ inv_d.T
    # sum_i (mu_q - mu_d)^2 / var_d expanded, so no (Bq, Bd, k) tensor is built
    maha = (mu_q ** 2) @ inv_d.T - 2 * mu_q @ (mu_d * inv_d).T + (mu_d ** 2 * inv_d).sum(-1)[None, :]
    return -0.5 * (log_det + trace + maha)


def ann_query_vectors(mu: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    """The query side of the exact inner-product rewrite: (B, k) -> (B, 2k + 2)."""
    var = var.clamp_min(MIN_VAR)
    const = var.log().sum(-1, keepdim=True) + mu.shape[-1]
    return torch.cat([torch.ones_like(const), const, var + mu ** 2, mu], -1)


def ann_doc_vectors(mu: torch.Tensor, var: torch.Tensor) -> torch.Tensor:
    """The document side of the rewrite: (B, k) -> (B, 2k + 2); ``<u, v> = -KL(q || d)``."""
    var = var.clamp_min(MIN_VAR)
    inv = 1.0 / var
    prior = -(var.log() + mu ** 2 * inv).sum(-1, keepdim=True)
    return 0.5 * torch.cat([prior, torch.ones_like(prior), -inv, 2 * mu * inv], -1)


def _pool(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """(B, F) features as they are; (B, L, F) token sets mean-pooled over the valid tokens."""
    if x.ndim == 2:
        return x
    m = (mask if mask is not None else torch.ones(x.shape[:2], dtype=torch.bool)).unsqueeze(-1).to(x.dtype)
    return (x * m).sum(1) / m.sum(1).clamp_min(1)


class _ContrastiveMixin:
    """The paper's training loss (Tevatron's default): softmax cross-entropy over raw scores / ``temperature``."""

    temperature: float

    def loss(self, q_enc: torch.Tensor, d_enc: torch.Tensor, target: torch.Tensor, ignore: torch.Tensor) -> torch.Tensor:
        s = self.score(q_enc, d_enc) / self.temperature
        return F.cross_entropy(s.masked_fill(ignore, float("-inf")), target)


class MultivariateRetriever(_ContrastiveMixin, nn.Module):
    """Queries and documents as diagonal Gaussians; score = -KL(q || d); search by MIPS on ANN vectors.

    Args:
        in_dim: size of the encoder output (the task's wiki sentence vectors: 384).
        dim: k, the number of Gaussian dimensions; the index vector has 2k + 2 values.
        beta: softplus sharpness of the variance head (var = softplus_beta(W_var h)).
        temperature: the loss divides scores by it (1: the raw -KL, as in the paper).

    ``encode_queries``/``encode_docs`` return ``[mu, var]`` (B, 2k) (training scores them with
    ``score``: the closed-form -KL); ``build_index``/``search`` put the ANN vectors in a faiss
    inner-product index, so retrieval is plain MIPS. ``model(x, mask)`` returns documents' index
    vectors (the task's forward contract).
    """

    kind = "single"
    default_corpus = "wiki"

    def __init__(self, in_dim: int = 384, dim: int = 63, beta: float = 2.5, temperature: float = 1.0) -> None:
        super().__init__()
        self.dim, self.beta, self.temperature = dim, beta, temperature
        self.mean = nn.Linear(in_dim, dim, bias=False)
        self.var = nn.Linear(in_dim, dim, bias=False)

    def distribution(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(mu, var)`` (B, k) each, of encoder outputs ``h`` (B, in_dim)."""
        return self.mean(h), F.softplus(self.var(h), beta=self.beta)

    def _encode(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat(self.distribution(x.to(self.mean.weight.dtype)), -1)

    encode_queries = encode_docs = _encode

    def split(self, enc: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``[mu, var]`` (B, 2k) -> ``(mu, var)``."""
        return enc[:, : self.dim], enc[:, self.dim:]

    def score(self, q_enc: torch.Tensor, d_enc: torch.Tensor) -> torch.Tensor:
        """-KL(q || d) of encoded queries (Bq, 2k) against encoded documents (Bd, 2k): (Bq, Bd)."""
        return gaussian_kl_score(*self.split(q_enc), *self.split(d_enc))

    def to_ann_vector(self, x: torch.Tensor, role: str) -> torch.Tensor:
        """Index vectors (B, 2k + 2) of encoder outputs ``x`` (B, in_dim), ``role`` "query" or "doc"."""
        if role not in ("query", "doc"):
            raise ValueError(f"role must be 'query' or 'doc', got {role!r}")
        mu, var = self.distribution(x.to(self.mean.weight.dtype))
        return ann_query_vectors(mu, var) if role == "query" else ann_doc_vectors(mu, var)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.to_ann_vector(_pool(x, mask), "doc")

    def build_index(self, docs: torch.Tensor) -> Any:
        import faiss

        vecs = self.to_ann_vector(docs, "doc").detach().float().contiguous().numpy()
        index = faiss.IndexFlatIP(vecs.shape[1])
        index.add(vecs)
        return index

    def search(self, index: Any, queries: torch.Tensor, k: int) -> Any:
        from zoo_task_retrieval.task import SearchResult

        s, i = index.search(self.to_ann_vector(queries, "query").detach().float().contiguous().numpy(), k)
        return SearchResult(torch.from_numpy(i).long(), torch.from_numpy(s), torch.full((len(queries),), index.ntotal))


class DotRetriever(_ContrastiveMixin, nn.Module):
    """The paper's baseline: a dot-product bi-encoder head of ``dim`` values (linear, no bias, shared).

    ``score(q, d) = <W h_q, W h_d>`` (``normalize=True``: of the L2-normalised encodings, i.e. cosine,
    as the sentence encoder itself was trained, at temperature 0.05); the task searches its encodings
    exactly with faiss.
    """

    kind = "single"
    default_corpus = "wiki"

    def __init__(self, in_dim: int = 384, dim: int = 128, normalize: bool = True, temperature: float = 0.05) -> None:
        super().__init__()
        self.normalize, self.temperature = normalize, temperature
        self.proj = nn.Linear(in_dim, dim, bias=False)

    def _encode(self, x: torch.Tensor) -> torch.Tensor:
        z = self.proj(x.float())
        return F.normalize(z, dim=-1) if self.normalize else z

    encode_queries = encode_docs = _encode

    def score(self, q_enc: torch.Tensor, d_enc: torch.Tensor) -> torch.Tensor:
        return q_enc @ d_enc.T

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self._encode(_pool(x, mask))


def kl_dense_retrieval(in_dim: int = 384, dim: int = 63, beta: float = 2.5, temperature: float = 1.0) -> MultivariateRetriever:
    """Builder of ``kl_dense_retrieval``: Gaussian heads with k = 63 (128-value index vectors)."""
    return MultivariateRetriever(in_dim, dim, beta, temperature)


def dot_dense_retrieval(in_dim: int = 384, dim: int = 128, normalize: bool = True,
                        temperature: float = 0.05) -> DotRetriever:
    """Builder of ``dot_dense_retrieval``: the equal-size (128-d) dot-product baseline."""
    return DotRetriever(in_dim, dim, normalize, temperature)
