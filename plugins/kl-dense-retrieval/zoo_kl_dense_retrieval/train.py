"""Training on the wiki split, and the recipe of ``kl_dense_retrieval.wiki``: ``recipe(seed=0) -> (model, metrics)``."""
from __future__ import annotations

import logging
from typing import Any

import torch

from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData, wiki_split

log = logging.getLogger(__name__)

# the task's in-batch contrastive ``train`` with these settings, for every model here
STEPS, BATCH, LR = 600, 128, 3e-3


def fit(name: str, data: RetrievalData, *, seed: int = 0, steps: int = STEPS, batch_size: int = BATCH, lr: float = LR,
        **overrides: Any) -> tuple[torch.nn.Module, dict[str, float]]:
    """Build ``name`` after ``torch.manual_seed(seed)`` and train it on ``data.train``; return it and the training stats."""
    import zoo

    torch.manual_seed(seed)
    model = zoo.create(name, **overrides)
    stats = task.train(model, data, steps=steps, batch_size=batch_size, lr=lr, seed=seed)
    return model.eval(), stats


def test_metrics(model: torch.nn.Module, data: RetrievalData, latency_queries: int = 0) -> dict[str, float]:
    """nDCG@10, MRR, recall@10/100 (and latency, index bytes) of ``model`` on ``data`` (the task's ``measure``)."""
    m, _ = task.measure(model, data, k=100, latency_queries=latency_queries)
    return m


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``kl_dense_retrieval.wiki``: 600 steps (batch 128, Adam 3e-3) on Wikipedia leads 2000-3999.

    Metrics: the task's measures on leads 0-1999 and their queries.

    >>> model, metrics = wiki()     # doctest: +SKIP
    >>> metrics["ndcg@10"]          # doctest: +SKIP
    """
    data = wiki_split()
    model, stats = fit("kl_dense_retrieval", data, seed=seed)
    m = test_metrics(model, data)
    metrics = {k: float(m[k]) for k in ("ndcg@10", "mrr", "recall@1", "recall@10", "recall@100")}
    metrics["final_train_loss"] = float(stats["final_train_loss"])
    log.info("kl_dense_retrieval.wiki (seed %d): %s", seed, metrics)
    return model, metrics
