"""The recipe of ``byte_recconv_ae.stdlib``: the CPU preset autoencoding the stdlib docstring sentences."""
from __future__ import annotations

import logging

import torch

from zoo_task_embedding_quality import task
from zoo_task_embedding_quality.data import load_corpus

from .reproduce import CORPUS, STEPS

log = logging.getLogger(__name__)


def stdlib(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``byte_recconv_ae.stdlib``: 600 Adam steps on the embedding_quality ``stdlib`` sentences (every 10th held out);
    metrics: held-out byte accuracy and exact-sentence rate, and the task's sentence-mode wiki scores.

    >>> model, metrics = stdlib()  # doctest: +SKIP
    >>> model.embed(["Return the sum of a and b."]).shape  # doctest: +SKIP
    torch.Size([1, 512])
    """
    import zoo

    torch.manual_seed(seed)
    model = zoo.create("byte_recconv_ae")
    fig = model.fit(load_corpus(CORPUS), steps=STEPS, seed=seed)
    res = task.evaluate(model, mode="sentence", corpus="wiki", seed=seed, baselines=[], train_model=False)
    metrics = {"heldout_byte_acc": fig["heldout_byte_acc"], "heldout_exact": fig["heldout_exact"],
               **{k: float(res.metrics[k]) for k in ("topic_acc", "recall@1", "mrr", "lee_spearman")}}
    log.info("byte_recconv_ae.stdlib (seed %d): %s", seed, metrics)
    return model.eval(), metrics
