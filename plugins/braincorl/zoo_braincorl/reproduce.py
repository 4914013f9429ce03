"""``zoo reproduce braincorl``: BraInCoRL meta-trained on voxel_encode's meta-train voxels, then given 5..100 shots of
new voxels, against per-voxel ridge on the same shots (lambda by leave-one-out CV within them).

Every row is ``voxel_encode.evaluate(...)`` with the same seed, so it sees the same images, voxels and context draws:
``braincorl`` (meta-trained for ``STEPS`` steps), ``ridge`` (same shots), and the reported-only ``ridge_full`` (all
1497 meta-train images of each voxel: the many-shot reference) and ``mean_response`` (no context). ``scaling`` is
``r_c100 - r_c10`` of the row.
"""
from __future__ import annotations

from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo_task_voxel_encode import task
from zoo_task_voxel_encode.baselines import build_baseline

from .model import braincorl
from .plugin import CLAIM

STEPS, QUICK_STEPS = 4000, 60
CONTEXTS = (5, 10, 20, 50, 100)
TASK_OPTIONS: dict[str, Any] = {"contexts": CONTEXTS, "episodes": 2, "n_train_voxels": 2000, "n_test_voxels": 200,
                                "snr": 1.0, "k": 4}
QUICK_OPTIONS: dict[str, Any] = {**TASK_OPTIONS, "episodes": 1, "n_test_voxels": 40}
MARGIN_SMALL, MARGIN_SCALING = 0.05, 0.05


def _row(metrics: dict[str, float]) -> dict[str, float]:
    out = {k: v for k, v in metrics.items() if k.startswith("r_c") or k in ("params", "train_seconds")}
    out["scaling"] = metrics["r_c100"] - metrics["r_c10"]
    return out


def braincorl_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """Meta-train a fresh CPU-preset BraInCoRL (initialised from ``seed``) for ``steps`` and score it."""
    torch.manual_seed(seed)
    res = task.evaluate(braincorl(), steps=steps, seed=seed, baselines=[], **(QUICK_OPTIONS if quick else TASK_OPTIONS))
    return _row(res.metrics)


def baseline_row(*, seed: int, quick: bool, name: str) -> dict[str, float]:
    """The task's baseline ``name`` on the same data and draws (``ridge_full`` through evaluate's reference path)."""
    opts = QUICK_OPTIONS if quick else TASK_OPTIONS
    if name == "ridge":
        res = task.evaluate(build_baseline("ridge"), seed=seed, baselines=[], **opts)
        return _row(res.metrics)
    res = task.evaluate(build_baseline("ridge"), seed=seed, baselines=[name], **{**opts, "contexts": (10, 100)})
    return {k: v for k, v in res.baselines[name].items() if k in ("r_c10", "r_c100")}


ROWS = [Row("braincorl", braincorl_row), Row("ridge", baseline_row, {"name": "ridge"}),
        Row("ridge_full", baseline_row, {"name": "ridge_full"}), Row("mean_response", baseline_row, {"name": "mean_response"})]
CHECKS = [Check("braincorl", f"r_c{c}", baseline="ridge", margin=MARGIN_SMALL) for c in (5, 10, 20)]
CHECKS.append(Check("braincorl", "scaling", margin=MARGIN_SCALING))

REPRODUCTION = Claim(
    plugin="braincorl", claim=CLAIM, task="voxel_encode", seeds=(0, 1, 2), quick_seeds=(0,), steps=STEPS,
    quick_steps=QUICK_STEPS, rows=ROWS, checks=CHECKS, task_options=TASK_OPTIONS,
    settings={"preset": "cpu", "contexts": CONTEXTS, "margin_small": MARGIN_SMALL, "margin_scaling": MARGIN_SCALING},
    notes=f"margins fixed before the first recorded run, from the claim: in the low-data regime (5, 10 and 20 shots) "
          f"BraInCoRL's mean Pearson r on held-out images must exceed per-voxel CV ridge on the same shots by >= "
          f"{MARGIN_SMALL} (paired by seed: same voxels, images and context draws), a gap well above the spread of "
          f"ridge across seeds; test-time scaling: BraInCoRL's r at 100 shots must exceed its r at 10 shots by >= "
          f"{MARGIN_SCALING}. ridge meets the scaling check too (it is there to show that the in-context model keeps "
          "using more shots, as the paper reports), so the small-context checks are the ones that tell the method "
          "from its baseline. ridge_full (all meta-train images) and mean_response (no context) are reported only. "
          "Ridge has no parameters to match; BraInCoRL's count is in the table. History: the first recorded run "
          "(1500 steps) was not reproduced (gains over ridge +0.038 / +0.023 / +0.008 at 5 / 10 / 20 shots) with "
          "BraInCoRL below ridge at 50-100 shots, a sign of undertraining; meta-training was raised to 4000 steps "
          "(after one 4000-step check on seed 0), margins unchanged. 4000 steps x 3 seeds take about 10 minutes of "
          "one core, over this wave's 6-minute target.",
)
