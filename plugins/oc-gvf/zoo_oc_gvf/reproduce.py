"""``zoo reproduce oc-gvf``: the object-centric GVF agent against control_toy's ``pixel_dqn`` (at its parameter count)
and ``random`` in the ``pixels`` mode (stationary and reward-switching runs of 1,500 lock-step steps x 16 envs; the
task explores epsilon-greedily for every row alike)."""
from __future__ import annotations

from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo.task import count_params, torch_threads
from zoo_task_control_toy import pixels as P
from zoo_task_control_toy import task

from .model import CPU, oc_gvf
from .plugin import CLAIM, TASK

QUICK_STEPS = 40
KEEP = ("return", "return_switch", "adapt", "pre_switch")


def row(*, seed: int, quick: bool, model: str) -> dict[str, float]:
    with torch_threads(1):
        torch.manual_seed(seed)
        ref = oc_gvf()
        net = ref if model == "oc_gvf" else task.build_baseline(model, params=count_params(ref), seed=seed,
                                                                 mode="pixels")
        m = P.evaluate_pixels(net, steps=QUICK_STEPS if quick else P.STEPS, seed=seed)
    return {"params": float(count_params(net)), **{k: m[k] for k in KEEP}}


ROWS = [Row(name, row, {"model": name}) for name in ("oc_gvf", "pixel_dqn", "random")]

CHECKS = [
    Check("oc_gvf", "return", baseline="pixel_dqn", margin=-0.02),
    Check("oc_gvf", "return_switch", baseline="pixel_dqn", margin=-0.02),
    Check("oc_gvf", "adapt", baseline="pixel_dqn", margin=0.0),
]

SETTINGS: dict[str, Any] = {**CPU, "steps": P.STEPS, "quick_steps": QUICK_STEPS}

REPRODUCTION = Claim(
    plugin="oc-gvf", claim=CLAIM, task=TASK, seeds=(0, 1, 2), quick_seeds=(0,), rows=ROWS, checks=CHECKS,
    settings=SETTINGS, task_options={"mode": "pixels"},
    notes="margins fixed before the recorded run (after one pilot seed of an earlier head variant): 'competitive' = "
          "oc_gvf's reward per step no more than 0.02 below the DQN's (about a tenth of the optimum ~0.2) in the "
          "stationary run and at the end of the switching run; 'faster adaptation' = oc_gvf's mean reward per step "
          "in the first quarter after the switch at least the DQN's. pixel_dqn is the task's MLP Q-network on the raw "
          "frames sized to oc_gvf's parameter count (replay, target network, same lr 1e-3, same exploration).",
)
