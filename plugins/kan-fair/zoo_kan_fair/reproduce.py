"""``zoo reproduce kan-fair``: MLP vs KAN vs B-spline MLP at equal parameter count, three settings.

1. digits_classify: ``KAN([64, 10, 10])`` (7,400 parameters) against the GELU MLP and the B-spline MLP
   with hidden widths matched to its parameter count; the task's trainer (AdamW, one-cycle, 600 steps).
2. formula_regress: ``zoo.evaluate(bspline_mlp)`` on every formula, with the task's ``mlp`` and ``kan``
   baselines rebuilt per formula at the B-spline MLP's parameter count; full-batch Adam, 1000 steps
   (seeds ``FORMULA_SEEDS``).
3. class-incremental digits: the three digits networks of (1) on 5 two-class tasks in sequence
   (``harness.class_incremental``); forgetting = -backward transfer.

Every model of a seed starts from ``torch.manual_seed(seed)`` and sees the same batches. FLOPs per
example (the paper's accounting, ``harness.flops``) are reported beside the parameter counts.
"""
from __future__ import annotations

import logging
import math
import time

import torch

import zoo
from zoo_task_digits import task as digits
from zoo_task_formula_regress import task
from zoo.task import mean_std

from . import harness
from .model import bspline_mlp_digits, kan_digits, mlp_digits

log = logging.getLogger(__name__)

SEEDS, QUICK_SEEDS = (0, 1, 2), (0,)
FORMULA_SEEDS = (0,)  # 9 formulas x 3 networks x 1000 steps (~80 s per seed): one seed fits the 3-minute budget
DIGITS_STEPS, QUICK_DIGITS_STEPS = digits.DEFAULT_STEPS, 10
FORMULA_STEPS, QUICK_FORMULA_STEPS = task.DEFAULT_STEPS, 10
CL_STEPS, QUICK_CL_STEPS = 150, 5
QUICK_FORMULAS = ("xy",)
KAN_HIDDEN = 10  # KAN([64, 10, 10]): the size every digits network is matched to
BSPLINE_HIDDEN = 16  # bspline_mlp's width on formulas; the task matches its baselines to it
MATCH_TOLERANCE = 1.1  # "matches or beats": B-spline MLP's error at most 10% above the KAN's


def digits_models(seed: int) -> dict[str, torch.nn.Module]:
    """The three digits networks for one seed, MLP and B-spline MLP matched to the KAN's parameter count."""
    torch.manual_seed(seed)
    kan = kan_digits(hidden=KAN_HIDDEN)
    target = harness.count_params(kan)
    return {"MLP": harness.matched(lambda w: mlp_digits(hidden=w), target, seed),
            "KAN": kan,
            "B-spline MLP": harness.matched(lambda w: bspline_mlp_digits(hidden=w), target, seed)}


def _gmean(values: list[float]) -> float:
    return math.exp(sum(math.log(max(v, 1e-12)) for v in values) / len(values))


