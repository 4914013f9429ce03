"""``zoo reproduce funcattn``: functional attention vs the FNO on 1D Burgers, trained at s=64, tested at 64/128/256.

Every row is ``operator_learn.evaluate(row_model, problem="burgers", test_res=(128, 256), baselines=[])``: the same
training functions at s=64, the same optimiser, loss (relative L2), steps and batch size, the same test functions
at 64, 128 and 256 points (zero-shot super-resolution: the test functions are solved fine and subsampled). The
``fno`` row is the task's FNO baseline (``build_baseline("fno", params=...)``) with its width matched to
FUNCATTN's parameter count. FUNCATTN is a points model: the task gives it the grid as a point set; its
``rel_l2_irregular`` (random points of the fine grid) is reported only.
"""
from __future__ import annotations

from typing import Any

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params

from .model import CPU
from .plugin import CLAIM

PROBLEM, TEST_RES = "burgers", (128, 256)
QUICK = {"n_train": 64, "n_test": 16}
STEPS, QUICK_STEPS = 500, 20
FNO_MARGIN, RES_MARGIN = -0.01, 0.01
METRICS = ("rel_l2_64", "rel_l2_128", "rel_l2_256", "rel_l2_irregular", "params", "seconds_per_step")


def _evaluate(model: Any, *, seed: int, steps: int, quick: bool) -> dict[str, float]:
    from zoo_task_operator_learn import task

    res = task.evaluate(model, problem=PROBLEM, steps=steps, seed=seed, test_res=TEST_RES, baselines=[],
                        **(QUICK if quick else {}))
    out = {k: float(res.metrics[k]) for k in METRICS if k in res.metrics}
    # the task names the training resolution's error rel_l2 and the 2x one rel_l2_2x
    out["rel_l2_64"], out["rel_l2_128"] = float(res.metrics["rel_l2"]), float(res.metrics["rel_l2_2x"])
    out["res_gap_256"] = out["rel_l2_256"] - out["rel_l2_64"]  # error at 4x the training resolution minus at 1x
    return out


def funcattn_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """FUNCATTN (CPU default) trained on Burgers at s=64."""
    return _evaluate(zoo.create("funcattn"), seed=seed, steps=steps, quick=quick)


def fno_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """The task's FNO1d, width matched to FUNCATTN's parameter count, on the same data and steps."""
    from zoo_task_operator_learn import task

    params = count_params(zoo.create("funcattn"))
    return _evaluate(task.build_baseline("fno", params=params, seed=seed, problem=PROBLEM), seed=seed, steps=steps,
                     quick=quick)


REPRODUCTION = Claim(
    plugin="funcattn", claim=CLAIM, task="operator_learn", seeds=(0, 1, 2), steps=STEPS, quick_steps=QUICK_STEPS,
    rows=[Row("funcattn", funcattn_row), Row("fno", fno_row)],
    checks=[Check("funcattn", "rel_l2_64", baseline="fno", margin=FNO_MARGIN, higher=False),
            Check("funcattn", "rel_l2_128", baseline="fno", margin=FNO_MARGIN, higher=False),
            Check("funcattn", "rel_l2_256", baseline="fno", margin=FNO_MARGIN, higher=False),
            Check("funcattn", "res_gap_256", margin=RES_MARGIN, higher=False)],
    settings={"funcattn": dict(CPU), "problem": PROBLEM, "test_res": list(TEST_RES), "quick": QUICK},
    task_options={"problem": PROBLEM},
    notes=f"margins fixed before the first recorded run: at each of s=64, 128, 256 FUNCATTN's relative L2 is at most "
          f"{-FNO_MARGIN:g} (absolute) above the FNO's at matched parameters and equal steps ('matches the state of "
          f"the art'; chosen when the FNO scored 0.026 on the task's first, nu = 0.1 Burgers data, where it was "
          f"about a third of its error; on the nu = 0.01 data the FNO scores about 0.18 and the same margin is about "
          f"5% of it, unchanged); and FUNCATTN's error at s=256 exceeds its error at s=64 by at most {RES_MARGIN:g} "
          "(robust to the discretisation; the FNO, resolution-invariant by construction, is reported on the same "
          "metric). rel_l2_irregular (random points of the fine grid: a points model only) reported only.",
)
