"""``retrieval``: single-vector and multi-vector (late-interaction) retrieval, with exact baselines.

Data (``zoo_task_retrieval.data``, re-exported here): a ``RetrievalData`` holds ``queries``,
``docs``, graded ``qrels`` (query i -> {doc index: relevance > 0}) and an optional ``train`` split.
Single-vector corpora hold (N, d) tensors; multi-vector corpora hold ``VectorSets`` (N variable-size
sets of vectors stored flat: ``vectors`` (T, d), ``offsets`` (N + 1,); ``padded(ids)`` gives the
(B, L, d) + mask form). Corpora, by ``evaluate(corpus=...)`` / ``load(corpus, kind)``:
``"synthetic"`` (``load_synthetic("multi"|"single")``: planted relevance, d=64), ``"negation"``
(``load_synthetic("negation", split="test"|"shift"|"negation_only")``, with a training split) and
``"wiki"`` (``load_wiki(n_docs=2000, kind="token"|"sentence")``: Wikipedia leads encoded by the real
all-MiniLM-L6-v2, 384-d, cached in float16 under ``zoo.weights.cache_dir()/retrieval``).

The retrieval interface. A retrieval model is an ``nn.Module`` (so ``zoo.create``/``save``/``push``
work; parameter-free methods keep their random matrices as buffers). It provides either

* ``build_index(docs) -> index`` and ``search(index, queries, k) -> SearchResult(ids (Q, k) with -1
  pads, scores (Q, k), n_candidates (Q,))``: the method's own index and search (e.g. MUVERA: FDEs,
  faiss MIPS, exact MaxSim rerank with ``rerank_maxsim``), or
* ``encode_docs(docs)`` / ``encode_queries(queries)``: a (N, D) tensor (the task searches it exactly
  by inner product with faiss) or a ``VectorSets`` (exact MaxSim); ``score(q_enc, d_enc) -> (Q, N)``
  replaces the scoring (e.g. Signed MaxSim).

Optional attributes: ``kind`` ("multi" or "single": the data the model reads; default "multi"),
``default_corpus`` (default "synthetic"), ``loss(q_enc, d_enc, target, ignore)`` for trainable
models (``train``: in-batch contrastive, on ``data.train``). An ``index`` may be any object; its size
is ``index_nbytes(index)`` (an ``nbytes`` attribute, or the sum over its tensors, arrays,
``VectorSets`` and faiss indexes; in a dict, keys starting with "_" are views of other parts and
are not counted). Reusable pieces: ``maxsim`` (padded, differentiable), ``maxsim_all`` and
``PaddedSets`` (exact, chunked), ``rerank_maxsim``, ``retrieval_metrics``, ``overlap_at_k``,
``measure`` (index + search + metrics + timing), ``cpu_threads``.

Forward contract (conformance kit): ``model(x, mask)`` with ``x`` (B, L, d=64) token vectors and
``mask`` (B, L) bool returns the model's *document* encoding: a (B, D) tensor (single vector, e.g. an
FDE) or ``{"vectors": (B, L', d'), "mask": (B, L')}`` (multi-vector, e.g. pooled tokens).

Metrics: recall@k (k = 1, 10, 100), nDCG@10, MRR (over the top ``k`` returned), ``exact_recall@10``
(overlap with the exact baseline's top 10), candidates scored per query, query latency (median ms,
one query at a time) and QPS (batches of 64), index size in bytes, index build time; every method is
measured on one CPU thread by default (comparable latencies on a shared machine). Baselines:
``exact-dense`` (faiss IndexFlatIP over sentence vectors), ``exact-maxsim`` (exact late interaction,
Khattab & Zaharia 2020), ``token-knn-union`` (the single-vector heuristic: each query token's
``k_token`` nearest doc tokens with faiss, union of their documents, exact MaxSim rerank) and ``bm25``
(lexical BM25 with ``bm25s`` over the corpus's texts, where it has texts: wiki, LIMIT-style sets;
tokenisation in ``Bm25``).

Training (``train``, and ``evaluate`` for trainable models) uses a split disjoint from the test
corpus: synthetic corpora draw it from the test corpus's own vocabulary (``load_synthetic(train=True)``),
wiki uses the next leads and their queries (``wiki_split``, sentence or token vectors). Trainable
encoders start at the identity map (``zoo_task_retrieval.encoder``), so the untrained encoder is exact
search over the corpus's own vectors and a claim can show what training adds before comparing methods.

>>> from zoo_task_retrieval import task as retrieval, data as retrieval_data
>>> data = retrieval_data.load_synthetic("multi", n_docs=200, n_queries=20)
>>> r = retrieval.evaluate(retrieval.ExactMaxSim(), data=data, baselines=[])
>>> r.metrics["recall@10"] > 0.9
True
"""
from __future__ import annotations

