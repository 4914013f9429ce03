"""Metrics of the ``embedding_quality`` task, on plain arrays (every function takes (N, d) vectors).

Vectors are compared by cosine. A zero row (a model's "no vector for this word") has cosine 0 with
everything and never wins a nearest-neighbour or analogy search, so it scores as a miss.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["as_matrix", "unit_rows", "spearman", "pair_spearman", "analogy_accuracy", "nearest_stem_accuracy",
           "probe_accuracy", "retrieval_scores", "matrix_spearman", "cosines"]


def as_matrix(x: Any, n: int | None = None) -> np.ndarray:
    """A model's ``embed`` output as a float64 (N, d) array (torch tensors are detached; scipy sparse densified)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().double().numpy()
    elif hasattr(x, "toarray"):
        x = x.toarray()
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2 or (n is not None and x.shape[0] != n):
        raise ValueError(f"embed must return (N, d) vectors, one row per text; expected N={n}, got shape {x.shape}")
    return x


def _sparse(x: Any) -> bool:
    return hasattr(x, "tocsr")


def unit_rows(x: Any) -> Any:
    """Rows scaled to unit norm; zero rows stay zero (a scipy sparse matrix stays sparse)."""
    if _sparse(x):
        from sklearn.preprocessing import normalize

        return normalize(x.tocsr().astype(np.float64))
    x = as_matrix(x)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norm, out=np.zeros_like(x), where=norm > 0)


