"""Training and measuring sparse embedders on the wiki split; the recipe of ``flops_sparse_embed.wiki``."""
from __future__ import annotations

import logging
from typing import Any

import torch

from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData, wiki_split

from .model import expected_flops, query_flops

log = logging.getLogger(__name__)

STEPS, BATCH, LR = 600, 128, 3e-3  # the task's in-batch contrastive ``train`` with these settings


def fit(data: RetrievalData, *, seed: int = 0, steps: int = STEPS, **overrides: Any) -> tuple[torch.nn.Module, dict[str, float]]:
    """``flops_sparse_embed`` (with ``overrides``, e.g. ``regularizer="l1", lam=0.01``) trained on ``data.train``.

    The regulariser's ramp spans the first half of training.
    """
    import zoo

    torch.manual_seed(seed)
    overrides.setdefault("ramp_steps", steps // 2)
    model = zoo.create("flops_sparse_embed", **overrides)
    stats = task.train(model, data, steps=steps, batch_size=BATCH, lr=LR, seed=seed)
    return model.eval(), stats


def sparse_metrics(model: torch.nn.Module, data: RetrievalData, latency_queries: int = 16) -> dict[str, float]:
    """The task's retrieval metrics plus the cost of the inverted index.

    ``flops``: multiplications per query, counted exactly on the test corpus; ``expected_flops``:
    the paper's N * sum_j p_j^2; ``nnz_doc``/``nnz_query``: mean non-zeros; ``uniformity``:
    sum_j p_j^2 * D / nnz^2 (1 when the non-zeros are spread evenly over the D dimensions).
    """
    m, _ = task.measure(model, data, k=100, latency_queries=latency_queries)
    with torch.no_grad():
        docs, queries = model.embed(data.docs), model.embed(data.queries)
    nnz = float((docs != 0).sum(1).float().mean())
    per_dim = (docs != 0).sum(0)
    out = {k: float(m[k]) for k in ("ndcg@10", "mrr", "recall@100", "latency_ms", "index_bytes")}
    out.update(flops=float(query_flops(queries, per_dim).mean()), expected_flops=expected_flops(docs), nnz_doc=nnz,
               nnz_query=float((queries != 0).sum(1).float().mean()),
               uniformity=expected_flops(docs) * docs.shape[1] / (len(docs) * nnz ** 2) if nnz else float("nan"))
    return out


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``flops_sparse_embed.wiki``: the default model (FLOPs regulariser, lambda = 1) trained 600 steps on leads 2000-3999.

    Metrics: nDCG@10, MRR, recall@100 and measured FLOPs per query on leads 0-1999 and their queries.

    >>> model, metrics = wiki()        # doctest: +SKIP
    >>> metrics["flops"] < 2000 * 384  # doctest: +SKIP
    True
    """
    data = wiki_split()
    model, stats = fit(data, seed=seed)
    metrics = {k: v for k, v in sparse_metrics(model, data, latency_queries=0).items() if k != "latency_ms"}
    metrics["final_train_loss"] = float(stats["final_train_loss"])
    log.info("flops_sparse_embed.wiki (seed %d): %s", seed, metrics)
    return model, metrics
