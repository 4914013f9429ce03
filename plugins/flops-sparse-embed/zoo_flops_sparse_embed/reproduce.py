"""``zoo reproduce flops-sparse-embed``: accuracy vs multiplications per query, FLOPs vs L1 vs dense PCA.

Protocol (the paper's speed-vs-accuracy comparison at small scale). Data: the task's wiki corpus,
Wikipedia leads as frozen all-MiniLM-L6-v2 sentence vectors (384-d); test = leads 0-1999 and
their queries, training = leads 2000-3999 and theirs (``zoo_task_retrieval.data.wiki_split``).
Sparse models: ``flops_sparse_embed`` (384 -> 1024, ReLU, L2 norm) trained by the task's in-batch
contrastive ``train`` (600 steps, batch 128, Adam 3e-3, seed 0) with the FLOPs regulariser at
several weights, with the L1 regulariser at several weights, and with none; each is searched
through an inverted index whose multiplications per query are counted exactly. Dense baselines:
PCA of the MiniLM vectors (fitted on the training split) to d dimensions, searched exactly (N * d
multiplications per query), and the raw 384-d vectors (the task's exact-dense baseline). Every
point reports nDCG@10, MRR, recall@100, FLOPs per query (measured, and the paper's N sum_j p_j^2),
non-zeros and how evenly they spread (``uniformity`` 1 = even). The claim holds when no
FLOPs-regularised point is dominated: no L1, PCA or raw point has at most its FLOPs and an
nDCG@10 higher by more than ``MARGIN``.
"""
from __future__ import annotations

import logging
import time

import torch
from torch.nn import functional as F

import zoo
from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData

from zoo_task_retrieval.data import synthetic_split, wiki_split
from .train import STEPS, fit, sparse_metrics

log = logging.getLogger(__name__)

MARGIN = 0.01
FULL = {"steps": STEPS, "n_docs": 4000, "n_test_docs": 2000, "flops_lams": (0.3, 1.0, 3.0, 10.0),
        "l1_lams": (0.003, 0.01, 0.03, 0.1), "pca_dims": (8, 16, 32, 64, 128)}
QUICK = {"steps": 5, "n_docs": 200, "n_test_docs": 0, "flops_lams": (1.0,), "l1_lams": (0.01,), "pca_dims": (16,)}


def pca_data(data: RetrievalData, d: int) -> RetrievalData:
    """Test queries and docs projected on the top ``d`` principal axes of the training vectors, renormalised."""
    x = torch.cat([data.train.docs, data.train.queries]).float()
    mu = x.mean(0)
    axes = torch.linalg.svd(x - mu, full_matrices=False).Vh[:d].T

    def project(v: torch.Tensor) -> torch.Tensor:
        return F.normalize((v.float() - mu) @ axes, dim=-1)

    return RetrievalData(project(data.queries), project(data.docs), data.qrels, "single", name=f"wiki-pca{d}")


def dense_metrics(data: RetrievalData) -> dict[str, float]:
    """Exact dense search (the task's exact-dense baseline) and its N * d multiplications per query."""
    m, _ = task.measure(task.ExactDense(), data, k=100, latency_queries=16)
    out = {k: float(m[k]) for k in ("ndcg@10", "mrr", "recall@100", "latency_ms", "index_bytes")}
    out["flops"] = float(data.n_docs * data.docs.shape[1])
    return out


def dominated(point: dict[str, float], others: list[dict[str, float]], margin: float = MARGIN) -> bool:
    """True when some other point costs no more FLOPs and is better by more than ``margin`` nDCG@10.

    >>> dominated({"flops": 10, "ndcg@10": 0.5}, [{"flops": 8, "ndcg@10": 0.52}])
    True
    """
    return any(o["flops"] <= point["flops"] and o["ndcg@10"] > point["ndcg@10"] + margin for o in others)


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Train the FLOPs and L1 sweeps, measure them and the dense baselines; return the trade-off table.

    Args:
        quick: 5 training steps, one point per method, on the task's synthetic single-vector corpus (d=384,
            200 docs) instead of wiki (seconds, no encoding; for tests). The numbers then mean nothing.
    """
    from .plugin import CLAIM

    t0, cpu0 = time.perf_counter(), time.process_time()
    cfg = QUICK if quick else FULL
    data = synthetic_split(cfg["n_docs"]) if quick else wiki_split(cfg["n_docs"], cfg["n_test_docs"])
    table: dict[str, dict[str, float]] = {}
    flops_rows, base_rows = [], []
    with task.cpu_threads(1):
        for reg, lams in (("flops", cfg["flops_lams"]), ("l1", cfg["l1_lams"]), ("none", (0.0,))):
            for lam in lams:
                model, stats = fit(data, steps=cfg["steps"], regularizer=reg, lam=lam)
                row = {**sparse_metrics(model, data), "final_train_loss": stats["final_train_loss"]}
                name = f"sparse 1024-d, {reg} reg, lambda={lam:g}" if reg != "none" else "sparse 1024-d, no reg (ReLU only)"
                table[name] = row
                (flops_rows if reg == "flops" else base_rows).append(row)
        for d in cfg["pca_dims"]:
            row = dense_metrics(pca_data(data, d))
            table[f"dense PCA d={d}"] = row
            base_rows.append(row)
        row = dense_metrics(data)
        table["dense raw MiniLM d=384 (task exact-dense)"] = row
        base_rows.append(row)
    beaten = [name for name, r in table.items() if any(r is f for f in flops_rows) and dominated(r, base_rows)]
    passed = not beaten
    full = data.n_docs * data.docs.shape[1]
    best = max(flops_rows, key=lambda r: r["ndcg@10"])
    summary = (f"{len(flops_rows)} FLOPs-regularised points, {len(base_rows)} baseline points (L1, ReLU-only, PCA, raw) "
               f"on {data.n_queries} queries over {data.n_docs} leads; dominated FLOPs points (a baseline with <= FLOPs "
               f"and > +{MARGIN} nDCG@10): {beaten or 'none'}. Best FLOPs point: nDCG@10 {best['ndcg@10']:.3f} at "
               f"{best['flops']:.0f} multiplications per query ({full / max(best['flops'], 1):.1f}x fewer than exact "
               f"384-d search, whose nDCG@10 is {table['dense raw MiniLM d=384 (task exact-dense)']['ndcg@10']:.3f})."
               + (" quick=True: a smoke run, not a measurement." if quick else ""))
    return zoo.ClaimResult(plugin="flops-sparse-embed", claim=CLAIM, passed=passed, table=table, summary=summary,
                           seconds=time.perf_counter() - t0,
                           settings={"cpu_seconds": time.process_time() - cpu0, "quick": quick,
                                     **{k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()},
                                     "margin": MARGIN, "seed": 0, "threads": 1, "data": data.info})
