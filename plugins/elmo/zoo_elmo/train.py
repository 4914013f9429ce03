"""The recipe of ``elmo.wiki``: the CPU-default biLM fit on the embedding_quality wiki training leads."""
from __future__ import annotations

import logging

import torch

from zoo_task_embedding_quality import task
from zoo_task_embedding_quality.data import load_corpus

log = logging.getLogger(__name__)

BUDGET_S = 180.0  # one core: the biLM trains for this long (under one epoch of the 9,033 leads)
MIN_COUNT = 5  # the softmax vocabulary, as the task's word mode counts the wiki corpus
CARD_METRICS = ("topic_acc", "recall@1", "recall@10", "mrr", "lee_spearman", "final_train_loss", "train_steps",
                "vocabulary", "train_seconds")


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``elmo.wiki``: fit on the wiki leads outside the test split for ``BUDGET_S`` seconds, scored in sentence mode
    (topic probe, description -> lead retrieval, Lee document similarity) with the equal-weight mix (s = 0).

    >>> model, metrics = wiki()  # doctest: +SKIP
    >>> model.embed_tokens(["the bank of the river"])[0].shape  # doctest: +SKIP
    torch.Size([5, 64])
    """
    import zoo

    model = zoo.create("elmo", min_count=MIN_COUNT)
    fig = model.fit(load_corpus("wiki", "train"), seed=seed, budget_s=BUDGET_S)
    res = task.evaluate(model, mode="sentence", corpus="wiki", seed=seed, baselines=[], train_model=False)
    metrics = {k: float(v) for k, v in {**fig, **res.metrics}.items() if k in CARD_METRICS}
    log.info("elmo.wiki (seed %d): %s", seed, metrics)
    return model.eval(), metrics