import contextlib
import logging
import math
import statistics
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import torch
from torch import nn

from zoo.task import Result, count_params, model_device

from .data import RetrievalData, VectorSets
from .index import (
    Bm25,
    ExactDense,
    ExactMaxSim,
    PaddedSets,
    SearchResult,
    TokenKnnUnion,
    _topk,
    maxsim,
    maxsim_all,
    rerank_maxsim,
)

log = logging.getLogger(__name__)

NAME = "retrieval"
BASELINES = ("exact-dense", "exact-maxsim", "token-knn-union", "bm25")
EXAMPLE_DIM = 64
# the protocol's defaults (``evaluate``, ``train``, ``measure``; ``describe`` reports them)
K, LATENCY_QUERIES, SEARCH_BATCH, THREADS = 100, 16, 64, 1
DEFAULT_STEPS, BATCH_SIZE, LR, TEMPERATURE = 300, 32, 3e-3, 0.05
METRICS = ("recall@1", "recall@10", "recall@100", "ndcg@10", "mrr", "exact_recall@10", "candidates", "latency_ms",
           "qps", "index_bytes", "build_s")

__all__ = ["VectorSets", "RetrievalData", "SearchResult", "maxsim", "maxsim_all", "PaddedSets", "ExactDense",
           "ExactMaxSim", "TokenKnnUnion", "Bm25", "build_baseline", "measure_baseline", "retrieval_metrics",
           "overlap_at_k", "index_nbytes",
           "search_all", "rerank_maxsim", "cpu_threads", "measure", "load", "evaluate", "example_input",
           "check_output", "train", "describe", "BASELINES"]


def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, **kw: Any) -> nn.Module:
    """A task baseline by name: one of ``BASELINES`` (no parameters, no seed; ``kw`` go to its class).

    ``bm25`` (``Bm25``) reads the corpus's texts: measure it on ``data.text_view()`` (``measure_baseline``
    does), on corpora that have texts (wiki, LIMIT-style sets).
    """
    table = {"exact-dense": ExactDense, "exact-maxsim": ExactMaxSim, "token-knn-union": TokenKnnUnion, "bm25": Bm25}
    if name not in table:
        raise ValueError(f"unknown {NAME} baseline {name!r}; choose from {list(BASELINES)}")
    return table[name](**kw)


# ---------------------------------------------------------------------------- adapters, metrics

class _EncodeThenExact:
    """Adapter for models that only encode: exact search over their encodings."""

    def __init__(self, model: nn.Module) -> None:
        self.model = model

    def build_index(self, docs: Any) -> Any:
        enc = self.model.encode_docs(docs) if hasattr(self.model, "encode_docs") else docs
        if isinstance(enc, torch.Tensor):
            return ("single", ExactDense().build_index(enc.detach()))
        enc = enc.detach().to(torch.float32)
        return ("multi", enc if hasattr(self.model, "score") else PaddedSets(enc))

    def search(self, index: Any, queries: Any, k: int) -> SearchResult:
        kind, idx = index
        enc = self.model.encode_queries(queries) if hasattr(self.model, "encode_queries") else queries
        if hasattr(self.model, "score"):
            d = idx if kind == "multi" else torch.from_numpy(idx.reconstruct_n(0, idx.ntotal))
            s, i = _topk(self.model.score(enc, d).detach(), k)
            return SearchResult(i, s, torch.full((len(queries),), d.shape[0] if kind == "single" else len(d)))
        if kind == "single":
            return ExactDense().search(idx, enc.detach(), k)
        return ExactMaxSim().search(idx, enc.detach().to(torch.float32), k)


