"""The recipe of ``fasttext_subword.wiki``: subword skip-gram (CPU defaults) fit on the embedding_quality wiki corpus."""
from __future__ import annotations

import logging

import torch

from zoo_task_embedding_quality import task

from .reproduce import all_pair_scores

log = logging.getLogger(__name__)

CARD_METRICS = ("ws353", "simlex", "analogy", "analogy_semantic", "analogy_syntactic", "ws353_coverage",
                "simlex_coverage", "analogy_coverage", "vocabulary", "fit_seconds")


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``fasttext_subword.wiki``: fit on the 10,033 Wikipedia leads (min_count 5) and scored in word mode.

    Metrics: WS353 / SimLex Spearman and Google-analogy accuracy over the in-vocabulary items (2,000 analogy
    questions drawn with the seed), and WS353 / SimLex over all pairs (``*_all``: every word gets a vector).

    >>> model, metrics = wiki()  # doctest: +SKIP
    >>> model.embed(["paris", "unfrenchified"]).shape  # doctest: +SKIP
    torch.Size([2, 100])
    """
    import zoo

    model = zoo.create("fasttext_subword")
    res = task.evaluate(model, mode="word", corpus="wiki", seed=seed, baselines=[])
    metrics = {k: float(res.metrics[k]) for k in CARD_METRICS if k in res.metrics}
    metrics.update({k: v for k, v in all_pair_scores(model).items() if not k.endswith("_embedded")})
    log.info("fasttext_subword.wiki (seed %d): %s", seed, metrics)
    return model.eval(), metrics
