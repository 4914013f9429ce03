"""``zoo reproduce kan-fair``: MLP vs KAN vs B-spline MLP at equal parameter count, three settings.

Each row (one network family) runs all three:

1. digits_classify: ``KAN([64, 10, 10])`` (7,400 parameters) against the GELU MLP and the B-spline MLP
   with hidden widths matched to its parameter count; the task's trainer (``zoo_task_digits.task.train``).
2. formula_regress: ``bspline_mlp`` on every formula, the task's ``mlp`` and ``kan`` baselines rebuilt
   per formula at its parameter count (``zoo_task_formula_regress.task.fit_formulas``).
3. class-incremental digits: the digits network of (1) on 5 two-class tasks in sequence
   (``measures.class_incremental``); forgetting = -backward transfer.

Every network of a seed starts from ``torch.manual_seed(seed)`` and sees the same batches. FLOPs per
example (the paper's accounting, ``measures.flops``) are reported beside the parameter counts. The
paper compares at equal parameters *and* at equal FLOPs; at equal parameters the KAN costs about 12x
the MLP's FLOPs, so two more rows run settings 1 and 3 with the MLP and the B-spline MLP widened to
the KAN's FLOPs (``flops_width``; the formula settings are matched on parameters only: the task
builds its baselines at a parameter count).
"""
from __future__ import annotations

import math
from collections.abc import Callable

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params, match_params
from zoo_task_digits import task as digits
from zoo_task_formula_regress import task as formula

from . import measures
from .model import bspline_mlp_digits, kan_digits, mlp_digits
from .plugin import CLAIM

KAN_HIDDEN = 10  # KAN([64, 10, 10]): the size every digits network is matched to
BSPLINE_HIDDEN = 16  # bspline_mlp's width on formulas; the task matches its baselines to it
MATCH_TOLERANCE = 1.1  # "matches or beats": B-spline MLP's error at most 10% above the KAN's
CL_STEPS = 150  # per class-incremental task
# One point of forgetting (accuracy fraction 0.01): "KAN forgets more" is qualitative in the paper; a smaller gap is
# below what a reader would call more forgetting, and with both networks at the measure's ceiling (each old task
# forgotten entirely) the seeds' per-task test sets (about 90 images each) move it by about that much.
FORGETTING_MARGIN = 0.01
DIGITS: dict[str, Callable[[int], torch.nn.Module]] = {"MLP": lambda w: mlp_digits(hidden=w),
                                                        "B-spline MLP": lambda w: bspline_mlp_digits(hidden=w)}
FORMULA_BASELINE = {"MLP": "mlp", "KAN": "kan", "B-spline MLP": None}  # None: bspline_mlp itself
QUICK = {"digits_steps": 10, "formula_steps": 10, "cl_steps": 5, "formulas": ["xy"]}


def digits_model(label: str, seed: int) -> torch.nn.Module:
    """The digits network of row ``label``, seeded; the MLPs' widths matched to the KAN's parameter count."""
    if label == "KAN":
        torch.manual_seed(seed)
        return kan_digits(hidden=KAN_HIDDEN)
    with torch.random.fork_rng(devices=[]):
        target = count_params(kan_digits(hidden=KAN_HIDDEN))
    torch.manual_seed(seed)
    return match_params(DIGITS[label], target)


def flops_width(build: Callable[[int], torch.nn.Module], target: float, hi: int = 4096) -> int:
    """The width ``w`` in ``[1, hi]`` whose ``build(w)`` has the ``measures.flops`` closest to ``target``
    (FLOPs grow with ``w``; bisection under a forked RNG, so the caller's random state is untouched).

    >>> flops_width(lambda w: torch.nn.Linear(2, w), 40.0)  # 4 FLOPs per unit
    10
    """
    with torch.random.fork_rng(devices=[]):
        def f(w: int) -> float:
            return measures.flops(build(w))

        lo, up = 1, hi
        while up - lo > 1:
            mid = (lo + up) // 2
            lo, up = (mid, up) if f(mid) < target else (lo, mid)
        return min((lo, up), key=lambda w: (abs(f(w) - target), w))


def digits_model_flops(label: str, seed: int) -> torch.nn.Module:
    """The digits network of row ``label`` (``DIGITS``) widened to the KAN's FLOPs per example, seeded."""
    with torch.random.fork_rng(devices=[]):
        target = measures.flops(kan_digits(hidden=KAN_HIDDEN))
    width = flops_width(DIGITS[label], target)
    torch.manual_seed(seed)
    return DIGITS[label](width)


