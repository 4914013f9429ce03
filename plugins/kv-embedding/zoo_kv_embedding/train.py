"""The recipe of ``kv_embedding.wiki``: the word-level GPT trained on the wiki training leads, frozen, layers by TwoNN."""
from __future__ import annotations

import logging

import torch

from zoo_task_embedding_quality import task

log = logging.getLogger(__name__)

CARD_METRICS = ("topic_acc", "recall@1", "recall@10", "mrr", "lee_spearman", "lm_final_loss", "lm_train_seconds",
                "rerouted_layer0", "rerouted_layer1")


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``kv_embedding.wiki``: fit (CPU defaults) on the 9,033 training leads and scored in sentence mode.

    Metrics: the task's sentence mode (topic probe, description -> lead retrieval over the 1,000 test leads, Lee).

    >>> model, metrics = wiki()  # doctest: +SKIP
    >>> model.embed(["Paris is the capital of France."]).shape  # doctest: +SKIP
    torch.Size([1, 64])
    """
    import zoo

    model = zoo.create("kv_embedding")
    res = task.evaluate(model, mode="sentence", corpus="wiki", seed=seed, baselines=[])
    metrics = {k: float(res.metrics[k]) for k in CARD_METRICS if k in res.metrics}
    log.info("kv_embedding.wiki (seed %d): %s", seed, metrics)
    return model.eval(), metrics
