"""The recipe of ``quick_thoughts.wiki``: the CPU default trained on the wiki leads' consecutive sentences."""
from __future__ import annotations

import logging

import torch

from zoo_task_embedding_quality import task

log = logging.getLogger(__name__)

EPOCHS = 5
CARD_METRICS = ("topic_acc", "recall@1", "recall@10", "mrr", "lee_spearman", "vocabulary", "train_steps",
                "train_cpu_seconds", "final_train_loss")


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``quick_thoughts.wiki``: fit for ``EPOCHS`` epochs on the training leads and scored in sentence mode.

    Metrics: the task's 12-topic probe accuracy on the 1,000 test leads, description -> lead retrieval and the Lee
    document-similarity Spearman.

    >>> model, metrics = wiki()  # doctest: +SKIP
    >>> model.embed(["The cat sat on the mat."]).shape  # doctest: +SKIP
    torch.Size([1, 256])
    """
    import zoo
    from zoo.task import torch_threads

    model = zoo.create("quick_thoughts")
    # one thread, as the claim runs: two OpenMP threads on a busy 2-core machine spin-wait far more than they compute
    with torch_threads(1):
        res = task.evaluate(model, mode="sentence", corpus="wiki", seed=seed, baselines=[], steps=EPOCHS)
    metrics = {k: float(res.metrics[k]) for k in CARD_METRICS if k in res.metrics}
    log.info("quick_thoughts.wiki (seed %d): %s", seed, metrics)
    return model.eval(), metrics
