"""``zoo reproduce hdfe``: sampling invariance and decoding on vsa_bench, and an MLP on HDFE codes on operator_learn.

Invariance rows are ``vsa_bench.evaluate(model, mode="invariance", seed=seed, n=N_FUNCTIONS)``: the task's random
4-harmonic functions on [0, 1] (max |f| = 1) sampled at 50 and 500 points, uniformly and with density 1/(2 sqrt(t));
the seed draws the functions, the samples and the model's random phases. ``hdfe`` is the paper's encoder (CPU
default, D=2048); ``hdfe_mean`` is the SAME encoder and phases with the invariant weights replaced by the plain mean
of the sample codes (the naive superposition: only the weighting differs); ``fpe_sum`` is the task's own
unweighted fractional-power baseline at the same D with its default bandwidths (reported only).

Operator rows are one ``operator_learn.evaluate(hdfe_operator, problem="antiderivative", baselines=["mlp_grid"],
seed=seed)`` per seed (the task's defaults: 512 training functions at 64 points, 300 Adam steps, relative-L2 loss,
100 test functions; the mlp_grid baseline matched to the operator's parameters, trained the same way on the same
data); ``rel_l2_irregular`` scores the operator on 256 random off-grid points of the test functions (sampling it
never saw), where the MLP on the 64 grid values has no input at all.
"""
from __future__ import annotations

from functools import cache
from typing import Any

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_operator_learn import task as operator_task
from zoo_task_vsa_bench import task as vsa_task
from zoo_task_vsa_bench.baselines import build_baseline

from .model import CPU
from .plugin import CLAIM

N_FUNCTIONS, QUICK_FUNCTIONS = 32, 4
OPERATOR_PROBLEM, QUICK_OPERATOR_STEPS, QUICK_TRAIN = "antiderivative", 20, 64
DISTRIBUTION_MIN, WEIGHTING_GAIN, DENSITY_MIN, DECODE_MAX = 0.95, 0.10, 0.85, 0.20
COMPETITIVE_MARGIN, IRREGULAR_RATIO_MAX = 0.02, 1.25


def invariance_row(*, seed: int, quick: bool, weighting: str) -> dict[str, float]:
    """The hdfe encoder (CPU default, phases drawn by ``seed``) with ``weighting`` on the invariance mode."""
    model = zoo.create("hdfe", weighting=weighting, seed=seed)
    res = vsa_task.evaluate(model, mode="invariance", seed=seed, n=QUICK_FUNCTIONS if quick else N_FUNCTIONS,
                            baselines=[])
    return dict(res.metrics)


def fpe_sum_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The task's unweighted FPE superposition at hdfe's D (its own bandwidths; reported only)."""
    base = build_baseline("fpe_sum", dim=CPU["dim"], seed=seed)
    return dict(vsa_task.evaluate(base, mode="invariance", seed=seed, n=QUICK_FUNCTIONS if quick else N_FUNCTIONS,
                                  baselines=[]).metrics)


@cache
def _operator_run(seed: int, quick: bool):
    model = zoo.create("hdfe_operator")
    kw: dict[str, Any] = {"steps": QUICK_OPERATOR_STEPS, "n_train": QUICK_TRAIN, "n_test": 20} if quick else {}
    return operator_task.evaluate(model, problem=OPERATOR_PROBLEM, baselines=["mlp_grid"], seed=seed, **kw)


def _keep(metrics: dict[str, float]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items() if k in ("rel_l2", "rel_l2_2x", "rel_l2_irregular", "params",
                                                             "seconds_per_step")}


def operator_row(*, seed: int, quick: bool) -> dict[str, float]:
    """hdfe_operator on the antiderivative: rel L2 on the training grid, at 2x, on irregular points, and their ratio."""
    m = _keep(_operator_run(seed, quick).metrics)
    m["irregular_ratio"] = m["rel_l2_irregular"] / m["rel_l2"]
    return m


def mlp_grid_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The task's MLP on the 64 grid values, matched parameters, same data, steps and seed (one resolution only)."""
    return _keep(_operator_run(seed, quick).baselines["mlp_grid"])


SETTINGS: dict[str, Any] = {"hdfe": dict(CPU), "n_functions": N_FUNCTIONS, "quick_functions": QUICK_FUNCTIONS,
                            "operator_problem": OPERATOR_PROBLEM, "quick_operator_steps": QUICK_OPERATOR_STEPS}

REPRODUCTION = Claim(
    plugin="hdfe", claim=CLAIM, task="vsa_bench", seeds=(0, 1, 2),
    rows=[Row("hdfe", invariance_row, {"weighting": "invariant"}),
          Row("hdfe_mean", invariance_row, {"weighting": "mean"}),
          Row("fpe_sum", fpe_sum_row),
          Row("hdfe_operator", operator_row),
          Row("mlp_grid", mlp_grid_row)],
    checks=[Check("hdfe", "cos_distribution", margin=DISTRIBUTION_MIN),
            Check("hdfe", "cos_distribution", baseline="hdfe_mean", margin=WEIGHTING_GAIN),
            Check("hdfe", "cos_density", margin=DENSITY_MIN),
            Check("hdfe", "decode_rel_l2", margin=DECODE_MAX, higher=False),
            Check("hdfe_operator", "rel_l2", baseline="mlp_grid", margin=-COMPETITIVE_MARGIN, higher=False),
            Check("hdfe_operator", "irregular_ratio", margin=IRREGULAR_RATIO_MAX, higher=False)],
    settings=SETTINGS,
    task_options={"mode": "invariance"},
    notes=f"margins fixed before the recorded run (a pilot on seed 0 with 16 functions gave cos_distribution 0.997, "
          f"cos_density 0.89, decode 0.10 for hdfe; 0.77 / 0.84 for the plain mean): cos(500 uniform, 500 skewed) >= "
          f"{DISTRIBUTION_MIN} (the paper: the code does not depend on the sample distribution, 'cosine ~1'; two "
          f"different functions sit near 0.3); that cosine beats the plain mean of the same codes by >= "
          f"{WEIGHTING_GAIN} (the invariance must come from the paper's weighting, not from the codes); cos(50 vs "
          f"500 uniform) >= {DENSITY_MIN} (density: at N=50 the mean spacing 0.02 is half the input kernel width "
          f"1/alpha_x = 0.04, so a finite-sample gap remains; 0.85 still separates the same function from others by "
          f"far); decode rel L2 (500 uniform samples, 100 query points) <= {DECODE_MAX} ('decodable': one fifth of "
          f"the signal). Operator (the catalog's 'competitive'): hdfe_operator rel L2 on the training grid no more "
          f"than {COMPETITIVE_MARGIN} above the matched-parameter MLP on grid values; its rel L2 on 256 random "
          f"off-grid points at most {IRREGULAR_RATIO_MAX}x its training-grid error (the MLP has no input there). "
          "fpe_sum (the task's baseline, other bandwidths) and the 2x errors are reported only.",
)
