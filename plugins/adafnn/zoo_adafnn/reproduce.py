"""``zoo reproduce adafnn``: AdaFNN vs FPCA + MLP and a grid MLP on operator_learn's scalar_on_function curves.

One ``operator_learn.evaluate(adafnn, problem="scalar_on_function", baselines=["fpca_mlp", "mlp_interp"])`` per
seed trains AdaFNN and the two baselines on the same 512 training curves (x(t) = sum_j xi_j sqrt2 sin(pi j t),
Var xi_j = j^-2, j <= 20, on 128 points of [0, 1]; y = z_10 + 0.5 z_1 + noise with z_j = j xi_j: driven by the
10th component, 1% of the first one's variance) with the same optimiser, loss, steps and batch size; the task sizes
the baselines to AdaFNN's parameter count. ``fpca_mlp`` feeds the top-8 principal-component scores of the training
curves to an MLP (pre-chosen, variance-ranked bases); ``mlp_interp`` is an MLP on the curve's values on a 64-point
grid (no basis at all). The seed draws the initialisations and batches; the curves are fixed (``data_seed=0``).
Test error is the relative L2 of the 200 test responses against the noise-free ``y``: with the test set fixed it
orders the rows as their test MSE does (MSE = rel_l2^2 * mean(y^2)). ``rel_l2_2x`` (reported, no check): the same
test curves on a grid twice as dense (256 points): the finer discretisation every operator plugin reports.

The three rows come from one ``evaluate`` call per seed (the baselines' rows read its cached result), so the
harness's per-row seconds put the whole call on the ``adafnn`` row.
"""
from __future__ import annotations

from functools import cache

from zoo.claims import Check, Claim, Row

from .model import CPU
from .plugin import CLAIM

PROBLEM, BASELINES = "scalar_on_function", ("fpca_mlp", "mlp_interp")
STEPS, QUICK_STEPS = 2000, 30
QUICK = {"n_train": 64, "n_test": 32}
MARGIN = 0.02
METRICS = ("rel_l2", "rel_l2_2x", "r2", "params", "seconds_per_step")


@cache
def _run(seed: int, quick: bool, steps: int) -> dict[str, dict[str, float]]:
    import zoo
    from zoo_task_operator_learn import task

    res = task.evaluate(zoo.create("adafnn"), problem=PROBLEM, steps=steps, seed=seed, baselines=list(BASELINES),
                        **(QUICK if quick else {}))
    rows = {"adafnn": res.metrics, **res.baselines}
    return {name: {k: float(m[k]) for k in METRICS if k in m} for name, m in rows.items()}


def row(*, seed: int, quick: bool, steps: int, name: str) -> dict[str, float]:
    """Row ``name`` (adafnn or a task baseline) of the seed's shared evaluation."""
    return _run(seed, quick, steps)[name]


REPRODUCTION = Claim(
    plugin="adafnn", claim=CLAIM, task="operator_learn", seeds=(0, 1, 2, 3, 4), steps=STEPS, quick_steps=QUICK_STEPS,
    rows=[Row("adafnn", row, {"name": "adafnn"}), *(Row(b, row, {"name": b}) for b in BASELINES)],
    checks=[Check("adafnn", "rel_l2", baseline=b, margin=MARGIN, higher=False) for b in BASELINES],
    settings={"adafnn": dict(CPU), "problem": PROBLEM, "baselines": list(BASELINES), "quick": QUICK},
    task_options={"problem": PROBLEM},
    notes=f"margin fixed before the first recorded run: AdaFNN's test relative L2 is at least {MARGIN:g} (absolute) "
          "below each baseline's, paired by seed (a clear win, not a tie: 0.02 in relative error is several times "
          "the seed-to-seed spread of a converged small MLP on 200 test responses). fpca_mlp is the pre-chosen-basis "
          "model the paper argues against; mlp_interp the raw-grid network. r2 reported only. 5 seeds: a run is under "
          "20 s.",
)
