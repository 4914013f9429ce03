"""The baselines that live with ``code_text``.

* doc2sig: ``bm25`` (bm25s, Lucene BM25 over ``data.code_tokens``) and ``bow`` (TF-IDF cosine over the same tokens):
  the lexical-overlap rankers a learned correspondence has to beat;
* lm: ``gpt``, the reference char GPT of ``char_lm`` trained left to right; it fills a gap by writing on from the
  prefix until the end of the line (it cannot see the suffix);
* vulloc: ``attn_mil`` (a GRU statement encoder and gated-attention MIL pooling, Ilse et al. 2018, trained on function
  labels; its attention is its statement score) and ``mean_bag`` (an embedding-bag statement encoder with a
  per-statement linear score, max-pooled into the function's logit).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from . import data as D


class LexicalRanker:
    """``bm25`` or ``bow`` over code tokens: ``score_matrix(texts, candidates) -> (Q, N)`` and ``rank``."""

    input_kind = "ranker"

    def __init__(self, kind: str = "bm25") -> None:
        if kind not in ("bm25", "bow"):
            raise ValueError(f"unknown lexical ranker {kind!r}: bm25 or bow")
        self.kind = kind

    def score_matrix(self, texts: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
        if self.kind == "bow":
            from sklearn.feature_extraction.text import TfidfVectorizer

            vec = TfidfVectorizer(analyzer=D.code_tokens, sublinear_tf=True).fit(list(candidates) + list(texts))
            return (vec.transform(texts) @ vec.transform(candidates).T).toarray()
        import bm25s

        index = bm25s.BM25()
        index.index([D.code_tokens(c) for c in candidates], show_progress=False)
        out = np.zeros((len(texts), len(candidates)), dtype=np.float64)
        for i, t in enumerate(texts):
            toks = [w for w in D.code_tokens(t) if w in index.vocab_dict]
            if toks:
                out[i] = index.get_scores(toks)
        return out

    def rank(self, text: str, candidates: Sequence[str]) -> np.ndarray:
        return self.score_matrix([text], candidates)[0]


class AttentionMIL(nn.Module):
    """GRU statement encoder -> gated attention pooling (Ilse et al. 2018) -> function logit; attention = scores."""

    input_kind = "bags"

    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.emb = nn.Embedding(len(D.VUL_VOCAB), dim, padding_idx=0)
        self.gru = nn.GRU(dim, dim, batch_first=True)
        self.att_v, self.att_u, self.att_w = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, 1)
        self.head = nn.Linear(dim, 1)

    def encode(self, tokens: torch.Tensor) -> torch.Tensor:
        b, s, t = tokens.shape
        _, h = self.gru(self.emb(tokens.reshape(b * s, t)))
        return h[-1].reshape(b, s, -1)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        h = self.encode(tokens)
        a = self.att_w(torch.tanh(self.att_v(h)) * torch.sigmoid(self.att_u(h))).squeeze(-1)
        a = a.masked_fill(~mask, float("-inf"))
        pooled = torch.einsum("bs,bsd->bd", a.softmax(-1), h)
        return {"function_logit": self.head(pooled).squeeze(-1), "statement_scores": a}


class MeanBag(nn.Module):
    """Embedding-bag (mean) statement encoder, a linear score per statement, max over statements."""

    input_kind = "bags"

    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.emb = nn.Embedding(len(D.VUL_VOCAB), dim, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> dict[str, torch.Tensor]:
        e = self.emb(tokens)
        n = (tokens > 0).sum(-1, keepdim=True).clamp_min(1)
        s = self.mlp(e.sum(-2) / n).squeeze(-1).masked_fill(~mask, float("-inf"))
        return {"function_logit": s.max(-1).values, "statement_scores": s}
