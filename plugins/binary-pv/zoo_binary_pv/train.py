"""The recipe of ``binary_pv.wiki``: Binary PV-DBOW (CPU defaults) fit on the 9,033 training leads of the wiki split."""
from __future__ import annotations

import logging
import time

import torch

from zoo_task_embedding_quality.data import load_corpus

from .hashing import chance_precision, topic_precision, wiki_test_leads

log = logging.getLogger(__name__)


def wiki(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``binary_pv.wiki``: fit on ``load_corpus("wiki", split="train")``; scored by Hamming-ranking precision@10 by
    topic over the 1,000 test leads (codes inferred for them, as ``zoo reproduce binary-pv`` does).

    >>> model, metrics = wiki()  # doctest: +SKIP
    >>> model.embed(["Paris is the capital of France."]).shape  # doctest: +SKIP
    torch.Size([1, 32])
    """
    import zoo

    model = zoo.create("binary_pv")
    t0 = time.perf_counter()
    fig = model.fit(load_corpus("wiki", split="train"), seed=seed)
    fit_s = time.perf_counter() - t0
    texts, labels = wiki_test_leads()
    metrics = {"p_at_10": topic_precision(model.embed(texts), labels, metric="hamming", k=10),
               "chance": chance_precision(labels), "bits": float(model.bits), "vocabulary": fig["vocabulary"],
               "documents": fig["documents"], "fit_seconds": fit_s}
    log.info("binary_pv.wiki (seed %d): %s", seed, metrics)
    return model.eval(), metrics
