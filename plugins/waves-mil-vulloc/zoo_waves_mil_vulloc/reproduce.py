"""``zoo reproduce waves-mil-vulloc``: WAVES against the task's attention-MIL baseline on the synthetic code bags.

Each row trains one seeded model with ``code_text``'s own loop (``task.evaluate(..., mode="vulloc", baselines=[])``:
2,000 training functions, batches of 32, Adam lr 1e-3, function labels only; WAVES through its ``loss(output,
labels)``) and scores it on the 500 test functions: function ``f1``/``accuracy``, statement ``top1``/``top3`` on the
vulnerable ones. ``attn_mil`` and ``mean_bag`` are ``task.build_baseline(name, params=count_params(waves))``, trained
for the same steps on the same batches.
"""
from __future__ import annotations

from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_code_text import task

from .model import CPU, waves_mil
from .plugin import CLAIM, TASK

STEPS, QUICK_STEPS = task.DEFAULT_STEPS["vulloc"], 60  # the task's 400
NON_INFERIORITY = 0.05


def build(model: str, seed: int) -> torch.nn.Module:
    """The seeded, untrained WAVES model or a task baseline sized to it."""
    torch.manual_seed(seed)
    waves = waves_mil()
    return waves if model == "waves" else task.build_baseline(model, params=count_params(waves), seed=seed)


def bag_row(*, seed: int, quick: bool, steps: int, model: str) -> dict[str, float]:
    """One model trained on function labels and scored (the task's vulloc metrics, ``params``)."""
    net = build(model, seed)
    res = task.evaluate(net, mode="vulloc", steps=steps, seed=seed, baselines=[])
    return {k: v for k, v in res.metrics.items() if k in ("params", "final_train_loss", "f1", "accuracy", "top1", "top3")}


ROWS = [Row(name, bag_row, {"model": name}) for name in ("waves", "attn_mil", "mean_bag")]
CHECKS = [Check("waves", "f1", baseline="attn_mil", margin=-NON_INFERIORITY),
          Check("waves", "top1", baseline="attn_mil", margin=0.0),
          Check("waves", "top3", baseline="attn_mil", margin=0.0)]

SETTINGS: dict[str, Any] = {**CPU, "non_inferiority_f1": NON_INFERIORITY}

REPRODUCTION = Claim(
    plugin="waves-mil-vulloc", claim=CLAIM, task=TASK, steps=STEPS, quick_steps=QUICK_STEPS, seeds=(0, 1, 2, 3, 4),
    quick_seeds=(0,), rows=ROWS, checks=CHECKS, settings=SETTINGS, task_options={"mode": "vulloc"},
    notes=f"margins fixed before the recorded run: function F1 non-inferiority of {NON_INFERIORITY} (the abstract "
          "claims 'comparable' detection; 0.05 is a third of the F1 gap between attn_mil and mean_bag in the task's "
          "README, so a detector that loses it is not comparable); localisation top-1 and top-3 must beat attn_mil's "
          "by >= 0 (the abstract claims state-of-the-art localisation, not by how much). mean_bag is reported only. "
          "No statement label reaches training: the task's loop passes the model's output and the function labels "
          "to WAVES.loss, and a test trains with the statement positions scrambled and gets the same weights. The "
          "pseudo-labelling rule (top-1 statement of vulnerable functions, all statements of safe ones, from step "
          "100) is ours: only the abstract and secondary summaries of the paper could be read. The first recorded run "
          "(same checks and seeds) weighted every pseudo-labelled statement alike: safe functions' ~11 negatives per "
          "positive pulled all scores below 0 and two of five seeds predicted no function vulnerable (F1 0.03; "
          "verdict inconclusive: top-1/top-3 reproduced, F1 not decided); the statement loss now balances pseudo "
          "positives and negatives.",
)
