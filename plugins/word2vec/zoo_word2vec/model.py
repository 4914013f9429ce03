"""word2vec (Mikolov et al. 2013): a vocabulary and the word vectors skip-gram or CBOW learn over it.

arXiv 1301.3781 §3 gives the two architectures (CBOW: the window's words predict the centre word;
skip-gram: the centre word predicts each word of its window); arXiv 1310.4546 §2.2 replaces the softmax by
negative sampling, log s(v'_wO . v_wI) + sum_{i<=k} E_{w_i ~ P_n} log s(-v'_wi . v_wI) with P_n the unigram
distribution to the 3/4 power, and §2.3 subsamples frequent words. The training loop is
``zoo_nn.skipgram.train`` (word2vec.c's: dynamic window, subsampling, linearly decaying SGD; see its
docstring for the few places it differs from the C tool).

What differs from the papers: hierarchical softmax is not implemented (negative sampling only); the
phrase detection of 1310.4546 §4 is not run (words only); the CPU default trains d=100 vectors for 5
epochs on a 792k-token corpus, where the papers train d=300 on billions of words for 1-3 epochs
(``preset="paper"`` gives their settings).
"""
from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo_nn import skipgram
from zoo_task_embedding_quality.data import tokenize

log = logging.getLogger(__name__)

CPU = {"dim": 100, "window": 5, "negative": 5, "sample": 1e-3, "epochs": 5, "min_count": 5}
# 1310.4546 §3: d=300, k=15 negatives, t=1e-5; 1301.3781 §4: skip-gram context C=10; word2vec.c's learning rates
PAPER = {"sgns": {"dim": 300, "window": 10, "negative": 15, "sample": 1e-5, "epochs": 3, "min_count": 5},
         "cbow": {"dim": 300, "window": 5, "negative": 15, "sample": 1e-5, "epochs": 3, "min_count": 5}}
PRESETS = ("cpu", "paper")


class Word2Vec(nn.Module):
    """Word vectors ``emb`` (word2vec's input vectors) over ``vocab``; ``fit(corpus)`` learns both.

    ``embed(texts)`` gives one row per text: a word's vector, the mean over the known words of a longer
    text, zeros when none is known. ``forward`` on a list of texts is ``embed``; on a LongTensor of word ids,
    their rows. The output vectors of the last ``fit`` are kept as ``output_vectors`` (numpy, not saved).
    """

    embedding_mode = "word"

    def __init__(self, vocab: Sequence[str] = (), dim: int = 100, window: int = 5, negative: int = 5,
                 sample: float = 1e-3, epochs: int = 5, min_count: int = 5, cbow: bool = False,
                 lr: float | None = None) -> None:
        super().__init__()
        self.vocab = list(vocab)
        self.index = {w: i for i, w in enumerate(self.vocab)}
        self.dim, self.window, self.negative, self.sample = dim, window, negative, sample
        self.epochs, self.min_count, self.cbow, self.lr = epochs, min_count, cbow, lr
        self.emb = nn.Embedding(len(self.vocab), dim)
        with torch.no_grad():  # word2vec's initialisation, the state before any training
            self.emb.weight.uniform_(-0.5 / dim, 0.5 / dim)
        self.output_vectors: np.ndarray | None = None

    def forward(self, x: list[str] | torch.Tensor) -> torch.Tensor:
        if isinstance(x, torch.Tensor):
            return self.emb(x)
        return self.embed(x)

    @torch.no_grad()
    def embed(self, texts: Sequence[str]) -> torch.Tensor:
        """(N, dim) float32: per text the mean of its known words' vectors (tokenised as the task does)."""
        w = self.emb.weight.float()
        out = torch.zeros(len(texts), self.dim)
        for n, t in enumerate(texts):
            ids = [self.index[tok] for tok in tokenize(t) if tok in self.index]
            if ids:
                out[n] = w[ids].mean(0)
        return out

    def fit(self, corpus: Any, *, epochs: int | None = None, seed: int = 0, progress: Any = None,
            backend: str | None = None) -> dict[str, float]:
        """Build the vocabulary (words seen ``min_count`` times) of ``corpus`` and train on it.

        ``corpus``: a ``TextCorpus`` (its tokenised ``sentences``) or a list of token lists. Words outside
        the vocabulary are dropped before windows are formed, as word2vec.c does.
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
        out = skipgram.train(ids, len(vocab), dim=self.dim, window=self.window, negative=self.negative,
                             sample=self.sample, cbow=self.cbow, epochs=self.epochs if epochs is None else epochs,
                             lr=self.lr, counts=np.array([counts[w] for w in vocab]), seed=seed, backend=backend)
        self.vocab, self.index = vocab, index
        self.emb = nn.Embedding.from_pretrained(torch.from_numpy(out.input_vectors), freeze=False)
        self.output_vectors = out.output_vectors
        prov = getattr(self, "zoo", None)
        if prov is not None:  # what save_pretrained writes: the fitted vocabulary rebuilds this model
            self.zoo = dataclasses.replace(prov, model_args={**prov.model_args, "vocab": list(vocab)})
        log.info("word2vec (%s): %d words, %d-word vocabulary, %.1f s", out.backend, out.words, len(vocab), out.seconds)
        return {"vocabulary": float(len(vocab)), "train_words": float(out.words), "train_seconds": out.seconds,
                "words_per_second": out.words_per_second, "final_train_loss": out.epoch_loss[-1] if out.epoch_loss
                else float("nan"), "prepare_seconds": time.perf_counter() - t0 - out.seconds}  # vocabulary, ids, tables


def _build(kind: str, preset: str, vocab: Sequence[str], given: dict[str, Any]) -> Word2Vec:
    if preset not in PRESETS:
        raise ValueError(f"word2vec preset must be one of {PRESETS}, got {preset!r}")
    args = {**(PAPER[kind] if preset == "paper" else CPU), **{k: v for k, v in given.items() if v is not None}}
    return Word2Vec(vocab, cbow=kind == "cbow", **args)


def word2vec_sgns(vocab: Sequence[str] = (), preset: str = "cpu", dim: int | None = None, window: int | None = None,
                  negative: int | None = None, sample: float | None = None, epochs: int | None = None,
                  min_count: int | None = None, lr: float | None = None) -> Word2Vec:
    """Skip-gram with negative sampling. ``preset="cpu"``: d=100, window 5, 5 negatives, t=1e-3, 5 epochs;
    ``preset="paper"``: d=300, window 10, 15 negatives, t=1e-5 (1310.4546 §3, 1301.3781 §4). Arguments given
    override the preset; ``lr`` defaults to word2vec.c's 0.025.

    >>> word2vec_sgns(preset="paper").dim, word2vec_sgns(dim=50).window
    (300, 5)
    """
    return _build("sgns", preset, vocab, {"dim": dim, "window": window, "negative": negative, "sample": sample,
                                          "epochs": epochs, "min_count": min_count, "lr": lr})


def word2vec_cbow(vocab: Sequence[str] = (), preset: str = "cpu", dim: int | None = None, window: int | None = None,
                  negative: int | None = None, sample: float | None = None, epochs: int | None = None,
                  min_count: int | None = None, lr: float | None = None) -> Word2Vec:
    """CBOW with negative sampling (the window's mean vector predicts the word); presets as ``word2vec_sgns``
    (paper: window 5); ``lr`` defaults to word2vec.c's 0.05 for CBOW."""
    return _build("cbow", preset, vocab, {"dim": dim, "window": window, "negative": negative, "sample": sample,
                                          "epochs": epochs, "min_count": min_count, "lr": lr})
