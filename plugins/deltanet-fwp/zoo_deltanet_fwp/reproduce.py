"""``zoo reproduce deltanet-fwp``: delta rule vs additive rule (and softmax attention) on associative recall.

Every row trains one model with ``algorithmic_seq``'s own loop (``task.train``: Adam, batches of 64 problems of one
size, gradient clipping at 1) on 1..32 key-value pairs for the same number of steps, and scores it on 256 fresh
problems (``task.score``) at every size of ``SIZES``. The fast-weight models have 16 DPFP features per head (DPFP-2
on 4-dimensional keys, one head), so 24 and 32 pairs exceed what the memory can hold orthogonally; the two models
differ only in the update rule. The softmax transformer is the task's baseline at the delta model's parameter count.
The ``*_update`` rows train and score the same two models on ``recall_update`` (Schlag et al. 2021 §4.1 setting 2:
every key is stored, then re-stored with new values; the answer is the latest), where an add-only memory holds the
old and the new value at once and the delta rule can replace one with the other.
"""
from __future__ import annotations

from typing import Any

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_algorithmic_seq import task

from .model import CPU
from .plugin import CLAIM

TRAIN_SIZES = (1, 32)
SIZES = (4, 8, 12, 16, 24, 32)
QUICK_SIZES = (4, 24, 32)
UPDATE_QUICK_SIZES = (8, 24)
STEPS, QUICK_STEPS = 1000, 10
LR = 3e-3
MARGIN = 0.05
FEATURES = 2 * CPU["nu"] * CPU["key_dim"]


def _fit_and_score(model: torch.nn.Module, *, seed: int, steps: int, quick: bool, lr: float = LR,
                   mode: str = "recall") -> dict[str, float]:
    fit = task.train(model, mode, steps=steps, seed=seed, sizes=TRAIN_SIZES, lr=lr)
    out = {"params": float(count_params(model)), "final_train_loss": fit["final_train_loss"],
           "train_seconds": fit["train_seconds"]}
    for s in (UPDATE_QUICK_SIZES if mode == "recall_update" else QUICK_SIZES) if quick else SIZES:
        out[f"acc@{s}"] = task.score(model, mode, s, seed=seed)["acc"]
    return out


def fwp_row(*, seed: int, quick: bool, steps: int, name: str, mode: str = "recall") -> dict[str, float]:
    """``name`` (fwp_delta_lm / fwp_additive_lm at the CPU defaults) trained and scored on ``mode``."""
    torch.manual_seed(seed)
    return _fit_and_score(zoo.create(name), seed=seed, steps=steps, quick=quick, mode=mode)


def transformer_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """The task's softmax transformer at the delta model's parameter count, same steps and data, at the task's own
    learning rate (a 1-seed pilot at LR diverged to chance: final loss 3.89 after 1,000 steps)."""
    params = count_params(zoo.create("fwp_delta_lm"))
    base = task.build_baseline("transformer", params=params, seed=seed, mode="recall", max_pairs=max(SIZES))
    return _fit_and_score(base, seed=seed, steps=steps, quick=quick, lr=task.LR)


SETTINGS: dict[str, Any] = {"train_sizes": list(TRAIN_SIZES), "test_sizes": list(SIZES), "lr": LR,
                            "transformer_lr": task.LR,
                            "model": dict(CPU), "features_per_head": FEATURES}

REPRODUCTION = Claim(
    plugin="deltanet-fwp", claim=CLAIM, task="algorithmic_seq", steps=STEPS, quick_steps=QUICK_STEPS,
    seeds=(0, 1, 2), quick_seeds=(0,),
    rows=[Row("fwp_delta_lm", fwp_row, {"name": "fwp_delta_lm"}),
          Row("fwp_additive_lm", fwp_row, {"name": "fwp_additive_lm"}),
          Row("transformer", transformer_row),
          Row("fwp_delta_update", fwp_row, {"name": "fwp_delta_lm", "mode": "recall_update"}),
          Row("fwp_additive_update", fwp_row, {"name": "fwp_additive_lm", "mode": "recall_update"})],
    checks=[Check("fwp_delta_lm", "acc@24", baseline="fwp_additive_lm", margin=MARGIN),
            Check("fwp_delta_lm", "acc@32", baseline="fwp_additive_lm", margin=MARGIN),
            Check("fwp_delta_update", "acc@8", baseline="fwp_additive_update", margin=MARGIN),
            Check("fwp_delta_update", "acc@24", baseline="fwp_additive_update", margin=MARGIN)],
    settings=SETTINGS,
    task_options={"mode": "recall", "steps": STEPS, "train_sizes": TRAIN_SIZES, "test_sizes": SIZES, "lr": LR},
    notes=f"margins fixed before the recorded run: recall accuracy of the delta-rule model minus the additive-rule "
          f"model >= {MARGIN} at 24 and 32 pairs, both beyond the {FEATURES} features of a head (the catalog's claim: "
          f"the delta rule overcomes the additive rule's capacity limit once pairs exceed the feature dimension). "
          f"{MARGIN} is about twice the binomial standard error of one 256-query accuracy near 0.5 (0.031), so a "
          "smaller gap is noise. Same architecture, steps, data stream and learning rate for both; the softmax "
          "transformer (task baseline, matched parameters, learned positions up to 66 tokens, trained at the task's "
          "lr 1e-3 because it diverged at 3e-3 in the pilot) and the sizes within "
          "capacity (4-16 pairs) are reported only. A 1-seed pilot at 500 and 1,500 steps (train 1-32 pairs) "
          "gave delta 0.45/0.52 vs additive 0.45/0.55 at 32 pairs and delta 0.78 vs additive 0.70 at 16 pairs "
          "(1,500 steps), so the outcome was not known to favour the claim. The two *_update rows and their checks "
          "were added after the first recording (which found no delta-rule advantage on plain recall, where no key is "
          "ever re-stored): on recall_update (Schlag et al. 2021 §4.1 setting 2, every key stored then re-stored once "
          f"on average with a new value) delta - additive >= {MARGIN} (the same binomial reasoning) at 8 distinct keys "
          "(within a head's capacity: overwriting alone) and at 24 (beyond it); fixed before their first run, no "
          "pilot.",
)
