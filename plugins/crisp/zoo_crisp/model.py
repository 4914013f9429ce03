"""CRISP: multi-vector retrieval with k-means clustering inside training (Veneroso et al. 2025, arXiv 2505.11471).

Method (the paper's abstract and catalog entry 88; the full text was not read):
a ColBERT-style encoder maps each token to a normalised vector; during
training the token vectors of each document (and optionally each query) are clustered with k-means,
either into a fixed number of centroids or into a fraction of the token count, and the contrastive
loss scores MaxSim on the centroids, so the encoder learns *clusterable* representations. The index
stores the centroids. The comparison (post-hoc clustering) trains the same encoder on full token
vectors and applies the same k-means only at indexing / query time.

Here: a small encoder over the task's input token vectors (the ``signed-maxsim`` shape: input
projection, learned positions, role marker, ``n_layers`` pre-norm layers (0: none, a per-token map), linear
head to ``out_dim``), initialised at the identity map (``zoo_task_retrieval.encoder``: identity projections,
zero positions and markers, zero residual branches), so the untrained encoder returns its input token vectors
and training is judged against exact MaxSim on them. On the wiki corpus the inputs are all-MiniLM-L6-v2's
token vectors: the encoder is a trainable head over a frozen contextual encoder; k-means
is Lloyd's algorithm with ``kmeans_iters`` iterations from evenly spaced tokens (deterministic; the
paper's initialisation is not given in the abstract: our choice), assignments without gradient, and
centroids = the normalised mean of their tokens, through which gradients flow.
"""
from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_retrieval.data import VectorSets
from zoo_task_retrieval.encoder import identity_, identity_init_

__all__ = ["cluster_counts", "kmeans_pool", "Crisp", "crisp", "posthoc"]


def cluster_counts(lengths: torch.Tensor, clusters: float) -> torch.Tensor:
    """Centroids per set: ``clusters`` (an int >= 1: fixed, a float in (0, 1): that fraction, rounded up), at most the length.

    >>> cluster_counts(torch.tensor([3, 10, 20]), 8).tolist(), cluster_counts(torch.tensor([3, 10, 20]), 0.25).tolist()
    ([3, 8, 8], [1, 3, 5])
    """
    if clusters >= 1:
        k = torch.full_like(lengths, int(clusters))
    else:
        k = torch.ceil(lengths.to(torch.float64) * clusters).long()
    return torch.minimum(k.clamp_min(1), lengths.clamp_min(1))


