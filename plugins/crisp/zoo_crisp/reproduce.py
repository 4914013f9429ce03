"""``zoo reproduce crisp``: nDCG@10 vs stored vectors per doc, CRISP vs post-hoc k-means vs unpruned.

Corpus: the task's synthetic multi-vector corpus (1000 docs, 200 queries; quick: 40 / 8) with
``n_noise`` noise tokens appended to every document (drawn from a small shared "stop-word"
vocabulary, uninformative about relevance), training split drawn with seed 1. Models, all trained
with the task's contrastive ``train`` for the same step count and seed: one normally trained encoder
(the unpruned row, and post-hoc k-means of its document vectors to K = 4 and 8 centroids) and one
CRISP encoder per K (clustering inside training). Queries are not clustered (our choice, to compare
index sizes only). The claim holds when CRISP beats post-hoc at every K; whether it beats the
unpruned model is reported too.
"""
from __future__ import annotations

import logging
import time

import torch
from torch.nn import functional as F

import zoo
from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData, VectorSets, load_synthetic

from .model import crisp, posthoc

log = logging.getLogger(__name__)

FULL = {"n_docs": 1000, "n_queries": 200, "steps": 300, "sizes": (4, 8), "n_noise": 8}
QUICK = {"n_docs": 40, "n_queries": 8, "steps": 3, "sizes": (4,), "n_noise": 4}


def add_noise_tokens(data: RetrievalData, n_noise: int, vocab: int = 16, seed: int = 0) -> RetrievalData:
    """Append ``n_noise`` tokens from a shared random ``vocab`` ("stop words") to every document."""
    g = torch.Generator().manual_seed(10_000 + seed)
    words = F.normalize(torch.randn(vocab, data.docs.dim, generator=g), dim=-1)
    sets = [torch.cat([data.docs[i], words[torch.randint(vocab, (n_noise,), generator=g)]]) for i in range(len(data.docs))]
    data.docs = VectorSets.from_list(sets)
    return data


def _load(cfg: dict, seed: int) -> RetrievalData:
    return add_noise_tokens(load_synthetic("multi", n_docs=cfg["n_docs"], n_queries=cfg["n_queries"], seed=seed),
                            cfg["n_noise"], seed=seed)


def _row(model: torch.nn.Module, data: RetrievalData, ref: torch.Tensor) -> dict[str, float]:
    m = task.measure(model, data, k=100, latency_queries=2, reference=ref)[0]
    n = float(model.encode_docs(data.docs).vectors.shape[0]) / data.n_docs
    return {"ndcg@10": m["ndcg@10"], "recall@10": m["recall@10"], "exact_recall@10": m["exact_recall@10"],
            "vectors_per_doc": n, "index_bytes": m["index_bytes"]}


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Train and measure unpruned, post-hoc and CRISP models; ``quick``: tiny sizes, for tests."""
    from .plugin import CLAIM

    t0, cpu0 = time.perf_counter(), time.process_time()
    cfg = QUICK if quick else FULL
    data = _load(cfg, 0)
    data.train = _load(cfg, 1)
    ref = task.measure(task.ExactMaxSim(), data, k=100, latency_queries=1)[1].ids
    table: dict[str, dict[str, float]] = {}
    torch.manual_seed(0)
    base = posthoc(doc_clusters=0)
    task.train(base, data, steps=cfg["steps"], seed=0)
    with torch.no_grad():
        table["unpruned"] = _row(base, data, ref)
        for k in cfg["sizes"]:
            base.doc_clusters = k
            table[f"post-hoc k-means K={k}"] = _row(base, data, ref)
        base.doc_clusters = 0
    for k in cfg["sizes"]:
        torch.manual_seed(0)
        model = crisp(doc_clusters=k)
        task.train(model, data, steps=cfg["steps"], seed=0)
        with torch.no_grad():
            table[f"CRISP K={k}"] = _row(model, data, ref)
    wins = {k: table[f"CRISP K={k}"]["ndcg@10"] - table[f"post-hoc k-means K={k}"]["ndcg@10"] for k in cfg["sizes"]}
    over_unpruned = {k: table[f"CRISP K={k}"]["ndcg@10"] - table["unpruned"]["ndcg@10"] for k in cfg["sizes"]}
    passed = all(v > 0 for v in wins.values())
    full_n = table["unpruned"]["vectors_per_doc"]
    summary = ("nDCG@10 CRISP minus post-hoc k-means at the same vectors per doc: "
               + ", ".join(f"K={k}: {v:+.4f}" for k, v in wins.items())
               + f"; CRISP minus unpruned ({full_n:.1f} vectors/doc): "
               + ", ".join(f"K={k} ({full_n / k:.1f}x fewer): {v:+.4f}" for k, v in over_unpruned.items()))
    settings = {"quick": quick, "cpu_seconds": time.process_time() - cpu0, "threads": 1,
                **{k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()}, "query_clusters": 0,
                "kmeans_iters": 5, "corpus": "synthetic-multi + noise tokens"}
    return zoo.ClaimResult(plugin="crisp", claim=CLAIM, passed=passed, table=table, summary=summary,
                           settings=settings, seconds=time.perf_counter() - t0)
