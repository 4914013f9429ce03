"""The recipe of ``mrbert.wiki``: the CPU-default MrBERT trained on the wiki (description, lead) pairs."""
from __future__ import annotations

import logging

import torch

from zoo_task_embedding_quality.data import load_corpus

log = logging.getLogger(__name__)


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``mrbert.wiki``: 300 MRL contrastive steps on the 8,878 training articles, scored as ``zoo reproduce mrbert``
    scores its rows (description -> lead recall@1 / MRR over the 1,000 test leads at 8, 16, 32 and 64 dims).

    >>> model, metrics = wiki()  # doctest: +SKIP
    >>> model.embed(["French painter"], dim=16).shape  # doctest: +SKIP
    torch.Size([1, 16])
    """
    import zoo

    from .reproduce import DIMS, retrieval_set, truncated_scores

    model = zoo.create("mrbert")
    fig = model.fit(load_corpus("wiki", split="train"), seed=seed)
    queries, leads, target = retrieval_set(False)
    metrics = {**truncated_scores(model.embed(queries), model.embed(leads), target, DIMS),
               "train_seconds": fig["train_seconds"], "vocabulary": fig["vocabulary"]}
    log.info("mrbert.wiki (seed %d): %s", seed, metrics)
    return model.eval(), metrics