def cosines(x: Any, y: Any) -> np.ndarray:
    """The dense matrix of cosines between the rows of ``x`` and of ``y`` (either may be scipy sparse)."""
    s = unit_rows(x) @ unit_rows(y).T
    return s.toarray() if _sparse(s) else np.asarray(s)


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's rank correlation (ties get their mean rank); NaN when either side is constant.

    >>> spearman([1, 2, 3], [10, 20, 30]), spearman([1, 2, 3], [3, 2, 1])
    (1.0, -1.0)
    """
    from scipy.stats import spearmanr

    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or a.std() == 0 or b.std() == 0:
        return float("nan")
    return float(spearmanr(a, b).statistic)


def pair_spearman(vectors: dict[str, np.ndarray] | tuple[list[str], Any], pairs: Sequence[tuple[str, str, float]]
                  ) -> tuple[float, int]:
    """Spearman between cosine(u, v) and the score of each pair whose two words have vectors; (rho, pairs used).

    ``vectors``: ``(words, (N, d) array)`` or a dict word -> vector. Constant cosines (zero vectors for every
    unknown word) order nothing and score 0 rather than NaN.

    >>> w = (["a", "b", "c"], np.array([[1.0, 0], [1, 0.1], [0, 1]]))
    >>> pair_spearman(w, [("a", "b", 9.0), ("a", "c", 1.0), ("b", "c", 2.0)])
    (1.0, 3)
    """
    words, x = vectors if isinstance(vectors, tuple) else (list(vectors), np.stack(list(vectors.values())))
    x = unit_rows(x)
    index = {w: i for i, w in enumerate(words)}
    kept = [(index[a], index[b], s) for a, b, s in pairs if a in index and b in index]
    if not kept:
        return float("nan"), 0
    i, j, s = map(np.asarray, zip(*kept, strict=True))
    cos = (x[i] * x[j]).sum(1)
    return (0.0 if np.ptp(cos) == 0 else spearman(cos, s)), len(kept)


def analogy_accuracy(words: list[str], vectors: Any, questions: Sequence[tuple[str, str, str, str]],
                     *, batch: int = 512) -> tuple[float, int]:
    """3CosAdd (Mikolov et al. 2013): d is right when argmax over ``words`` of cos(w, b - a + c), with a, b
    and c excluded, is d. Questions with a word outside ``words`` are skipped; returns (accuracy, questions used).

    >>> w = ["man", "woman", "king", "queen"]
    >>> x = np.array([[1.0, 0, 0], [1, 1, 0], [1, 0, 1], [1, 1, 1]])
    >>> analogy_accuracy(w, x, [("man", "woman", "king", "queen")])
    (1.0, 1)
    """
    x = unit_rows(vectors)
    index = {w: i for i, w in enumerate(words)}
    q = np.array([[index[t] for t in qq] for qq in questions if all(t in index for t in qq)], dtype=np.int64)
    if len(q) == 0:
        return float("nan"), 0
    right = 0
    for k in range(0, len(q), batch):
        qb = q[k:k + batch]
        target = x[qb[:, 1]] - x[qb[:, 0]] + x[qb[:, 2]]
        scores = target @ x.T
        rows = np.arange(len(qb))[:, None]
        scores[rows, qb[:, :3]] = -np.inf
        right += int((scores.argmax(1) == qb[:, 3]).sum())
    return right / len(q), len(q)


def nearest_stem_accuracy(query: Any, query_stems: Sequence[str], pool: Any, pool_stems: Sequence[str]) -> float:
    """Share of ``query`` vectors whose cosine nearest neighbour in ``pool`` has the same stem (a zero query
    vector is a miss).

    >>> nearest_stem_accuracy(np.array([[1.0, 0], [0, 0]]), ["a", "b"], np.array([[1.0, 0.1], [0, 1]]), ["a", "b"])
    0.5
    """
    q = unit_rows(query)
    nn = cosines(q, pool).argmax(1)
    ok = (np.asarray(pool_stems)[nn] == np.asarray(query_stems)) & (np.linalg.norm(q, axis=1) > 0)
    return float(ok.mean())


def probe_accuracy(train_x: Any, train_y: Sequence[int], test_x: Any, test_y: Sequence[int], *, seed: int = 0,
                   max_iter: int = 1000) -> float:
    """Accuracy of a logistic regression (features standardised, C=1) trained on ``train_x`` and tested on ``test_x``.

    >>> x = np.array([[0.0], [0.1], [1.0], [1.1]]); probe_accuracy(x, [0, 0, 1, 1], x, [0, 0, 1, 1])
    1.0
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    sparse = _sparse(train_x)  # TF-IDF: scaled, not centred, to stay sparse
    prep = (lambda x: x.tocsr()) if sparse else as_matrix  # noqa: E731
    clf = make_pipeline(StandardScaler(with_mean=not sparse), LogisticRegression(max_iter=max_iter, random_state=seed))
    clf.fit(prep(train_x), np.asarray(train_y))
    return float((clf.predict(prep(test_x)) == np.asarray(test_y)).mean())


def retrieval_scores(queries: Any, docs: Any, target: Sequence[int]) -> dict[str, float]:
    """Recall@1, recall@10 and MRR of ranking ``docs`` by cosine to each query; ``target[i]`` is query i's document.

    >>> retrieval_scores(np.eye(3), np.eye(3), [0, 1, 2])["mrr"]
    1.0
    """
    s = cosines(queries, docs)
    t = np.asarray(target)
    own = s[np.arange(len(t)), t]
    # ties count against the model (the target ranks after every document scored the same): a constant
    # encoder must not rank its targets first
    rank = (s >= own[:, None]).sum(1)
    return {"recall@1": float((rank == 1).mean()), "recall@10": float((rank <= 10).mean()),
            "mrr": float((1.0 / rank).mean())}


def matrix_spearman(vectors: Any, human: np.ndarray) -> float:
    """Spearman between the cosine similarities of the N documents and an N x N human rating matrix, over the
    pairs i < j (the Lee benchmark: 1,225 pairs).

    >>> h = np.array([[1, 0.9, 0.1], [0.9, 1, 0.2], [0.1, 0.2, 1]])
    >>> matrix_spearman(np.array([[1.0, 0], [1, 0.2], [0, 1]]), h)
    1.0
    """
    s = cosines(vectors, vectors)
    i, j = np.triu_indices(len(s), 1)
    return spearman(s[i, j], human[i, j])
