"""fastText (Bojanowski et al. 2017, "Enriching Word Vectors with Subword Information"): skip-gram whose word
vectors are built from character n-grams, so that words never seen in training get vectors too.

arXiv 1607.04606 §3.2: a word is the bag G_w of the character n-grams (3 <= n <= 6) of ``<w>`` plus the word
itself; each n-gram is hashed (FNV-1a) into one of K buckets; the word's representation combines the vectors
of G_w and replaces the word vector of skip-gram with negative sampling (§3.1). §4's settings: d = 300, 5
negatives, context window drawn in 1..5, rejection threshold t = 1e-4, words seen 5 times, step size 0.05
decayed linearly, K = 2 million buckets; the training loop is ``zoo_nn.fasttext.train`` (see its docstring).

What differs from the paper, and why:

* A word's vector is the **mean** of its rows, as the fastText tool computes it; the paper writes the sum
  (``combine="sum"`` gives it). Cosines, which every metric here uses, are the same for both.
* The CPU default trains d = 100 vectors with 200,000 buckets and t = 1e-3 (the word2vec plugin's CPU setting,
  so the two compare at equal settings) for 5 epochs on a 792k-token corpus; the paper trains d = 300 with
  2M buckets on Wikipedia dumps of hundreds of millions of tokens (``preset="paper"`` gives its settings).
* Negatives follow unigram^0.75 (word2vec's and gensim's; the fastText tool uses 0.5: ``ns_exponent``); a
  negative equal to the target is skipped, not redrawn; the rate decays per sentence, not per 10,000 tokens.
* ``oov_vectors=False`` gives unseen words a zero vector: the paper's "sisg-" ablation (Table 1/3).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from zoo_nn import fasttext
from zoo_task_embedding_quality.data import tokenize

log = logging.getLogger(__name__)

CPU = {"dim": 100, "window": 5, "negative": 5, "sample": 1e-3, "epochs": 5, "min_count": 5, "lr": 0.05,
       "minn": 3, "maxn": 6, "bucket": 200_000}
# 1607.04606 §4 (implementation details)
PAPER = {"dim": 300, "window": 5, "negative": 5, "sample": 1e-4, "epochs": 5, "min_count": 5, "lr": 0.05,
         "minn": 3, "maxn": 6, "bucket": 2_000_000}
PRESETS = ("cpu", "paper")


class FastTextSubword(nn.Module):
    """The input matrix ``emb`` (one row per vocabulary word, then ``bucket`` n-gram rows) over ``vocab``.

    ``embed(texts)`` gives one row per text: a word's vector is the mean (``combine="mean"``) or sum of its rows
    (its own row when it is in the vocabulary, and its n-grams' rows); a longer text gets the mean of its
    words' vectors. ``fit(corpus)`` learns the matrix; the output vectors of the last fit are kept as
    ``output_vectors`` (numpy, not saved).
    """

    embedding_mode = "word"

    def __init__(self, vocab: Sequence[str] = (), dim: int = 100, window: int = 5, negative: int = 5,
                 sample: float = 1e-3, epochs: int = 5, min_count: int = 5, lr: float = 0.05, minn: int = 3,
                 maxn: int = 6, bucket: int = 200_000, combine: str = "mean", ns_exponent: float = 0.75,
                 oov_vectors: bool = True) -> None:
        super().__init__()
        if combine not in ("mean", "sum"):
            raise ValueError(f"combine must be 'mean' (the fastText tool) or 'sum' (the paper), got {combine!r}")
        if not 1 <= minn <= maxn and bucket > 0:
            raise ValueError(f"fastText n-grams need 1 <= minn <= maxn, got minn={minn}, maxn={maxn}")
        self.vocab = list(vocab)
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.dim, self.window, self.negative, self.sample = dim, window, negative, sample
        self.epochs, self.min_count, self.lr = epochs, min_count, lr
        self.minn, self.maxn, self.bucket, self.combine = minn, maxn, bucket, combine
        self.ns_exponent, self.oov_vectors = ns_exponent, oov_vectors
        self.emb = nn.Embedding(len(self.vocab) + bucket, dim)
        with torch.no_grad():  # the fastText tool's initialisation, the state before any training
            self.emb.weight.uniform_(-1.0 / dim, 1.0 / dim)
        self.output_vectors: np.ndarray | None = None
        self._rows: dict[str, np.ndarray] = {}

    def forward(self, x: list[str]) -> torch.Tensor:
        return self.embed(x)

    def subword_rows(self, word: str) -> np.ndarray:
        """The rows of ``emb`` that make up ``word`` (its own row first when in the vocabulary); none for an
        unseen word when ``oov_vectors`` is off."""
        rows = self._rows.get(word)
        if rows is None:
            known = self.index.get(word)
            rows = (fasttext.subword_rows(word, len(self.vocab), self.bucket, self.minn, self.maxn, word_id=known)
                    if known is not None or self.oov_vectors else np.zeros(0, np.int64))
            self._rows[word] = rows
        return rows

    @torch.no_grad()
    def word_vectors(self, words: Sequence[str]) -> torch.Tensor:
        """(N, dim) float32: each word's combined rows (zeros for a word with none)."""
        rows = [self.subword_rows(w) for w in words]
        lengths = torch.tensor([len(r) for r in rows], dtype=torch.long)
        flat = torch.from_numpy(np.concatenate(rows) if rows else np.zeros(0, np.int64)).long()
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
        # embedding_bag gives zero rows to empty bags, the contract's "no vector"
        return F.embedding_bag(flat, self.emb.weight.float(), offsets, mode=self.combine)

    @torch.no_grad()
    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """(N, dim) float32: per text the mean of its words' vectors (tokenised as the task does)."""
        toks = [tokenize(t) for t in texts]
        uniq = list(dict.fromkeys(w for ts in toks for w in ts))
        vec = self.word_vectors(uniq) if uniq else torch.zeros(0, self.dim)
        at = {w: i for i, w in enumerate(uniq)}
        out = torch.zeros(len(texts), self.dim)
        for n, ts in enumerate(toks):
            ids = [at[w] for w in ts if len(self.subword_rows(w))]
            if ids:
                out[n] = vec[ids].mean(0)
        return out

    def fit(self, corpus: Any, *, epochs: int | None = None, seed: int = 0, progress: Any = None,
            backend: str | None = None) -> dict[str, float]:
        """Build the vocabulary (words seen ``min_count`` times) of ``corpus``, its subword table, and train.

        ``corpus``: a ``TextCorpus`` (its tokenised ``sentences``) or a list of token lists. Words outside the
        vocabulary are dropped before windows are formed (as the fastText tool does).
        """
        t0 = time.perf_counter()
        sentences = corpus.sentences if hasattr(corpus, "sentences") else list(corpus)
        counts: dict[str, int] = {}
        for s in sentences:
            for w in s:
                counts[w] = counts.get(w, 0) + 1
        vocab = [w for w, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if c >= self.min_count]
        index = {w: i for i, w in enumerate(vocab)}
        ids = [np.fromiter((index[w] for w in s if w in index), dtype=np.int32) for s in sentences]
        table = fasttext.subword_table(vocab, self.bucket, self.minn, self.maxn)
        out = fasttext.train(ids, table, len(vocab), self.bucket, dim=self.dim, window=self.window,
                             negative=self.negative, sample=self.sample, lr=self.lr, combine=self.combine,
                             ns_exponent=self.ns_exponent, epochs=self.epochs if epochs is None else epochs,
                             counts=np.array([counts[w] for w in vocab]), seed=seed, backend=backend)
        self.vocab, self.index = vocab, index
        self._rows = {w: table[0][table[1][i]:table[1][i + 1]].astype(np.int64) for i, w in enumerate(vocab)}
        self.emb = nn.Embedding.from_pretrained(torch.from_numpy(out.input_matrix), freeze=False)
        self.output_vectors = out.output_vectors
        prov = getattr(self, "zoo", None)
        if prov is not None:  # what save_pretrained writes: the fitted vocabulary rebuilds this model
            self.zoo = dataclasses.replace(prov, model_args={**prov.model_args, "vocab": list(vocab)})
        log.info("fastText (%s): %d words, %d-word vocabulary, %.1f rows per word, %.1f s", out.backend, out.words,
                 len(vocab), len(table[0]) / max(1, len(vocab)), out.seconds)
        return {"vocabulary": float(len(vocab)), "train_words": float(out.words), "train_seconds": out.seconds,
                "words_per_second": out.words_per_second, "rows_per_word": len(table[0]) / max(1, len(vocab)),
                "final_train_loss": out.epoch_loss[-1] if out.epoch_loss else float("nan"),
                "prepare_seconds": time.perf_counter() - t0 - out.seconds}


def fasttext_subword(vocab: Sequence[str] = (), preset: str = "cpu", dim: int | None = None, window: int | None = None,
                     negative: int | None = None, sample: float | None = None, epochs: int | None = None,
                     min_count: int | None = None, lr: float | None = None, minn: int | None = None,
                     maxn: int | None = None, bucket: int | None = None, combine: str = "mean",
                     ns_exponent: float = 0.75, oov_vectors: bool = True) -> FastTextSubword:
    """Subword skip-gram. ``preset="cpu"``: d=100, window 5, 5 negatives, t=1e-3, lr 0.05, 5 epochs, n-grams
    3-6 in 200,000 buckets; ``preset="paper"``: d=300, t=1e-4, 2M buckets (1607.04606 §4). Arguments given
    override the preset.

    >>> model = fasttext_subword(dim=50, bucket=1000)  # preset="paper" allocates 2M x 300 floats (2.4 GB)
    >>> model.emb.weight.shape, model.embed(["unseen"]).abs().sum() > 0
    (torch.Size([1000, 50]), tensor(True))
    """
    if preset not in PRESETS:
        raise ValueError(f"fasttext_subword preset must be one of {PRESETS}, got {preset!r}")
    given = {"dim": dim, "window": window, "negative": negative, "sample": sample, "epochs": epochs,
             "min_count": min_count, "lr": lr, "minn": minn, "maxn": maxn, "bucket": bucket}
    args = {**(PAPER if preset == "paper" else CPU), **{k: v for k, v in given.items() if v is not None}}
    return FastTextSubword(vocab, combine=combine, ns_exponent=ns_exponent, oov_vectors=oov_vectors, **args)