def as_retriever(model: Any) -> Any:
    """The object whose ``build_index``/``search`` the task calls for ``model``."""
    if hasattr(model, "build_index") and hasattr(model, "search"):
        return model  # its own index: it places its tensors itself
    return _EncodeThenExact(_placed(model))


def _move(x: Any, device: Any) -> Any:
    """``x`` (a tensor, ``VectorSets``, dict or sequence of them; texts as they are) on ``device``."""
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, VectorSets):
        return VectorSets(x.vectors.to(device), x.offsets.to(device))
    if isinstance(x, dict):
        return {k: _move(v, device) for k, v in x.items()}
    if isinstance(x, (list, tuple)) and x and not isinstance(x[0], str):
        return type(x)(_move(v, device) for v in x)
    return x


class _Placed:
    """A model on an accelerator as the task's CPU code sees it: what it encodes or scores goes to its device, and
    the encodings and scores come back to the CPU (the indexes, faiss and the metrics are CPU code)."""

    _WRAPPED = ("encode_queries", "encode_docs", "score")

    def __init__(self, model: nn.Module, device: Any) -> None:
        self._model, self._device = model, device

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._model, name)  # AttributeError as the model gives it: hasattr() stays true to the model
        if name not in self._WRAPPED:
            return attr
        return lambda *args, **kw: _move(attr(*_move(args, self._device), **kw), torch.device("cpu"))


def _placed(model: Any) -> Any:
    """``model`` itself on the CPU, else wrapped so the task's CPU code can call it (``_Placed``)."""
    if not isinstance(model, nn.Module):
        return model
    dev = model_device(model)
    return model if dev.type == "cpu" else _Placed(model, dev)


def index_nbytes(index: Any) -> int:
    """Bytes an index holds: its ``nbytes``, or the sum over its tensors, arrays and faiss indexes."""
    if isinstance(index, torch.Tensor):
        return index.numel() * index.element_size()
    if isinstance(index, VectorSets):
        return index.nbytes
    if hasattr(index, "ntotal") and hasattr(index, "d"):  # a faiss index
        import faiss

        return int(faiss.serialize_index(index).nbytes)
    if hasattr(index, "nbytes"):
        return int(index.nbytes)
    if isinstance(index, dict):  # keys starting with "_" are views of other parts: not counted twice
        return sum(index_nbytes(v) for k, v in index.items() if not str(k).startswith("_"))
    if isinstance(index, (list, tuple)):
        return sum(index_nbytes(v) for v in index)
    return 0


def retrieval_metrics(ids: torch.Tensor, qrels: Sequence[dict[int, float]],
                      ks: Iterable[int] = (1, 10, 100)) -> dict[str, float]:
    """recall@k, nDCG@10 and MRR (reciprocal rank of the first relevant doc within the returned list).

    >>> retrieval_metrics(torch.tensor([[2, 0, 1]]), [{0: 1.0}], ks=(1, 3))["mrr"]
    0.5
    """
    ks = [k for k in ks if k <= ids.shape[1]] or [ids.shape[1]]
    rec = {k: 0.0 for k in ks}
    ndcg, mrr = 0.0, 0.0
    n = max(len(qrels), 1)
    for row, rel in zip(ids.tolist(), qrels, strict=True):
        if not rel:
            continue
        relevant = {d for d, g in rel.items() if g > 0}
        for k in ks:
            rec[k] += len(relevant.intersection(row[:k])) / len(relevant)
        dcg = sum(rel.get(d, 0.0) / math.log2(r + 2) for r, d in enumerate(row[:10]))
        ideal = sorted(rel.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
        ndcg += dcg / idcg if idcg > 0 else 0.0
        mrr += next((1.0 / (r + 1) for r, d in enumerate(row) if d in relevant), 0.0)
    out = {f"recall@{k}": v / n for k, v in rec.items()}
    out.update({"ndcg@10": ndcg / n, "mrr": mrr / n})
    return out


def overlap_at_k(ids: torch.Tensor, reference: torch.Tensor, k: int = 10) -> float:
    """Mean fraction of the reference top ``k`` (e.g. exact MaxSim's) that ``ids`` top ``k`` contains."""
    tot = 0.0
    for a, b in zip(ids[:, :k].tolist(), reference[:, :k].tolist(), strict=True):
        ref = {x for x in b if x >= 0}
        tot += len(ref.intersection(a)) / max(len(ref), 1)
    return tot / max(len(ids), 1)


def _rows(queries: Any, ids: Sequence[int]) -> Any:
    if isinstance(queries, torch.Tensor):
        return queries[list(ids)]
    if isinstance(queries, VectorSets):
        return queries.subset(ids)
    return [queries[i] for i in ids]  # texts


@contextlib.contextmanager
def cpu_threads(n: int | None) -> Iterator[None]:
    """Run the block on ``n`` torch and faiss CPU threads (None: leave them), then restore them."""
    if n is None:
        yield
        return
    import faiss

    before_t, before_f = torch.get_num_threads(), faiss.omp_get_max_threads()
    torch.set_num_threads(n)
    faiss.omp_set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before_t)
        faiss.omp_set_num_threads(before_f)


