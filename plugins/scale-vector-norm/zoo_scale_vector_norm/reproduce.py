"""``zoo reproduce scale-vector-norm``: scale-vector strategies in a small pre-norm char_lm GPT.

Five ``STRATEGIES`` in the same GPT (RMSNorm, SwiGLU, QK-norm) trained alike by the task: no scale
vectors, standard scales without decay (the common recipe), standard with decay on the Input-Norm or on
the Output-Norm (QK-norm) scales, and unified. Each part of the claim is a check on validation bits/char.
"""
from __future__ import annotations

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_char_lm import task as char_lm

from .plugin import CLAIM, TASK

ROWS = ("none", "standard", "standard_wd_in", "standard_wd_out", "unified")
FULL = {"size": {"dim": 96, "depth": 3, "heads": 4, "block_size": 64}, "chars": None, "train": {}}
QUICK = {"size": {"dim": 32, "depth": 1, "heads": 2, "block_size": 32}, "chars": 40_000, "train": {"batch_size": 4}}


def strategy_row(*, seed: int, quick: bool, steps: int, strategy: str) -> dict[str, float]:
    """One seeded ``svn_gpt`` trained through the task: validation bits/char and the training figures."""
    cfg = QUICK if quick else FULL
    torch.manual_seed(seed)
    model = zoo.create("svn_gpt", strategy=strategy, **cfg["size"])
    res = zoo.evaluate(model, task=char_lm.NAME, steps=steps, seed=seed, baselines=[],
                       data=char_lm.load_corpus(max_chars=cfg["chars"]), **cfg["train"])
    return {k: res.metrics[k] for k in ("val_bpc", "final_train_loss", "params", "seconds_per_step")}


REPRODUCTION = Claim(
    plugin="scale-vector-norm", claim=CLAIM, task=TASK, steps=300, quick_steps=4, seeds=(0, 1, 2),
    rows=[Row(s, strategy_row, {"strategy": s}) for s in ROWS],
    checks=[Check("standard", "val_bpc", baseline="none", higher=False),  # removing scale vectors degrades
            Check("standard_wd_in", "val_bpc", baseline="standard", higher=False),  # WD helps Input-Norm scales
            Check("standard", "val_bpc", baseline="standard_wd_out", higher=False),  # WD hurts Output-Norm scales
            # the unified strategy beats the best standard baseline: beats each of them
            *(Check("unified", "val_bpc", baseline=b, higher=False) for b in ("standard", "standard_wd_in", "standard_wd_out"))],
    settings={"size": FULL["size"]},
    notes="margin 0 on every part: the paper states directions, not sizes; 'beats the best standard baseline' is one "
          "check per baseline (all must hold); final_train_loss is reported only",
)
