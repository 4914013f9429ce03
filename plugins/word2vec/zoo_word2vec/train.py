"""The recipe of ``word2vec_sgns.wiki``: skip-gram (CPU defaults) fit on the embedding_quality wiki corpus."""
from __future__ import annotations

import logging

import torch

from zoo_task_embedding_quality import task

log = logging.getLogger(__name__)

CARD_METRICS = ("ws353", "simlex", "analogy", "analogy_semantic", "analogy_syntactic", "analogy_coverage", "vocabulary",
                "fit_seconds")


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``word2vec_sgns.wiki``: fit on the 10,033 Wikipedia leads (min_count 5) and scored in word mode.

    Metrics: WS353 / SimLex Spearman and Google-analogy accuracy (2,000 in-vocabulary questions drawn with the seed).

    >>> model, metrics = wiki()  # doctest: +SKIP
    >>> model.embed(["paris", "france"]).shape  # doctest: +SKIP
    torch.Size([2, 100])
    """
    import zoo

    model = zoo.create("word2vec_sgns")
    res = task.evaluate(model, mode="word", corpus="wiki", seed=seed, baselines=[])
    metrics = {k: float(res.metrics[k]) for k in CARD_METRICS if k in res.metrics}
    log.info("word2vec_sgns.wiki (seed %d): %s", seed, metrics)
    return model.eval(), metrics