def kmeans_pool(x: torch.Tensor, mask: torch.Tensor, clusters: float, iters: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-set k-means of token vectors ``x`` (B, L, e): normalised centroids (B, K, e) and their mask (B, K).

    Init: ``k_i`` tokens evenly spaced among set i's valid tokens; Lloyd iterations with inner-product
    assignment (the vectors are unit-norm); empty clusters keep their previous centroid. The final
    centroids are differentiable in ``x`` (assignments are not).

    >>> x = F.normalize(torch.tensor([[[1., 0.], [1., .1], [0., 1.], [.1, 1.]]]), dim=-1)
    >>> c, m = kmeans_pool(x, torch.ones(1, 4, dtype=torch.bool), 2)
    >>> [round(v, 3) for v in c[0, :, 0].tolist()], m.tolist()
    ([0.999, 0.05], [[True, True]])
    """
    b, length, _ = x.shape
    n = mask.sum(1)
    k = cluster_counts(n, clusters)
    kmax = int(k.max()) if b else 0
    order = torch.argsort((~mask).to(torch.int8), dim=1, stable=True)  # valid token positions first
    j = torch.arange(kmax)
    cmask = j[None] < k[:, None]
    pick = torch.div(j[None] * n[:, None], k[:, None], rounding_mode="floor").clamp_max(length - 1)
    pos = order.gather(1, pick)
    with torch.no_grad():
        xd = x.detach()
        cent = xd.gather(1, pos.unsqueeze(-1).expand(-1, -1, x.shape[-1]))
        for _ in range(iters):
            onehot = _assign(xd, mask, cent, cmask)
            count = onehot.sum(1).unsqueeze(-1)
            new = onehot.transpose(1, 2) @ xd / count.clamp_min(1)
            cent = torch.where(count > 0, new, cent)
        onehot = _assign(xd, mask, cent, cmask)
    count = onehot.sum(1).unsqueeze(-1)
    mean = onehot.transpose(1, 2) @ x / count.clamp_min(1)
    cent = torch.where(count > 0, mean, cent)
    return F.normalize(cent, dim=-1) * cmask.unsqueeze(-1), cmask


def _assign(x: torch.Tensor, mask: torch.Tensor, cent: torch.Tensor, cmask: torch.Tensor) -> torch.Tensor:
    sims = (x @ cent.transpose(1, 2)).masked_fill(~cmask[:, None, :], -math.inf)
    return F.one_hot(sims.argmax(-1), cent.shape[1]).to(x.dtype) * mask.unsqueeze(-1).to(x.dtype)


class Crisp(nn.Module):
    """Tiny ColBERT-style encoder whose document (and query) token vectors are k-means clustered.

    Args:
        in_dim: input token-vector size (the task's synthetic corpora: 64; wiki MiniLM tokens: 384).
        d_model, n_heads, n_layers, ff: the transformer layer(s); ``n_layers=0``: no layer (a per-token map).
        out_dim: late-interaction vector size (the identity init is exact when in_dim = d_model = out_dim).
        max_len: longest input set (learned positions).
        doc_clusters: centroids per document: an int (fixed count, the paper's "C..x8"-style variants)
            or a fraction in (0, 1) (the paper's fractional variants); 0: no clustering (unpruned).
        query_clusters: the same for queries (0: queries keep every token vector).
        train_clustering: True = CRISP (cluster inside the training loss); False = post-hoc (train on
            full token vectors, cluster only when encoding for the index / search).
        kmeans_iters: Lloyd iterations.
    """

    kind = "multi"

    def __init__(self, in_dim: int = 64, d_model: int = 64, n_heads: int = 4, n_layers: int = 1, ff: int = 128,
                 out_dim: int = 64, max_len: int = 48, doc_clusters: float = 8, query_clusters: float = 0,
                 train_clustering: bool = True, kmeans_iters: int = 5) -> None:
        super().__init__()
        self.doc_clusters, self.query_clusters = doc_clusters, query_clusters
        self.train_clustering, self.kmeans_iters = train_clustering, kmeans_iters
        # identity init (issue 14): the untrained encoder returns its input vectors (normalised)
        if n_layers:
            self.embed = identity_(nn.Linear(in_dim, d_model))
            layer = nn.TransformerEncoderLayer(d_model, n_heads, ff, dropout=0.0, batch_first=True, norm_first=True)
            self.encoder = identity_init_(nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False))
        else:  # a per-token map: the input projection would only compose with the head (d_model = in_dim)
            self.embed, self.encoder, d_model = None, None, in_dim
        self.pos = nn.Parameter(torch.zeros(max_len, d_model))
        self.marker = nn.Parameter(torch.zeros(2, d_model))  # [Q], [D]
        self.head = identity_(nn.Linear(d_model, out_dim))

    def tokens(self, x: torch.Tensor, mask: torch.Tensor, role: int) -> torch.Tensor:
        """Normalised per-token vectors (B, L, out_dim), zero at padding; ``role`` 0 = query, 1 = document."""
        if self.encoder is None:  # per token: only the valid ones are computed
            pos = torch.arange(x.shape[1]).expand(x.shape[0], -1)[mask]
            v = F.normalize(self.head(x[mask] + self.pos[pos] + self.marker[role]), dim=-1)
            return torch.zeros(*mask.shape, v.shape[-1], dtype=v.dtype).masked_scatter(mask.unsqueeze(-1), v)
        h = self.embed(x) + self.pos[: x.shape[1]] + self.marker[role]
        h = self.encoder(h, src_key_padding_mask=~mask)
        return F.normalize(self.head(h), dim=-1) * mask.unsqueeze(-1)

    def _encode(self, x: torch.Tensor, mask: torch.Tensor, role: int) -> tuple[torch.Tensor, torch.Tensor]:
        v = self.tokens(x, mask, role)
        clusters = self.doc_clusters if role == 1 else self.query_clusters
        if clusters and (self.train_clustering or not self.training):
            return kmeans_pool(v, mask, clusters, self.kmeans_iters)
        return v, mask

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """The task's forward contract: the document's (clustered) vectors (B, K, out_dim) and their mask."""
        v, m = self._encode(x, mask, 1)
        return {"vectors": v, "mask": m}

    def _encode_sets(self, sets: VectorSets, role: int) -> VectorSets:
        """Encode sets in chunks of similar length (little padding; long wiki leads), in their order."""
        out: list[torch.Tensor] = [torch.empty(0)] * len(sets)
        for ids in sets.chunks(1 << 14):
            x, mask = sets.padded(ids, dtype=torch.float32)
            v, m = self._encode(x, mask, role)
            for j, i in enumerate(ids.tolist()):
                out[i] = v[j][m[j]]
        return VectorSets.from_list(out)

    def encode_docs(self, docs: VectorSets) -> VectorSets:
        return self._encode_sets(docs, 1)

    def encode_queries(self, queries: VectorSets) -> VectorSets:
        return self._encode_sets(queries, 0)


def crisp(doc_clusters: float = 8, query_clusters: float = 0, out_dim: int = 64, d_model: int = 64,
          n_layers: int = 1, in_dim: int = 64, max_len: int = 48, kmeans_iters: int = 5) -> Crisp:
    """Builder of ``crisp_colbert``: clustering inside training."""
    return Crisp(in_dim, d_model, 4, n_layers, 2 * d_model, out_dim, max_len, doc_clusters, query_clusters, True,
                 kmeans_iters)


def posthoc(doc_clusters: float = 8, query_clusters: float = 0, out_dim: int = 64, d_model: int = 64,
            n_layers: int = 1, in_dim: int = 64, max_len: int = 48, kmeans_iters: int = 5) -> Crisp:
    """Builder of ``colbert_posthoc_kmeans``: trained on full token vectors, clustered at index time."""
    return Crisp(in_dim, d_model, 4, n_layers, 2 * d_model, out_dim, max_len, doc_clusters, query_clusters, False,
                 kmeans_iters)
