"""A LIMIT-style dataset generator (Weller et al. 2025, sec. 5): people, the things they like, "who likes X?".

The paper's LIMIT: documents "<Name> likes <a>, <b>, ..."; each query "Who likes <X>?" has exactly
k = 2 relevant documents, and the queries' relevant pairs cover as many pairs of a small core of
documents (46 in the paper, giving C(46, 2) = 1035 pairs; 1000 queries are kept) as possible, the
hardest qrel pattern for a d-dimensional single vector. Optional distractor documents like
attributes no query asks about (LIMIT's full version has 50k documents; LIMIT-small only the core).
The attribute and name vocabularies here are generated (adjective x noun), not the paper's lists.

``to_vectors`` turns a dataset into the retrieval task's token-set form (one random unit vector per
attribute; a document is the set of its attributes' vectors, a query the one vector of its
attribute; the texts come along, for the task's BM25), so any retrieval model can be evaluated on it;
``evaluate_encoder`` scores any
``embed(texts) -> (N, D)`` text encoder by recall@k.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch.nn import functional as F

from zoo_task_retrieval.data import RetrievalData, VectorSets
from zoo_task_retrieval.task import retrieval_metrics

__all__ = ["LimitDataset", "limit_dataset", "to_vectors", "evaluate_encoder"]

_ADJ = ("red", "green", "blue", "tiny", "giant", "wild", "spicy", "sweet", "old", "fresh", "frozen", "golden",
        "silver", "striped", "smoked", "quiet", "loud", "rare", "wooden", "ancient", "purple", "salty", "bitter",
        "sparkling", "tropical", "arctic", "desert", "mountain", "urban", "vintage")
_NOUN = ("apples", "quokkas", "jazz", "chess", "kayaks", "tulips", "robots", "puzzles", "teapots", "comets",
         "pianos", "lizards", "novels", "bicycles", "cheese", "owls", "sneakers", "lanterns", "poems", "mangoes",
         "trains", "violins", "cacti", "kites", "sushi", "dragons", "marbles", "canoes", "pretzels", "glaciers",
         "fossils", "otters", "rockets", "waffles", "hedgehogs", "tangos")
_FIRST = ("Jon", "Ava", "Liam", "Mia", "Noah", "Zoe", "Omar", "Ines", "Kai", "Lena", "Ravi", "Sara", "Theo", "Yuki")
_LAST = ("Durben", "Okafor", "Silva", "Novak", "Tanaka", "Moreau", "Kowal", "Haddad", "Berg", "Quinn", "Osei",
         "Rossi", "Larsen", "Meyer")


@dataclass
class LimitDataset:
    """Documents (texts and attribute ids), queries (texts and one attribute id each), qrels, vocabulary."""

    docs: list[str]
    queries: list[str]
    qrels: list[dict[int, float]]
    doc_attrs: list[list[int]]
    query_attrs: list[int]
    attributes: list[str]


def limit_dataset(n_core: int = 46, n_queries: int = 1000, k: int = 2, n_distractors: int = 0,
                  distractor_attrs: int = 10, seed: int = 0) -> LimitDataset:
    """A LIMIT-style set: ``n_queries`` k-subsets of ``n_core`` docs (all of them when fewer), one attribute each.

    Each query's k relevant docs are the only docs liking its attribute; a core doc therefore likes
    the attributes of every query it is relevant to (43 on average for the defaults). Distractor docs
    like ``distractor_attrs`` attributes no query asks about.

    >>> ds = limit_dataset(n_core=5, n_queries=100)
    >>> len(ds.queries), sorted(ds.qrels[0]), ds.queries[0].startswith("Who likes")
    (10, [0, 1], True)
    """
    g = torch.Generator().manual_seed(seed)
    subsets = list(itertools.combinations(range(n_core), k))
    if n_queries < len(subsets):
        keep = sorted(torch.randperm(len(subsets), generator=g)[:n_queries].tolist())
        subsets = [subsets[i] for i in keep]
    vocab = [f"{a} {n}" for a, n in itertools.product(_ADJ, _NOUN)]
    n_attr = len(subsets) + n_distractors * distractor_attrs
    if n_attr > len(vocab):
        vocab += [f"{w} {i}" for i in range(n_attr // len(vocab) + 1) for w in vocab][: n_attr - len(vocab)]
    order = torch.randperm(len(vocab), generator=g).tolist()
    attributes = [vocab[i] for i in order[:n_attr]]
    doc_attrs: list[list[int]] = [[] for _ in range(n_core + n_distractors)]
    for qi, sub in enumerate(subsets):
        for di in sub:
            doc_attrs[di].append(qi)
    for j in range(n_distractors):
        start = len(subsets) + j * distractor_attrs
        doc_attrs[n_core + j] = list(range(start, start + distractor_attrs))
    names = [f"{f} {last}" for f, last in itertools.product(_FIRST, _LAST)]
    docs = []
    for di, attrs in enumerate(doc_attrs):
        perm = torch.randperm(len(attrs), generator=g).tolist()
        liked = [attributes[attrs[i]] for i in perm]
        name = names[di % len(names)] + ("" if di < len(names) else f" {di // len(names) + 1}")
        docs.append(f"{name} likes " + (", ".join(liked[:-1]) + " and " + liked[-1] if len(liked) > 1 else "".join(liked)) + ".")
    queries = [f"Who likes {attributes[qi]}?" for qi in range(len(subsets))]
    qrels = [{d: 1.0 for d in sub} for sub in subsets]
    return LimitDataset(docs, queries, qrels, doc_attrs, list(range(len(subsets))), attributes)


def to_vectors(ds: LimitDataset, dim: int = 64, seed: int = 0) -> RetrievalData:
    """The dataset as token sets: one random unit vector per attribute (a "word vector" of dimension ``dim``).

    >>> data = to_vectors(limit_dataset(n_core=4), dim=8)
    >>> data.kind, len(data.docs), data.queries.lengths.tolist()
    ('multi', 4, [1, 1, 1, 1, 1, 1])
    """
    g = torch.Generator().manual_seed(seed)
    words = F.normalize(torch.randn(len(ds.attributes), dim, generator=g), dim=-1)
    docs = VectorSets.from_list([words[a] for a in ds.doc_attrs])
    queries = VectorSets.from_list([words[[a]] for a in ds.query_attrs])
    return RetrievalData(queries, docs, ds.qrels, "multi", name="limit-style", doc_texts=list(ds.docs),
                         query_texts=list(ds.queries),
                         info={"corpus": "limit-style", "n_docs": len(ds.docs), "n_queries": len(ds.queries), "dim": dim})


def evaluate_encoder(embed: Callable[[Sequence[str]], torch.Tensor], ds: LimitDataset,
                     ks: Sequence[int] = (2, 10)) -> dict[str, float]:
    """recall@k and nDCG@10 of a single-vector text encoder ``embed(texts) -> (N, D)`` (inner product search).

    >>> ds = limit_dataset(n_core=4)
    >>> bag = lambda texts: torch.stack([torch.tensor([float(a in t) for a in ds.attributes]) for t in texts])
    >>> evaluate_encoder(bag, ds, ks=(2,))["recall@2"]
    1.0
    """
    q = torch.as_tensor(embed(ds.queries), dtype=torch.float32)
    d = torch.as_tensor(embed(ds.docs), dtype=torch.float32)
    ids = (q @ d.T).topk(min(max(ks), len(ds.docs)), dim=1).indices
    return retrieval_metrics(ids, ds.qrels, ks=ks)