def search_all(retriever: Any, index: Any, queries: Any, k: int, batch_size: int = 64) -> tuple[SearchResult, float]:
    """Search every query in batches; return the result and the wall time in seconds."""
    parts = []
    t0 = time.perf_counter()
    with torch.no_grad():
        for s in range(0, len(queries), batch_size):
            parts.append(retriever.search(index, _rows(queries, range(s, min(s + batch_size, len(queries)))), k))
    return SearchResult.cat(parts), time.perf_counter() - t0


def measure(model: Any, data: RetrievalData, *, k: int = K, latency_queries: int = LATENCY_QUERIES,
            batch_size: int = SEARCH_BATCH, reference: torch.Tensor | None = None,
            threads: int | None = THREADS) -> tuple[dict[str, float], SearchResult]:
    """Index ``data.docs`` with ``model``, search every query, and return the metrics and the result.

    Runs on ``threads`` CPU threads (torch and faiss; None leaves them as they are), so that
    latencies are comparable between methods and runs on a shared machine.
    """
    with cpu_threads(threads):
        retriever = as_retriever(model)
        t0 = time.perf_counter()
        with torch.no_grad():
            index = retriever.build_index(data.docs)
        build_s = time.perf_counter() - t0
        res, total_s = search_all(retriever, index, data.queries, k, batch_size)
        lat = []
        with torch.no_grad():
            for i in range(min(latency_queries, data.n_queries)):
                t = time.perf_counter()
                retriever.search(index, _rows(data.queries, [i]), k)
                lat.append(time.perf_counter() - t)
    m = retrieval_metrics(res.ids, data.qrels)
    if reference is not None:
        m["exact_recall@10"] = overlap_at_k(res.ids, reference, 10)
    m.update({"candidates": float(res.n_candidates.float().mean()),
              "latency_ms": 1e3 * statistics.median(lat) if lat else math.nan,
              "qps": data.n_queries / total_s if total_s > 0 else math.inf, "index_bytes": float(index_nbytes(index)),
              "build_s": build_s})
    return m, res


def measure_baseline(name: str, data: RetrievalData, **kw: Any) -> tuple[dict[str, float], SearchResult]:
    """``measure`` a task baseline by name on ``data``; ``bm25`` on the corpus's texts (``data.text_view()``).

    ``kw`` go to ``measure`` (``k``, ``reference``, ``latency_queries``, ``threads``...).
    """
    base = build_baseline(name)
    return measure(base, data.text_view() if base.kind == "text" else data, **kw)


# ---------------------------------------------------------------------------- contract, training, evaluate

def example_input(batch: int = 4, length: int = 12, dim: int = EXAMPLE_DIM) -> tuple[torch.Tensor, torch.Tensor]:
    """A token-set batch ``(x (B, L, d), mask (B, L))`` with unit-norm vectors and ragged lengths."""
    g = torch.Generator().manual_seed(0)
    x = nn.functional.normalize(torch.randn(batch, length, dim, generator=g), dim=-1)
    lengths = torch.tensor([length - (3 * i) % length for i in range(batch)]).clamp_min(1)
    mask = torch.arange(length)[None] < lengths[:, None]
    return x * mask.unsqueeze(-1), mask


