"""Hamming-ranking retrieval and the two hashing baselines Binary PV is compared with.

* :func:`precision_at_k_by_label`: each item's ``k`` nearest other items (Hamming distance for codes, or cosine),
  the fraction sharing its label, averaged over the items. Hamming distances tie often (32 bits take 33 values),
  so ties at the k-th distance are broken uniformly at random *in expectation*: the items strictly nearer count
  in full, and the remaining slots are filled with the tied items' average relevance. The figure is then exact,
  deterministic and independent of item order (breaking ties by index would reward a corpus stored by label).
  This metric belongs in the task (``embedding_quality``'s sentence mode); it lives here until it moves.
* :class:`RandomProjectionHash`: data-oblivious hashing, the sign of k Gaussian projections of TF-IDF vectors
  (SimHash, Charikar 2002: two vectors' bits differ with probability angle / pi).
* :class:`SemanticHashing`: the seminal learned baseline (Salakhutdinov & Hinton 2009, "Semantic hashing") at small
  scale: a deep autoencoder of word counts whose k-unit sigmoid code layer gets Gaussian noise in training, so
  that its codes saturate and can be rounded. Differences from theirs: no RBM pre-training (Adam from a random
  start), one hidden layer of 256 units each side (theirs 2000-500-500-k), and a softmax (multinomial)
  reconstruction of the document's word counts, the constrained-Poisson visible units' conditional.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from zoo_task_embedding_quality.baselines import TfidfVectors
from zoo_task_embedding_quality.data import TextCorpus, tokenize


def hamming_distances(a: Any, b: Any | None = None) -> np.ndarray:
    """Pairwise Hamming distances between rows of {0, 1} codes ``a`` (n, k) and ``b`` (m, k) (default ``a``).

    >>> hamming_distances(np.array([[0, 1, 1], [1, 1, 0]])).tolist()
    [[0.0, 2.0], [2.0, 0.0]]
    """
    a = np.asarray(a, dtype=np.float64)
    b = a if b is None else np.asarray(b, dtype=np.float64)
    return a.sum(1)[:, None] + b.sum(1)[None, :] - 2.0 * a @ b.T


def cosine_distances(a: Any) -> np.ndarray:
    """1 - cosine between the rows of ``a`` (dense or scipy sparse); a zero row is at distance 1 from everything."""
    x = a.toarray() if hasattr(a, "toarray") else np.asarray(a, dtype=np.float64)
    x = x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    return 1.0 - x @ x.T


def precision_at_k_by_label(dist: np.ndarray, labels: Sequence[int], k: int = 10) -> np.ndarray:
    """Per item: the expected fraction of its ``k`` nearest other items (by ``dist``, (n, n)) that share its label,
    ties at the k-th distance broken uniformly at random (module docstring). Returns (n,) precisions.

    >>> d = np.array([[0, 1, 1, 2], [1, 0, 2, 1], [1, 2, 0, 1], [2, 1, 1, 0]], dtype=float)
    >>> precision_at_k_by_label(d, [0, 0, 1, 1], k=1).tolist()  # item 0: items 1 and 2 tie at distance 1
    [0.5, 0.5, 0.5, 0.5]
    """
    d = np.array(dist, dtype=np.float64)
    lab = np.asarray(labels)
    n = len(lab)
    if d.shape != (n, n) or not 0 < k < n:
        raise ValueError(f"precision_at_k_by_label needs an (n, n) distance matrix for {n} labels and 0 < k < n, "
                         f"got {d.shape} and k={k}")
    np.fill_diagonal(d, np.inf)  # an item is not its own neighbour
    kth = np.partition(d, k - 1, axis=1)[:, k - 1:k]
    same = lab[:, None] == lab[None, :]
    nearer, tied = d < kth, d == kth
    slots = k - nearer.sum(1)
    return ((nearer & same).sum(1) + slots * (tied & same).sum(1) / tied.sum(1)) / k


def _tfidf(corpus: TextCorpus) -> TfidfVectors:
    vec = TfidfVectors()
    vec.fit(corpus)
    return vec


class RandomProjectionHash:
    """k-bit SimHash of TF-IDF: bit j = [w_j . x > 0], w_j ~ N(0, I) drawn with the seed (module docstring)."""

    def __init__(self, bits: int = 32) -> None:
        self.bits = bits
        self.tfidf: TfidfVectors | None = None
        self.planes: np.ndarray | None = None

    def fit(self, corpus: TextCorpus, *, seed: int = 0, **_: Any) -> dict[str, float]:
        self.tfidf = _tfidf(corpus)
        dim = len(self.tfidf.vectorizer.vocabulary_)
        self.planes = np.random.default_rng(seed).standard_normal((dim, self.bits))
        return {"vocabulary": float(dim)}

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.tfidf is None:
            raise RuntimeError("RandomProjectionHash.embed before fit: fit(corpus) learns the TF-IDF vocabulary first")
        return (np.asarray(self.tfidf.embed(texts) @ self.planes) > 0).astype(np.float32)


class SemanticHashing(nn.Module):
    """A small semantic-hashing autoencoder of word counts with a k-bit noisy sigmoid code (module docstring).

    ``fit(corpus)`` picks the input words (the ``words`` most frequent ones whose document frequency is under
    ``max_df``: a stop list from the data) and trains; ``embed(texts)`` gives round(sigmoid(code)) in {0, 1}.
    """

    def __init__(self, bits: int = 32, *, words: int = 2000, hidden: int = 256, noise_std: float = 4.0,
                 epochs: int = 60, lr: float = 1e-3, batch_size: int = 128, max_df: float = 0.25) -> None:
        super().__init__()
        self.bits, self.words, self.hidden, self.noise_std = bits, words, hidden, noise_std
        self.epochs, self.lr, self.batch_size, self.max_df = epochs, lr, batch_size, max_df
        self.index: dict[str, int] = {}

    def _counts(self, docs: Sequence[Sequence[str]]) -> torch.Tensor:
        x = torch.zeros(len(docs), len(self.index))
        for n, d in enumerate(docs):
            for w in d:
                j = self.index.get(w)
                if j is not None:
                    x[n, j] += 1
        return x

    def _encode(self, counts: torch.Tensor) -> torch.Tensor:
        return self.enc(torch.log1p(counts))  # log counts in: a document's length does not saturate the units

    def fit(self, corpus: TextCorpus, *, seed: int = 0, epochs: int | None = None, **_: Any) -> dict[str, float]:
        docs = corpus.documents()
        total: dict[str, int] = {}
        df: dict[str, int] = {}
        for d in docs:
            for w in d:
                total[w] = total.get(w, 0) + 1
            for w in set(d):
                df[w] = df.get(w, 0) + 1
        keep = [w for w, _ in sorted(total.items(), key=lambda kv: (-kv[1], kv[0])) if df[w] < self.max_df * len(docs)]
        self.index = {w: i for i, w in enumerate(keep[:self.words])}
        v = len(self.index)
        gen = torch.Generator().manual_seed(seed)
        with torch.random.fork_rng():  # the layers' default initialisation, seeded without touching the global stream
            torch.manual_seed(seed)
            self.enc = nn.Sequential(nn.Linear(v, self.hidden), nn.Sigmoid(), nn.Linear(self.hidden, self.bits))
            self.dec = nn.Sequential(nn.Linear(self.bits, self.hidden), nn.Sigmoid(), nn.Linear(self.hidden, v))
        x = self._counts(docs)
        x = x[x.sum(1) > 0]
        opt = torch.optim.Adam(self.parameters(), lr=self.lr)
        losses = []
        for _ in range(epochs or self.epochs):
            perm = torch.randperm(len(x), generator=gen)
            tot = 0.0
            for a in range(0, len(x), self.batch_size):
                c = x[perm[a:a + self.batch_size]]
                z = self._encode(c)
                code = torch.sigmoid(z + self.noise_std * torch.randn(z.shape, generator=gen))
                # multinomial reconstruction: -sum_w count_w log p(w | code), per document word
                loss = -(c * F.log_softmax(self.dec(code), dim=1)).sum() / c.sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                tot += loss.item() * len(c)
            losses.append(tot / len(x))
        return {"input_words": float(v), "final_train_loss": losses[-1] if losses else float("nan")}

    @torch.no_grad()
    def embed(self, texts: list[str]) -> np.ndarray:
        if not self.index:
            raise RuntimeError("SemanticHashing.embed before fit: fit(corpus) picks the input words first")
        return torch.round(torch.sigmoid(self._encode(self._counts([tokenize(t) for t in texts])))).numpy()


def wiki_test_leads() -> tuple[list[str], np.ndarray]:
    """The 1,000 test leads of ``embedding_quality``'s fixed split (:func:`wiki_split`) and their topic ids (12)."""
    from zoo_task_embedding_quality.data import load_wiki_articles, wiki_split

    arts = load_wiki_articles()
    topics = sorted({a["topic"] for a in arts})
    test = wiki_split()[1]
    return [arts[i]["extract"] for i in test], np.array([topics.index(arts[i]["topic"]) for i in test])


def topic_precision(vectors: Any, labels: Sequence[int], *, metric: str = "hamming", k: int = 10) -> float:
    """Mean precision@k by topic of ``vectors`` (one row per item): ``"hamming"`` for {0, 1} codes, ``"cosine"``
    for real vectors (module docstring)."""
    if metric == "hamming":
        dist = hamming_distances(vectors.numpy() if isinstance(vectors, torch.Tensor) else vectors)
    elif metric == "cosine":
        dist = cosine_distances(vectors.numpy() if isinstance(vectors, torch.Tensor) else vectors)
    else:
        raise ValueError(f"metric must be 'hamming' or 'cosine', got {metric!r}")
    return float(precision_at_k_by_label(dist, labels, k).mean())


def chance_precision(labels: Sequence[int]) -> float:
    """What random neighbours score: sum over labels of p(label) * (its other items / the other items), averaged."""
    lab = np.asarray(labels)
    counts = np.bincount(lab)
    return float(((counts[lab] - 1) / (len(lab) - 1)).mean())