def flops_matched_row(*, seed: int, label: str, digits_steps: int, cl_steps: int) -> dict[str, float]:
    """Settings 1 and 3 for ``label``'s network at the KAN's FLOPs (no formulas: see the module's docstring)."""
    model = digits_model_flops(label, seed)
    fit = digits.train(model, steps=digits_steps, seed=seed)
    out = {"digits_params": float(count_params(model)), "digits_flops": measures.flops(model),
           "digits_acc": digits.accuracy(model)["accuracy"], "digits_s_per_step": fit["seconds_per_step"]}
    cl = measures.class_incremental(digits_model_flops(label, seed), steps_per_task=cl_steps, seed=seed)
    return {**out, "cl_forgetting": cl["forgetting"], "cl_avg_acc": cl["average_accuracy"],
            "cl_own_task_acc": cl["acc_after_own_task"]}


def network_row(*, seed: int, label: str, digits_steps: int, formula_steps: int, cl_steps: int,
                formulas: list[str] | None = None) -> dict[str, float]:
    """One network family on digits, on the formulas and on class-incremental digits."""
    model = digits_model(label, seed)
    fit = digits.train(model, steps=digits_steps, seed=seed)
    out = {"digits_params": float(count_params(model)), "digits_flops": measures.flops(model),
           "digits_acc": digits.accuracy(model)["accuracy"], "digits_s_per_step": fit["seconds_per_step"]}
    cl = measures.class_incremental(digits_model(label, seed), steps_per_task=cl_steps, seed=seed)
    out.update({"cl_forgetting": cl["forgetting"], "cl_avg_acc": cl["average_accuracy"],
                "cl_own_task_acc": cl["acc_after_own_task"]})
    f = formula.fit_formulas(lambda d: zoo.create("bspline_mlp", hidden=BSPLINE_HIDDEN, in_features=d), formulas,
                             steps=formula_steps, seed=seed, baseline=FORMULA_BASELINE[label])
    out.update({"formula_params": f["params_mean"], "rel_rmse_gmean": f["rel_rmse_gmean"],
                "log_rel_rmse_gmean": math.log(f["rel_rmse_gmean"]),
                **{k: v for k, v in f.items() if k.startswith("rel_rmse:")}})
    return out


FLOPS_ROWS = {"MLP (FLOP-matched)": "MLP", "B-spline MLP (FLOP-matched)": "B-spline MLP"}
REPRODUCTION = Claim(
    plugin="kan-fair", claim=CLAIM, task="formula_regress", seeds=(0, 1, 2, 3, 4),
    rows=[*[Row(label, network_row, {"label": label, "digits_steps": digits.DEFAULT_STEPS,
                                     "formula_steps": formula.DEFAULT_STEPS, "cl_steps": CL_STEPS}, quick_args=QUICK)
            for label in ("MLP", "KAN", "B-spline MLP")],
          *[Row(row, flops_matched_row, {"label": label, "digits_steps": digits.DEFAULT_STEPS, "cl_steps": CL_STEPS},
                quick_args={k: QUICK[k] for k in ("digits_steps", "cl_steps")}) for row, label in FLOPS_ROWS.items()]],
    checks=[Check("MLP", "digits_acc", baseline="KAN"),
            Check("MLP (FLOP-matched)", "digits_acc", baseline="KAN"),
            Check("KAN", "log_rel_rmse_gmean", baseline="MLP", higher=False),
            Check("B-spline MLP", "log_rel_rmse_gmean", baseline="KAN", higher=False, margin=-math.log(MATCH_TOLERANCE)),
            Check("KAN", "cl_forgetting", baseline="MLP", margin=FORGETTING_MARGIN)],
    settings={"kan_hidden": KAN_HIDDEN, "bspline_hidden": BSPLINE_HIDDEN, "digits_classify": digits.describe(),
              "class_incremental_tasks": [list(t) for t in measures.TASKS_SPLIT]},
    notes="margin 0 for MLP >= KAN on digits (at equal parameters and at equal FLOPs) and KAN < MLP on formulas "
          "(geometric-mean relative RMSE, compared in logs): the paper claims the order, not a size; 'B-spline MLP "
          "matches or beats KAN' = its error at most 1.1x KAN's, i.e. log(KAN) - log(B-spline MLP) >= -log(1.1); "
          f"'KAN forgets more' by at least {FORGETTING_MARGIN} (one point of accuracy: a smaller gap is not more "
          "forgetting, and both networks sit near the measure's ceiling, cl_own_task_acc * 4/5). 5 seeds: at 3 the "
          "digits and forgetting intervals straddled 0",
)