def reproduce(quick: bool = False) -> zoo.ClaimResult:
    """Run the three comparisons and return the table with pass/fail (see ``plugin.CLAIM``).

    Args:
        quick: one seed, a few steps, one formula (seconds; for tests). The numbers then mean nothing.
    """
    from .plugin import CLAIM

    seeds = QUICK_SEEDS if quick else SEEDS
    d_steps, f_steps, cl_steps = ((QUICK_DIGITS_STEPS, QUICK_FORMULA_STEPS, QUICK_CL_STEPS) if quick
                                  else (DIGITS_STEPS, FORMULA_STEPS, CL_STEPS))
    formulas = list(QUICK_FORMULAS) if quick else list(task.FORMULAS)
    t0 = time.perf_counter()
    with task.torch_threads(1):
        rows: dict[str, dict[str, list[float]]] = {k: {} for k in ("MLP", "KAN", "B-spline MLP")}
        info: dict[str, dict[str, float]] = {}
        per_formula: dict[str, dict[str, list[float]]] = {k: {} for k in rows}
        for seed in seeds:
            for label, model in digits_models(seed).items():
                info.setdefault(label, {"digits_params": float(harness.count_params(model)),
                                        "digits_flops": harness.flops(model)})
                fit = digits.train(model, steps=d_steps, seed=seed)
                rows[label].setdefault("digits_acc", []).append(digits.accuracy(model)["accuracy"])
                rows[label].setdefault("digits_s_per_step", []).append(fit["seconds_per_step"])
            for label, model in digits_models(seed).items():
                cl = harness.class_incremental(model, steps_per_task=cl_steps, seed=seed)
                rows[label].setdefault("cl_forgetting", []).append(cl["forgetting"])
                rows[label].setdefault("cl_avg_acc", []).append(cl["average_accuracy"])
            if seed not in (seeds if quick else FORMULA_SEEDS):
                continue
            torch.manual_seed(seed)
            r = zoo.evaluate(zoo.create("bspline_mlp", hidden=BSPLINE_HIDDEN), task=task.NAME, formula=formulas,
                             steps=f_steps, seed=seed)
            for label, m in (("B-spline MLP", r.metrics), ("MLP", r.baselines["mlp"]), ("KAN", r.baselines["kan"])):
                rows[label].setdefault("formula_rel_rmse_gmean", []).append(m["rel_rmse_gmean"])
                rows[label].setdefault("formula_params_mean", []).append(m["params_mean"])
                for f in formulas:
                    per_formula[label].setdefault(f, []).append(m[f"rel_rmse:{f}"])
            log.info("kan-fair reproduce: seed %d done (%.0f s)", seed, time.perf_counter() - t0)

    table: dict[str, dict[str, float]] = {}
    stats: dict[str, dict[str, tuple[float, float]]] = {}
    for label, cols in rows.items():
        stats[label] = {k: mean_std(v) for k, v in cols.items()}
        table[label] = {**info[label], "formula_params": stats[label]["formula_params_mean"][0]}
        for k in ("digits_acc", "formula_rel_rmse_gmean", "cl_forgetting", "cl_avg_acc"):
            table[label][f"{k}_mean"], table[label][f"{k}_std"] = stats[label][k]
        table[label]["digits_s_per_step"] = stats[label]["digits_s_per_step"][0]
        for f in formulas:  # the geometric mean over seeds of each formula's error
            table[label][f"rel_rmse:{f}"] = _gmean(per_formula[label][f])

    mean = {label: {k: v[0] for k, v in s.items()} for label, s in stats.items()}
    mlp, kan, bsp = mean["MLP"], mean["KAN"], mean["B-spline MLP"]
    parts = {
        "digits: MLP acc >= KAN acc": mlp["digits_acc"] >= kan["digits_acc"],
        "formulas: KAN error < MLP error": kan["formula_rel_rmse_gmean"] < mlp["formula_rel_rmse_gmean"],
        f"formulas: B-spline MLP error <= {MATCH_TOLERANCE}x KAN error":
            bsp["formula_rel_rmse_gmean"] <= MATCH_TOLERANCE * kan["formula_rel_rmse_gmean"],
        "class-incremental: KAN forgets more than MLP": kan["cl_forgetting"] > mlp["cl_forgetting"],
    }
    passed = all(parts.values())
    sd = {label: {k: v[1] for k, v in st.items()} for label, st in stats.items()}

    def gap(key: str, a: str, b: str) -> str:
        diff, noise = mean[a][key] - mean[b][key], max(sd[a][key], sd[b][key])
        size = "exceeds" if abs(diff) > noise else "is within"
        return f"{a} - {b} = {diff:+.4f}, which {size} the larger seed std {noise:.4f}"

    numbers = (f"digits acc MLP {mlp['digits_acc']:.4f} / KAN {kan['digits_acc']:.4f} / B-spline MLP "
               f"{bsp['digits_acc']:.4f} ({gap('digits_acc', 'MLP', 'KAN')}); formula gmean rel RMSE MLP "
               f"{mlp['formula_rel_rmse_gmean']:.4g} / KAN {kan['formula_rel_rmse_gmean']:.4g} / B-spline MLP "
               f"{bsp['formula_rel_rmse_gmean']:.4g} (B-spline MLP / KAN = "
               f"{bsp['formula_rel_rmse_gmean'] / kan['formula_rel_rmse_gmean']:.3f}); forgetting MLP "
               f"{mlp['cl_forgetting']:.4f} / KAN {kan['cl_forgetting']:.4f} / B-spline MLP {bsp['cl_forgetting']:.4f} "
               f"({gap('cl_forgetting', 'KAN', 'MLP')})")
    verdicts = "; ".join(f"{name}: {'holds' if ok else 'does not hold'}" for name, ok in parts.items())
    summary = f"{verdicts} ({len(seeds)} seed(s), formulas {len(seeds if quick else FORMULA_SEEDS)}). {numbers}."
    if quick:
        summary = "QUICK RUN (1 seed, few steps, one formula; not a measurement of the claim). " + summary
    settings = {
        "quick": quick, "seeds": list(seeds), "intra_op_threads": 1, "parts": parts,
        "digits": {"steps": d_steps, "trainer": "zoo_task_digits.task.train defaults (AdamW 2e-3, wd 0.05, one-cycle, batch 64)",
                   "kan": f"KAN([64, {KAN_HIDDEN}, 10]), G=5, k=3", "matching": "hidden width of MLP / B-spline MLP"},
        "formula": {"steps": f_steps, "formulas": formulas, "seeds": list(seeds if quick else FORMULA_SEEDS),
                    "trainer": "zoo_task_formula_regress.task.train (Adam 1e-2, cosine, full batch)",
                    "model": f"bspline_mlp(hidden={BSPLINE_HIDDEN}); baselines mlp, kan at its parameter count"},
        "class_incremental": {"tasks": [list(t) for t in harness.TASKS_SPLIT], "steps_per_task": cl_steps,
                              "optimizer": "Adam 1e-3, kept across tasks", "batch_size": 64},
        "per_seed": {label: cols for label, cols in rows.items()},
    }
    return zoo.ClaimResult(plugin="kan-fair", claim=CLAIM, passed=passed, table=table, summary=summary,
                           settings=settings, seconds=time.perf_counter() - t0)
