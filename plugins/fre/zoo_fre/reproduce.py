"""``zoo reproduce fre``: FRE zero-shot against the task's goal-conditioned agent, per-task value iteration and random.

Every row pretrains one seeded agent with ``control_toy``'s gridworld protocol (``task.evaluate(..., mode="gridworld",
baselines=[])``: 64 reward-free random walks, ``STEPS`` optimiser steps) and scores its greedy policy exactly on 64
new reward functions per family, each given 32 reward-labelled states from the data. ``goal_conditioned`` is
``task.build_baseline("goal_conditioned", params=count_params(fre))`` trained for the same number of steps;
``per_task`` (value iteration on the nearest-sample reward, no pretraining) and ``random`` are reported only.
"""
from __future__ import annotations

from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_control_toy import task

from .model import CPU, fre
from .plugin import CLAIM, TASK

STEPS = 3000
QUICK_STEPS = 20
N_EVAL = 64


def build(model: str, seed: int) -> torch.nn.Module:
    """The seeded, untrained agent of row ``model``."""
    torch.manual_seed(seed)
    net = fre()
    if model == "fre":
        return net
    return task.build_baseline(model, params=count_params(net), seed=seed, mode="gridworld")


def zero_shot_row(*, seed: int, quick: bool, model: str) -> dict[str, float]:
    """One agent pretrained on the seeded offline data and scored zero-shot (the task's metrics, ``params``)."""
    net = build(model, seed)
    torch.manual_seed(seed)
    res = task.evaluate(net, mode="gridworld", steps=QUICK_STEPS if quick else STEPS, seed=seed, baselines=[],
                        n_eval=8 if quick else N_EVAL)
    return {k: v for k, v in res.metrics.items() if k.startswith("return") or k == "params"}


ROWS = [Row(m, zero_shot_row, {"model": m}) for m in ("fre", "goal_conditioned", "per_task", "random")]

CHECKS = [
    Check("fre", "return", baseline="goal_conditioned", margin=0.0),
    Check("fre", "return", baseline="random", margin=0.1),
]

SETTINGS: dict[str, Any] = {**CPU, "hidden": list(CPU["hidden"]), "steps": STEPS, "quick_steps": QUICK_STEPS,
                            "n_eval": N_EVAL}

REPRODUCTION = Claim(
    plugin="fre", claim=CLAIM, task=TASK, seeds=(0, 1, 2), quick_seeds=(0,), rows=ROWS, checks=CHECKS,
    settings=SETTINGS, task_options={"mode": "gridworld"},
    notes="margins fixed before the recorded run: (1) the paper reports FRE often above goal-conditioned baselines on "
          "goal and non-goal tasks, so its mean normalised return on the held-out goal and linear families must beat "
          "goal_conditioned's by > 0; (2) it must beat the random policy by >= 0.1 (a tenth of the gap between the "
          "worst and the optimal policy). per_task (value iteration on a nearest-sample reward map, using the "
          "task's own labels and no pretraining) is reported, not checked: in a 64-state world with 32 labels it is "
          "close to an oracle. History before this run (seed 0 only, no full claim run): a 600-step pilot of the IQL "
          "agent stayed at the random policy's level; VAE diagnostics showed posterior collapse under a constant KL "
          "and a ~500-step plateau without it; the CPU defaults were then set (value-iteration agent on the decoded "
          "reward, KL warm-up, lr 2e-3, 3,000 steps) and this claim written without a pilot of that configuration",
)
