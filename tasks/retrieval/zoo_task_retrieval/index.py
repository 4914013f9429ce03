"""Exact search for the ``retrieval`` task: MaxSim scoring (padded and chunked), the exact baselines
(``exact-dense``, ``exact-maxsim``, ``token-knn-union``) and candidate reranking.

Everything here is re-exported by ``zoo_task_retrieval.task``, which documents the retrieval interface.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from .data import VectorSets


@dataclass
class SearchResult:
    """What ``search`` returns: ``ids`` (Q, k) (-1 pads), ``scores`` (Q, k), ``n_candidates`` (Q,)."""

    ids: torch.Tensor
    scores: torch.Tensor
    n_candidates: torch.Tensor

    @staticmethod
    def cat(parts: Sequence[SearchResult]) -> SearchResult:
        return SearchResult(torch.cat([p.ids for p in parts]), torch.cat([p.scores for p in parts]),
                            torch.cat([p.n_candidates for p in parts]))


def maxsim(qx: torch.Tensor, qmask: torch.Tensor, dx: torch.Tensor, dmask: torch.Tensor) -> torch.Tensor:
    """MaxSim (Chamfer similarity) of every query set against every doc set: (Bq, Bd).

    score(Q, D) = sum_{i in Q} max_{j in D} <q_i, d_j> over valid (mask True) vectors; padded query
    tokens add nothing, a doc with no valid vector scores 0 per query token.

    >>> q = torch.eye(2)[None]; d = torch.eye(2)[None]
    >>> maxsim(q, torch.ones(1, 2, dtype=torch.bool), d, torch.ones(1, 2, dtype=torch.bool)).item()
    2.0
    """
    sims = torch.einsum("qid,njd->qnij", qx, dx)
    sims = sims.masked_fill(~dmask[None, :, None, :], -math.inf).amax(-1)
    sims = torch.nan_to_num(sims, neginf=0.0) * qmask[:, None, :].to(sims.dtype)
    return sims.sum(-1)


def _topk(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top ``k`` of each row, padded with id -1 / score -inf when a row has fewer columns."""
    kk = min(k, scores.shape[1])
    s, i = scores.topk(kk, dim=1)
    if kk < k:
        pad = k - kk
        s = torch.cat([s, s.new_full((len(s), pad), -math.inf)], 1)
        i = torch.cat([i, i.new_full((len(i), pad), -1)], 1)
    return s, i


# ---------------------------------------------------------------------------- baselines

