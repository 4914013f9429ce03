"""``zoo reproduce limit-embed-bound``: the free-embedding critical n per d, and LIMIT-small.

(a) For d = 2..6 (quick: 2..3), the critical n of free ``d``-dim embeddings on the all-2-subsets qrel
matrix (``model.critical_n``), and a cubic fitted to it (the paper's functional form). (b) On a
LIMIT-small-style set (46 core docs, 1000 "who likes X?" queries, 2 relevant docs each; quick: 11
docs, d = 2), recall@2 of single vectors of dimension d in (4, 8, 16): free embeddings optimised directly on
the test qrels (the best any single-vector model can do) and a trained mean-pool encoder, against
MaxSim over token vectors of the same dimension d, and the exact 64-d baselines. The claim holds when
the critical n never decreases with d and grows from the smallest to the largest d, and free single
vectors fail (top-2 exact accuracy < 1) at one d at least, with MaxSim at the same d doing better
(recall@2) at every d where they fail.
"""
from __future__ import annotations

import logging
import time

import torch

import zoo
from zoo_task_retrieval import task

from .data import limit_dataset, to_vectors
from .model import SingleVector, critical_n, fit_polynomial, optimise_free_embeddings

log = logging.getLogger(__name__)

FULL = {"dims": (2, 3, 4, 5, 6), "n_core": 46, "n_queries": 1000, "limit_dims": (4, 8, 16), "train_steps": 300}
QUICK = {"dims": (2, 3), "n_core": 11, "n_queries": 55, "limit_dims": (2,), "train_steps": 5}
OPT = {"max_steps": 3000, "patience": 300, "lr": 0.05, "temperature": 0.05}
QUICK_OPT = {**OPT, "max_steps": 300, "patience": 50}


def _recall(ids: torch.Tensor, qrels: list[dict[int, float]]) -> dict[str, float]:
    m = task.retrieval_metrics(ids, qrels, ks=(2, 10))
    return {"recall@2": m["recall@2"], "recall@10": m["recall@10"], "ndcg@10": m["ndcg@10"]}


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Measure the critical n per d and recall@2 on LIMIT-small; ``quick``: tiny sizes, for tests."""
    from .plugin import CLAIM

    t0, cpu0 = time.perf_counter(), time.process_time()
    cfg, opt = (QUICK, QUICK_OPT) if quick else (FULL, OPT)
    table: dict[str, dict[str, float]] = {}
    crit: dict[int, int] = {}
    with task.cpu_threads(1):
        for d in cfg["dims"]:
            crit[d], tried = critical_n(d, **opt)
            table[f"free embedding d={d}"] = {"critical_n": float(crit[d]),
                                              "qrel_rows_at_critical": float(crit[d] * (crit[d] - 1) // 2),
                                              "accuracy_at_n+1": tried[crit[d] + 1]}
        coef = fit_polynomial(list(crit), [float(v) for v in crit.values()], degree=min(3, len(crit) - 1))

        ds = limit_dataset(n_core=cfg["n_core"], n_queries=cfg["n_queries"])
        qrels_matrix = torch.zeros(len(ds.queries), len(ds.docs))
        for i, rel in enumerate(ds.qrels):
            qrels_matrix[i, list(rel)] = 1.0
        words64 = to_vectors(ds, dim=64)
        for name, base in (("exact-maxsim 64-d tokens", task.ExactMaxSim()),):
            m, res = task.measure(base, words64, k=10, latency_queries=1)
            table[name] = _recall(res.ids, ds.qrels)
        x, mask = words64.docs.padded()
        xq, mq = words64.queries.padded()
        mean = task.ExactDense()
        dense = task.RetrievalData(mean(xq, mask=mq), mean(x, mask), ds.qrels, "single")
        table["exact-dense mean-pooled 64-d"] = _recall(task.measure(mean, dense, k=10, latency_queries=1)[1].ids, ds.qrels)
        verdicts = []
        for d in cfg["limit_dims"]:
            multi = to_vectors(ds, dim=d)
            res = task.measure(task.ExactMaxSim(), multi, k=10, latency_queries=1)[1]
            table[f"multi-vector MaxSim d={d}"] = _recall(res.ids, ds.qrels)
            free = optimise_free_embeddings(qrels_matrix, d, **opt)
            ids = (free.queries @ free.docs.T).topk(10, dim=1).indices
            table[f"single free embedding d={d}"] = {**_recall(ids, ds.qrels), "top2_exact": free.accuracy}
            torch.manual_seed(0)
            enc = SingleVector(64, d)
            task.train(enc, words64, steps=cfg["train_steps"], batch_size=64)
            res = task.measure(enc, words64, k=10, latency_queries=1)[1]
            table[f"single trained encoder d={d}"] = _recall(res.ids, ds.qrels)
            if free.accuracy < 1.0:  # single vectors of this d cannot return every top-2 set of the corpus
                single = table[f"single free embedding d={d}"]["recall@2"]
                multi_r = table[f"multi-vector MaxSim d={d}"]["recall@2"]
                verdicts.append(free.accuracy < 1.0 and multi_r > single)
    ns = [crit[d] for d in cfg["dims"]]
    grows = all(b >= a for a, b in zip(ns, ns[1:], strict=False)) and ns[-1] > ns[0]
    passed = grows and bool(verdicts) and all(verdicts)
    summary = (f"critical n per d {dict(crit)} ({'grows' if grows else 'does not grow'} with d; fitted polynomial "
               f"coefficients {[round(c, 4) for c in coef]}); LIMIT-style set of {len(ds.docs)} docs / {len(ds.queries)} "
               "queries, recall@2 single free embedding vs MaxSim at the same d: "
               + ", ".join(f"d={d}: {table[f'single free embedding d={d}']['recall@2']:.3f} vs "
                           f"{table[f'multi-vector MaxSim d={d}']['recall@2']:.3f}" for d in cfg["limit_dims"])
               + f"; free single vectors fail to return every top-2 set at {len(verdicts)} of the d values")
    settings = {"quick": quick, "cpu_seconds": time.process_time() - cpu0, "k": 2, **{k: list(v) if isinstance(v, tuple) else v
                                                                                     for k, v in cfg.items()}, **opt,
                "loss": "multi-positive InfoNCE, each relevant doc a target over all docs", "threads": 1}
    return zoo.ClaimResult(plugin="limit-embed-bound", claim=CLAIM, passed=passed, table=table, summary=summary,
                           settings=settings, seconds=time.perf_counter() - t0)
