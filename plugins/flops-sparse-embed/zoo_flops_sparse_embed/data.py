"""The training/test split of the task's Wikipedia corpus used to train and measure the heads.

``zoo.tasks.retrieval_data.load_wiki`` has no training split, so one is made here from the same
cached MiniLM sentence vectors: the test corpus is the first ``n_test_docs`` articles (the task's
default wiki corpus is the first 2000) with their queries; the training split is the next
``n_docs - n_test_docs`` articles with theirs. No article, and no query, is in both.
"""
from __future__ import annotations

from zoo.tasks.retrieval_data import RetrievalData, load_synthetic, load_wiki

__all__ = ["wiki_split", "synthetic_split", "N_DOCS", "N_TEST_DOCS"]

N_DOCS, N_TEST_DOCS = 4000, 2000


def wiki_split(n_docs: int = N_DOCS, n_test_docs: int = N_TEST_DOCS, n_queries: int | None = None) -> RetrievalData:
    """Wiki sentence vectors: test = the first ``n_test_docs`` articles, ``.train`` = the rest.

    ``n_queries`` keeps the first test queries only. The first call encodes ``n_docs`` articles
    with all-MiniLM-L6-v2 (cached afterwards; see ``load_wiki``).

    >>> data = wiki_split(4000, 2000)        # doctest: +SKIP
    >>> data.n_docs, data.train.n_docs       # doctest: +SKIP
    (2000, 2000)
    """
    if not 0 < n_test_docs < n_docs:
        raise ValueError(f"need 0 < n_test_docs ({n_test_docs}) < n_docs ({n_docs})")
    full = load_wiki(n_docs, "sentence")
    target = [next(iter(rel)) for rel in full.qrels]  # one relevant article per wiki query
    test_q = [i for i, d in enumerate(target) if d < n_test_docs][:n_queries]
    train_q = [i for i, d in enumerate(target) if d >= n_test_docs]
    train = RetrievalData(full.queries[train_q], full.docs[n_test_docs:],
                          [{target[i] - n_test_docs: 1.0} for i in train_q], "single", name="wiki-sentence-train")
    return RetrievalData(full.queries[test_q], full.docs[:n_test_docs], [{target[i]: 1.0} for i in test_q], "single",
                         name="wiki-sentence", train=train, titles=(full.titles or [])[:n_test_docs] or None,
                         info={**full.info, "n_docs": n_test_docs, "n_queries": len(test_q),
                               "split": f"test: articles [0, {n_test_docs}), train: [{n_test_docs}, {n_docs})",
                               "n_train_docs": train.n_docs, "n_train_queries": train.n_queries})


def synthetic_split(n_docs: int = 200, n_queries: int = 40, dim: int = 384) -> RetrievalData:
    """The task's synthetic single-vector corpus at the wiki vectors' size, ``.train`` a second draw (seed 1).

    For quick runs and tests: no encoding, no cache.

    >>> synthetic_split(50, 10).train.n_queries
    40
    """
    data = load_synthetic("single", n_docs=n_docs, n_queries=n_queries, dim=dim, seed=0)
    data.train = load_synthetic("single", n_docs=n_docs, n_queries=min(4 * n_queries, n_docs), dim=dim, seed=1)
    return data