def check_output(model: nn.Module, output: Any) -> None:
    """The forward contract: a (B, D) document encoding, or {"vectors": (B, L', d'), "mask": (B, L')}."""
    if isinstance(output, torch.Tensor):
        if output.ndim != 2 or output.shape[0] != 4:
            raise AssertionError(f"{NAME}: a single-vector encoding must be (B, D), got {tuple(output.shape)}")
        return
    if isinstance(output, dict) and {"vectors", "mask"} <= set(output):
        v, m = output["vectors"], output["mask"]
        if v.ndim != 3 or m.shape != v.shape[:2] or m.dtype != torch.bool or v.shape[0] != 4:
            raise AssertionError(f"{NAME}: multi-vector output must be vectors (B, L, d) and a bool mask (B, L), "
                                 f"got {tuple(v.shape)} and {tuple(m.shape)} {m.dtype}")
        return
    raise AssertionError(f"{NAME}: output must be a (B, D) tensor or a dict with 'vectors' and 'mask', "
                         f"got {type(output).__name__}")


def train(model: nn.Module, data: RetrievalData, *, steps: int = DEFAULT_STEPS, batch_size: int = BATCH_SIZE,
          lr: float = LR, temperature: float = TEMPERATURE, seed: int = 0, threads: int | None = THREADS) -> dict[str, float]:
    """Contrastive training on ``data.train`` (or ``data``) with in-batch negatives.

    Each step takes ``batch_size`` queries and one random relevant doc for each; the loss is the
    cross-entropy of each query's scores over the batch's docs (other docs relevant to the same
    query are left out of its softmax), at ``temperature``. The model needs ``encode_queries`` /
    ``encode_docs``; ``score(q, d) -> (Bq, Bd)`` (default: inner product for tensors, MaxSim for
    ``VectorSets``) or ``loss(q_enc, d_enc, target, ignore)`` override the scoring or the loss.
    Runs on ``threads`` CPU threads (default 1: the task's models are tiny).
    """
    from zoo.task import run_budget

    split = data.train or data
    g = torch.Generator().manual_seed(seed)
    relevant = [sorted(d for d, r in rel.items() if r > 0) for rel in split.qrels]
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    dev = model_device(model)
    model.train()

    def step(i: int) -> float:
        qi = torch.randperm(split.n_queries, generator=g)[:batch_size].tolist()
        pos = [relevant[q][int(torch.randint(len(relevant[q]), (1,), generator=g))] for q in qi]
        di = sorted(set(pos))
        target = torch.tensor([di.index(p) for p in pos], device=dev)
        ignore = torch.tensor([[d != p and split.qrels[q].get(d, 0) > 0 for d in di] for q, p in zip(qi, pos, strict=True)],
                              device=dev)
        q = model.encode_queries(_move(_rows(split.queries, qi), dev))
        d = model.encode_docs(_move(_rows(split.docs, di), dev))
        if hasattr(model, "loss"):
            loss = model.loss(q, d, target, ignore)
        else:
            s = model.score(q, d) if hasattr(model, "score") else _default_score(q, d)
            loss = nn.functional.cross_entropy((s / temperature).masked_fill(ignore, -math.inf), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    with cpu_threads(threads):
        out = run_budget(step, steps=steps, budget_s=None, progress=f"train {NAME}")
    model.eval()
    return out


def _default_score(q: Any, d: Any) -> torch.Tensor:
    if isinstance(q, torch.Tensor):
        return q @ d.T
    qx, qm = q.padded()
    dx, dm = d.padded()
    return maxsim(qx, qm, dx, dm)


def load(corpus: str = "synthetic", kind: str = "multi", **kw: Any) -> RetrievalData:
    """The task's data: ``corpus`` "synthetic", "negation" or "wiki", as ``kind`` "multi" or "single"."""
    from . import data as retrieval_data

    if corpus == "synthetic":
        return retrieval_data.load_synthetic(kind, **kw)
    if corpus == "negation":
        return retrieval_data.load_synthetic("negation", **kw)
    if corpus == "wiki":
        kw.pop("train", None)  # wiki training splits come from ``wiki_split``
        return retrieval_data.load_wiki(kind="token" if kind == "multi" else "sentence", **kw)
    raise ValueError(f"unknown {NAME} corpus {corpus!r}; choose 'synthetic', 'negation' or 'wiki'")


def data_settings(corpus: str = "synthetic", kind: str = "multi", **kw: Any) -> dict[str, Any]:
    """The settings ``load(corpus, kind, **kw)`` makes its data with (for wiki: the loader's defaults and ``kw``)."""
    import inspect

    from . import data as retrieval_data

    if corpus in ("synthetic", "negation"):
        kw.pop("seed", None)
        return retrieval_data.synthetic_settings("negation" if corpus == "negation" else kind, **kw)
    if corpus == "wiki":
        params = inspect.signature(retrieval_data.load_wiki).parameters
        defaults = {k: p.default for k, p in params.items() if k in ("n_docs", "query_field", "max_tokens", "n_queries")}
        return {"corpus": "wiki", "kind": "token" if kind == "multi" else "sentence", **defaults,
                **{k: v for k, v in kw.items() if k != "seed"}, "encoder": "all-MiniLM-L6-v2"}
    raise ValueError(f"unknown {NAME} corpus {corpus!r}; choose 'synthetic', 'negation' or 'wiki'")


def default_baselines(corpus: str, kind: str) -> list[str]:
    """The baselines ``evaluate`` reports by default: exact search of the data's kind (on wiki: both kinds and BM25)."""
    return ["exact-dense", "exact-maxsim", "bm25"] if corpus == "wiki" else ["exact-maxsim" if kind == "multi" else "exact-dense"]


def describe(*, corpus: str = "synthetic", kind: str = "multi", k: int = K, steps: int | None = None,
             baselines: list[str] | None = None, latency_queries: int = LATENCY_QUERIES, threads: int | None = THREADS,
             batch_size: int = BATCH_SIZE, lr: float = LR, temperature: float = TEMPERATURE,
             **data_kw: Any) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options: data, baselines, training and measurement settings.

    ``corpus`` and ``kind`` stand for the model's ``default_corpus`` and ``kind`` (``evaluate`` reads
    them from the model); ``data_kw`` are the loader's (e.g. ``n_docs``); ``batch_size``, ``lr`` and
    ``temperature`` are ``train``'s, for protocols (claims) that call it with other values.

    >>> d = describe()
    >>> d["data"]["n_docs"], d["training"]["steps"], d["baselines"]
    (2000, 300, ['exact-maxsim'])
    """
    data = data_settings(corpus, kind, **data_kw)
    data_kind = "single" if data["kind"] in ("single", "sentence") else "multi"
    return {"corpus": corpus, "data": data,
            "baselines": list(baselines) if baselines is not None else default_baselines(corpus, data_kind),
            "k": k, "metrics": list(METRICS), "latency_queries": latency_queries, "search_batch_size": SEARCH_BATCH,
            "threads": threads,
            "training": {"applies_to": "models with trainable parameters and no pretrained weights",
                         "loss": "in-batch contrastive cross-entropy, other relevant docs masked", "optimizer": "Adam",
                         "steps": steps or DEFAULT_STEPS, "batch_size": batch_size, "lr": lr, "temperature": temperature,
                         "split": "the corpus's training split: synthetic: n_docs new docs and queries from the same "
                                  "topics and concepts (load_synthetic(train=True)); wiki: the next n_docs leads and "
                                  "their queries (wiki_split); negation: its own",
                         "init": "the plugins' encoders start at the identity map (zoo_task_retrieval.encoder)"},
            "bm25": "bm25s (Lucene BM25, k1 1.5, b 0.75) over the texts: lowercase, \\w\\w+ tokens, English stop "
                    "words removed, no stemming"}


def evaluate(model: nn.Module, *, corpus: str | None = None, data: RetrievalData | None = None,
             baselines: list[str] | None = None, k: int = K, steps: int | None = None,
             budget_s: float | None = None, seed: int = 0, train_model: bool | None = None,
             latency_queries: int = LATENCY_QUERIES, threads: int | None = THREADS, **data_kw: Any) -> Result:
    """Index and search a corpus with ``model``; report its metrics next to the exact baselines.

    ``corpus`` defaults to ``model.default_corpus`` or "synthetic"; the data kind comes from
    ``model.kind`` ("multi" by default). ``baselines`` default to
    ``exact-maxsim`` (multi-vector) or ``exact-dense`` (single), and on ``wiki`` to both, each on its
    own encoding of the same corpus. Trainable models (a parameter that requires grad, no pretrained
    weights) are first trained with ``train`` for ``steps`` (default ``DEFAULT_STEPS``) on the corpus's training
    split (synthetic corpora without one: a fresh sample drawn with ``seed + 1``; the wiki sentence corpus of
    ``n_docs`` leads: the next ``n_docs`` leads and their queries, ``data.wiki_split``).
    ``data_kw`` go to the loader (e.g. ``n_docs``, ``split``); ``budget_s`` is accepted for the
    common interface and unused (indexing and search are not budgeted). Every method is measured on
    ``threads`` CPU threads (default 1, for comparable latencies).

    >>> r = evaluate(TokenKnnUnion(), n_docs=200, n_queries=20)
    >>> sorted(r.baselines), r.baselines["exact-maxsim"]["exact_recall@10"]
    (['exact-maxsim'], 1.0)
    """
    del budget_s
    t0 = time.perf_counter()
    kind = getattr(model, "kind", "multi")
    corpus = corpus or getattr(model, "default_corpus", "synthetic")
    data = data or load(corpus, kind, seed=seed, **data_kw)
    if baselines is None:
        baselines = default_baselines(corpus, data.kind)
    exact = "exact-maxsim" if data.kind == "multi" else "exact-dense"
    results: dict[str, dict[str, float]] = {}
    ref_metrics, ref = measure(build_baseline(exact), data, k=k, latency_queries=latency_queries, threads=threads)
    ref_metrics["exact_recall@10"] = 1.0
    metrics: dict[str, float] = {"params": float(count_params(model))}
    prov = getattr(model, "zoo", None)
    if train_model is None:
        train_model = any(p.requires_grad for p in model.parameters()) and not getattr(prov, "pretrained", False)
    if train_model:
        if data.train is None and corpus == "wiki" and not data_kw.keys() - {"n_docs", "n_queries"}:
            from .data import wiki_split

            # the same test articles and queries, plus the next as many leads as a training split (no overlap)
            n = data_kw.get("n_docs", 2000)
            data = wiki_split(2 * n, n, n_queries=data_kw.get("n_queries"), kind="token" if data.kind == "multi" else "sentence")
        if data.train is None:
            if corpus != "synthetic":
                raise ValueError(f"{NAME}: corpus {corpus!r} has no training split to train {type(model).__name__} on; "
                                 "pass train_model=False, or use corpus='synthetic' or 'negation'")
            # the same corpus with a training split from its own vocabulary (other docs and queries)
            data = load(corpus, kind, seed=seed, train=True, **data_kw)
        torch.manual_seed(seed)
        metrics.update(train(model, data, steps=steps or DEFAULT_STEPS, seed=seed, threads=threads))
    model.eval()
    metrics.update(measure(model, data, k=k, latency_queries=latency_queries, reference=ref.ids, threads=threads)[0])
    for name in baselines:
        base = build_baseline(name)
        if name == exact:
            results[name] = ref_metrics
        elif base.kind == "text":
            results[name] = measure(base, data.text_view(), k=k, latency_queries=latency_queries, reference=ref.ids,
                                    threads=threads)[0]
        elif base.kind == data.kind:
            results[name] = measure(base, data, k=k, latency_queries=latency_queries, reference=ref.ids, threads=threads)[0]
        else:
            other = load(corpus, base.kind, seed=seed, **data_kw)
            results[name] = measure(base, other, k=k, latency_queries=latency_queries, threads=threads)[0]
    return Result(task=NAME, metrics=metrics, baselines=results, n=data.n_queries, seconds=time.perf_counter() - t0,
                  config={"corpus": corpus, "kind": data.kind, "n_docs": data.n_docs, "k": k, "seed": seed,
                          "trained": train_model, "data": data.info})
