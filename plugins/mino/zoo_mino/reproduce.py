"""``zoo reproduce mino``: train on functions at uniform random points, sample on skewed random points of another size.

Data from the task's samplers (``zoo_task_operator_learn.generate``, through ``zoo_ofm.reproduce``'s helpers): an
RBF Gaussian process (lengthscale 0.2, the task's default); ``N_TRAIN`` training functions, each on its own
``N_POINTS`` uniform random points. Each row fits once and is scored twice: in distribution (``N_TEST`` samples at
``N_POINTS`` uniform random points against ``N_TEST`` test functions there) and shifted (at ``N_SHIFT`` points from
the task's skewed distribution, U^2). ``*_gap`` = shifted - in-distribution. Rows: MINO (CPU preset); the
point-agnostic MLP velocity (an MLP of [f_t(x), x, t] at each point alone, sized to MINO's parameters) trained by
the same flow matching; the exact process (the noise floor). A grid-only FNO velocity has no row: it cannot be
evaluated off its grid.
"""
from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import torch

from zoo.claims import Check, Claim, Row
from zoo.task import count_params, match_width
from zoo_ofm.reproduce import GP_PROCESS, functions, moments, scores
from zoo_task_operator_learn import generate as G

from .model import CPU, mino, pointwise_mlp_flow
from .plugin import CLAIM

N_POINTS, N_SHIFT, N_TRAIN, N_TEST = 64, 96, 1000, 500
QUICK = {"n_train": 64, "n_test": 64}
STEPS, QUICK_STEPS = 1200, 30
PROCESS = "rbf"
GAP_COV_MARGIN, GAP_ENERGY_MARGIN = 0.10, 0.004  # fixed before the first recorded run; see the notes


@cache
def dataset(seed: int, *, n_train: int, n_test: int) -> dict[str, np.ndarray]:
    """Training functions on their own uniform points; test functions at uniform and at skewed points."""
    base = 20_000 * (seed + 1)
    train_x = np.stack([G.random_points(N_POINTS, 1, seed=base + i, dist="uniform") for i in range(n_train)])
    train_v = np.stack([functions(PROCESS, train_x[i], 1, base + 5_000 + i)[0] for i in range(n_train)])
    out = {"train_v": train_v, "train_x": train_x.astype(np.float32)}
    for name, n_points, dist, off in (("uniform", N_POINTS, "uniform", 1), ("skewed", N_SHIFT, "skewed", 2)):
        x = np.asarray(G.random_points(n_points, 1, seed=base - off, dist=dist), dtype=np.float32)
        out[f"x_{name}"], out[f"v_{name}"] = x, functions(PROCESS, x, n_test, base - 10 - off)
    return out


def _sizes(quick: bool) -> dict[str, int]:
    return dict(QUICK) if quick else {"n_train": N_TRAIN, "n_test": N_TEST}


def _both(sample, data: dict[str, np.ndarray], seed: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for name in ("uniform", "skewed"):
        x = data[f"x_{name}"]
        s = scores(sample(x, len(data[f"v_{name}"]), seed), data[f"v_{name}"], moments(PROCESS, x))
        out.update({f"{k}_{name}": v for k, v in s.items()})
    for k in ("cov_error", "energy_distance", "marginal_ks"):
        out[f"{k}_gap"] = out[f"{k}_skewed"] - out[f"{k}_uniform"]
    return out


def mino_params() -> int:
    torch.manual_seed(0)
    return count_params(mino())


def _build(name: str):
    if name == "mino":
        return mino()
    width = match_width(lambda w: pointwise_mlp_flow(width=w), mino_params(), lo=4, hi=512)
    return pointwise_mlp_flow(width=width)


def flow_row(*, seed: int, quick: bool, steps: int, velocity: str) -> dict[str, float]:
    """``velocity`` "mino" or "mlp" trained by OFM's flow matching on uniform points, scored at both point sets."""
    data = dataset(seed, **_sizes(quick))
    torch.manual_seed(seed)
    model = _build(velocity)
    fit = model.fit(data["train_v"], data["train_x"], steps=steps, seed=seed)
    res = _both(lambda x, n, s: model.sample(x, n, seed=s + 1).numpy(), data, seed)
    return {**res, "params": count_params(model), "fit_seconds": fit["fit_seconds"]}


def exact_row(*, seed: int, quick: bool) -> dict[str, float]:
    """Fresh functions of the true process at each point set: the noise floor."""
    data = dataset(seed, **_sizes(quick))
    return _both(lambda x, n, s: functions(PROCESS, x, n, 20_000 * (seed + 1) - 100 - x.shape[0]), data, seed)


SETTINGS: dict[str, Any] = {"n_points": N_POINTS, "n_shift": N_SHIFT, "n_train": N_TRAIN, "n_test": N_TEST,
                            "quick": QUICK, "process": GP_PROCESS, "mino": dict(CPU),
                            "margins": {"cov_gap": GAP_COV_MARGIN, "energy_gap": GAP_ENERGY_MARGIN}}

REPRODUCTION = Claim(
    plugin="mino", claim=CLAIM, task="function_generate", seeds=(0, 1, 2), steps=STEPS, quick_steps=QUICK_STEPS,
    rows=[Row("mino", flow_row, {"velocity": "mino"}),
          Row("mlp_pointwise", flow_row, {"velocity": "mlp"}),
          Row("exact", exact_row)],
    checks=[Check("mino", "cov_error_gap", margin=GAP_COV_MARGIN, higher=False),
            Check("mino", "energy_distance_gap", margin=GAP_ENERGY_MARGIN, higher=False),
            Check("mino", "cov_error_skewed", baseline="mlp_pointwise", margin=0.0, higher=False),
            Check("mino", "energy_distance_skewed", baseline="mlp_pointwise", margin=0.0, higher=False)],
    settings=SETTINGS,
    notes=(f"margins fixed before the first run: MINO's cov_error at the skewed N={N_SHIFT} points may exceed its "
           f"in-distribution (uniform N={N_POINTS}) cov_error by {GAP_COV_MARGIN}, its energy distance by "
           f"{GAP_ENERGY_MARGIN} (the task's exact RBF samples at n={N_TEST} score cov_error ~0.05 and energy "
           "~0.0005; a GP with 7% too large an amplitude adds 0.10 cov_error, a 10% one 0.004 energy); and at the "
           "skewed points it must beat the point-agnostic MLP velocity (matched parameters, same flow matching and "
           "steps; margin 0) on cov_error and energy distance. The exact row is the noise floor, reported only. A "
           "grid-only FNO velocity has no row: it cannot sample off its training grid."),
)
