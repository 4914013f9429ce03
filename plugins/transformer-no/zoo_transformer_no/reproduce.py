"""``zoo reproduce transformer-no``: the transformer neural operator vs the task's FNO on Burgers, 64 -> 128 points.

Each seed runs ``operator_learn.evaluate(transformer_no_1d (CPU preset), problem="burgers", steps=STEPS, seed=seed,
baselines=["fno"])`` once: the task trains the model and its FNO baseline (width matched to the model's parameter
count, within 10%) with the same Adam steps, data and batch size, and scores both on the test functions at the
training resolution (64 points) and zero-shot at 128 points; the transformer is also scored on random irregular
points of the fine grid. The ``fno`` row reads the baseline's numbers from the same call (one training per seed).
"""
from __future__ import annotations

from functools import cache
from typing import Any

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_operator_learn import task

from .model import PRESETS
from .plugin import CLAIM, TASK

PROBLEM, STEPS, QUICK_STEPS = "burgers", 500, 50
RATIO_LIMIT, GAP_LIMIT = 1.5, 0.1
KEEP = ("rel_l2", "rel_l2_2x", "rel_l2_irregular", "params", "seconds_per_step")


@cache
def _evaluate(seed: int, steps: int) -> tuple[dict[str, float], dict[str, float]]:
    torch.manual_seed(seed)
    model = zoo.create("transformer_no_1d")
    res = task.evaluate(model, problem=PROBLEM, steps=steps, seed=seed, baselines=["fno"])
    return dict(res.metrics), dict(res.baselines["fno"])


def _row(m: dict[str, float]) -> dict[str, float]:
    out = {k: float(m[k]) for k in KEEP if k in m}
    out["resolution_gap"] = abs(out["rel_l2_2x"] - out["rel_l2"]) / out["rel_l2"]
    return out


def tno_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """transformer_no_1d (CPU preset) trained and scored by the task; ``rel_l2_over_fno`` against the same call's FNO."""
    mine, fno = _evaluate(seed, steps)
    return {**_row(mine), "rel_l2_over_fno": mine["rel_l2"] / fno["rel_l2"]}


def fno_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """The task's FNO baseline (matched parameters) from the same evaluate call."""
    return _row(_evaluate(seed, steps)[1])


SETTINGS: dict[str, Any] = {"problem": PROBLEM, "transformer_no_1d": dict(PRESETS["cpu"]), "quadrature": "cell"}

REPRODUCTION = Claim(
    plugin="transformer-no", claim=CLAIM, task=TASK, seeds=(0, 1, 2), steps=STEPS, quick_steps=QUICK_STEPS,
    rows=[Row("transformer_no_1d", tno_row), Row("fno", fno_row)],
    checks=[Check("transformer_no_1d", "rel_l2_over_fno", margin=RATIO_LIMIT, higher=False),
            Check("transformer_no_1d", "resolution_gap", margin=GAP_LIMIT, higher=False)],
    settings=SETTINGS,
    task_options={"problem": PROBLEM},
    notes=f"margins fixed before the first recorded run: competitive error = the transformer's test relative L2 at 64 "
          f"points is at most {RATIO_LIMIT}x the matched-parameter FNO's on the same seed, data and steps (the paper "
          f"reports errors of the same order as FNO's, not lower; 1.5x is 'same order' with room for the small CPU "
          f"budget); consistent across resolutions = |rel_l2 at 128 - rel_l2 at 64| / rel_l2 at 64 <= {GAP_LIMIT} "
          f"(zero-shot on the same test functions; the FNO row shows the same quantity for comparison). Darcy 32 -> 64 "
          f"with transformer_no_2d is not in the recorded claim (CPU budget).",
)