class ExactDense(nn.Module):
    """Exact inner-product search over single vectors with faiss ``IndexFlatIP`` (the dense baseline).

    >>> idx = ExactDense().build_index(torch.eye(3))
    >>> ExactDense().search(idx, torch.eye(3)[:1], 2).ids.tolist()
    [[0, 1]]
    """

    kind = "single"

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean of the valid token vectors: the (B, d) vector this baseline would index."""
        m = mask.unsqueeze(-1).to(x.dtype)
        return (x * m).sum(1) / m.sum(1).clamp_min(1)

    def build_index(self, docs: torch.Tensor) -> Any:
        import faiss

        index = faiss.IndexFlatIP(docs.shape[1])
        index.add(docs.float().contiguous().numpy())
        return index

    def search(self, index: Any, queries: torch.Tensor, k: int) -> SearchResult:
        s, i = index.search(queries.float().contiguous().numpy(), k)
        return SearchResult(torch.from_numpy(i).long(), torch.from_numpy(s), torch.full((len(queries),), index.ntotal))


class ExactMaxSim(nn.Module):
    """Exact late interaction: score(Q, D) = sum_i max_j <q_i, d_j> over every document (ColBERT)."""

    kind = "multi"

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"vectors": x, "mask": mask}

    def build_index(self, docs: VectorSets) -> PaddedSets:
        return PaddedSets(docs)

    def search(self, index: PaddedSets, queries: VectorSets, k: int) -> SearchResult:
        s, i = _topk(maxsim_all(queries, index), k)
        return SearchResult(i, s, torch.full((len(queries),), len(index)))


class PaddedSets:
    """Doc token sets in length-sorted padded chunks, ready for exact MaxSim against any queries.

    Each doc is padded with copies of its own first vector, which leaves every max unchanged, so
    scoring is a plain matmul with no mask. ``nbytes`` counts the flat float32 vectors (what an
    index stores), not this compute layout.
    """

    def __init__(self, docs: VectorSets, chunk_tokens: int = 1 << 15) -> None:
        self.sets = docs.to(torch.float32)
        self.chunks: list[tuple[torch.Tensor, torch.Tensor]] = []
        for ids in self.sets.chunks(chunk_tokens):
            x, mask = self.sets.padded(ids)
            first = x[:, :1].expand_as(x)
            self.chunks.append((ids, torch.where(mask.unsqueeze(-1), x, first).contiguous()))

    def __len__(self) -> int:
        return len(self.sets)

    @property
    def nbytes(self) -> int:
        return self.sets.nbytes


def maxsim_all(queries: VectorSets, docs: VectorSets | PaddedSets, *, max_scores: int = 1 << 23) -> torch.Tensor:
    """Exact MaxSim of every query against every doc: (Q, N). ``max_scores`` bounds memory.

    Query tokens are not padded: all of them (flat) meet a chunk of padded docs in one matmul, the
    max over each doc's tokens follows, and each query's tokens are summed into its row.
    """
    index = docs if isinstance(docs, PaddedSets) else PaddedSets(docs)
    q = queries.to(torch.float32)
    owners = q.owners()
    out = torch.empty(len(queries), len(index))
    for ids, dx in index.chunks:
        nd, ld, d = dx.shape
        step = max(1, max_scores // max(nd * ld, 1))  # query tokens per matmul
        flat = dx.reshape(nd * ld, d).T
        block = torch.zeros(len(queries), nd)
        for s in range(0, len(q.vectors), step):
            sims = (q.vectors[s:s + step] @ flat).view(-1, nd, ld).amax(-1)
            block.index_add_(0, owners[s:s + step], sims)
        out[:, ids] = block
    return out


def rerank_maxsim(index: VectorSets | PaddedSets, queries: VectorSets, candidates: list[torch.Tensor], k: int,
                  score_fn: Any = None) -> SearchResult:
    """Score each query's candidate doc ids exactly (``score_fn``, default MaxSim) and keep the top ``k``.

    ``n_candidates`` of the result is the number of docs each query scored.
    """
    score_fn = score_fn or maxsim
    index = index.sets if isinstance(index, PaddedSets) else index.to(torch.float32)
    ids, scores, counts = [], [], []
    for qi, cand in enumerate(candidates):
        cand = cand.long()
        qx, qm = queries.padded([qi], dtype=torch.float32)
        if len(cand):
            dx, dm = index.padded(cand)
            s = score_fn(qx, qm, dx, dm)
        else:
            s = torch.empty(1, 0)
        top_s, top_i = _topk(s, k)
        top_ids = torch.where(top_i >= 0, cand[top_i.clamp_min(0)] if len(cand) else top_i, top_i)
        ids.append(top_ids)
        scores.append(top_s)
        counts.append(len(cand))
    return SearchResult(torch.cat(ids), torch.cat(scores), torch.tensor(counts))


class TokenKnnUnion(nn.Module):
    """The single-vector heuristic for multi-vector retrieval (ColBERTv2/PLAID-style first stage).

    Each query token retrieves its ``k_token`` nearest document tokens (faiss IndexFlatIP over all doc
    tokens); the candidates are the union of their documents, reranked by exact MaxSim.
    """

    kind = "multi"

    def __init__(self, k_token: int = 32) -> None:
        super().__init__()
        self.k_token = k_token

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"vectors": x, "mask": mask}

    def build_index(self, docs: VectorSets) -> dict[str, Any]:
        import faiss

        docs = docs.to(torch.float32)
        flat = faiss.IndexFlatIP(docs.dim)
        flat.add(docs.vectors.contiguous().numpy())
        return {"tokens": flat, "owner": docs.owners(), "_docs": PaddedSets(docs)}

    def candidates(self, index: dict[str, Any], queries: VectorSets) -> list[torch.Tensor]:
        q = queries.to(torch.float32)
        _, nn_ids = index["tokens"].search(q.vectors.contiguous().numpy(), self.k_token)
        doc_of = index["owner"][torch.from_numpy(nn_ids).clamp_min(0)]
        return [torch.unique(doc_of[q.offsets[i]:q.offsets[i + 1]]) for i in range(len(q))]

    def search(self, index: dict[str, Any], queries: VectorSets, k: int) -> SearchResult:
        return rerank_maxsim(index["_docs"], queries, self.candidates(index, queries), k)


class Bm25(nn.Module):
    """BM25 over the corpus's texts with ``bm25s`` (Lucene's BM25 variant, ``k1``, ``b``): the lexical baseline.

    Reads texts, not vectors (``kind`` "text": ``evaluate`` gives it ``data.text_view()``).
    Tokenisation (``bm25s.tokenize``): lowercased, tokens are the regex ``\\w\\w+`` (words of two or
    more letters or digits), English stop words removed, no stemming; queries are tokenised the same
    way and words the corpus lacks are ignored. Only documents sharing a word with the query score
    above 0 and are returned (the rest of the ``k`` slots are -1), as an inverted index returns them;
    ``n_candidates`` counts the returned ones.

    >>> idx = Bm25().build_index(["the cat sat on the mat", "dogs chase cats", "a quick brown fox"])
    >>> Bm25().search(idx, ["a cat on a mat", "zebra"], 2).ids.tolist()
    [[0, -1], [-1, -1]]
    """

    kind = "text"

    def __init__(self, k1: float = 1.5, b: float = 0.75, stopwords: str | None = "en") -> None:
        super().__init__()
        self.k1, self.b, self.stopwords = k1, b, stopwords

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        """BM25 reads texts; on token vectors (the forward contract) it passes them through, like exact MaxSim."""
        return {"vectors": x, "mask": mask}

    def _tokens(self, texts: Sequence[str]) -> list[list[str]]:
        import bm25s

        return bm25s.tokenize(list(texts), stopwords=self.stopwords, return_ids=False, show_progress=False)

    def build_index(self, docs: Sequence[str]) -> Any:
        import bm25s

        index = bm25s.BM25(k1=self.k1, b=self.b)
        index.index(self._tokens(docs), show_progress=False)
        index.n_docs = len(docs)
        return index

    def search(self, index: Any, queries: Sequence[str], k: int) -> SearchResult:
        kk = min(k, index.n_docs)
        res = index.retrieve(self._tokens(queries), k=kk, show_progress=False, n_threads=1)
        ids, scores = torch.from_numpy(res.documents).long(), torch.from_numpy(res.scores).float()
        found = scores > 0
        ids = torch.where(found, ids, torch.full_like(ids, -1))
        scores = torch.where(found, scores, torch.full_like(scores, -math.inf))
        if kk < k:
            ids = torch.cat([ids, ids.new_full((len(ids), k - kk), -1)], 1)
            scores = torch.cat([scores, scores.new_full((len(scores), k - kk), -math.inf)], 1)
        return SearchResult(ids, scores, found.sum(1))
