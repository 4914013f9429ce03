"""The recipe of ``glyph_gpt.stdlib``: the CPU preset trained on char_lm at the claim's settings."""
from __future__ import annotations

import logging

import torch

from zoo_task_char_lm import task

from .reproduce import STEPS, TRAIN

log = logging.getLogger(__name__)


def stdlib(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``glyph_gpt.stdlib``: ``glyph_gpt`` (dim 64, depth 2, frozen glyph table) for 1,200 AdamW steps (lr 1e-2) on
    char_lm's training split; metric: validation bits/char on the whole held-out split.

    >>> model, metrics = stdlib()  # doctest: +SKIP
    >>> model(torch.zeros(1, 8, dtype=torch.long)).shape  # doctest: +SKIP
    torch.Size([1, 8, 97])
    """
    import zoo

    torch.manual_seed(seed)
    model = zoo.create("glyph_gpt")
    res = task.evaluate(model, steps=STEPS, seed=seed, baselines=[], **TRAIN)
    metrics = {k: float(res.metrics[k]) for k in ("val_bpc", "final_train_loss", "steps")}
    log.info("glyph_gpt.stdlib (seed %d): %s", seed, metrics)
    return model.eval(), metrics
