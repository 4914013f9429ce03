"""``zoo reproduce ofm``: OFM against the exact process's own sampling noise (GP prior) and against a fitted GP
(non-Gaussian process), on the function_generate data.

Every row draws its functions from the task's samplers (``zoo_task_operator_learn.generate``): ``N_TRAIN`` training
functions, each on its own ``N_POINTS`` uniform random points of [0, 1]; ``N_TEST`` test functions of the same process
on one fixed set of ``N_POINTS`` uniform random points (seeded by the seed). A generative row fits on the training
functions and draws ``N_TEST`` samples at the test points; the ``exact_*`` rows draw ``N_TEST`` fresh functions of the
true process instead (the noise floor: what a perfect model would score). Metrics are the task's: ``mean_error`` and
``cov_error`` (relative Frobenius) against the process's exact moments, ``energy_distance`` and ``marginal_ks``
against the test functions. The ``gp_*`` rows are the task's ``gp`` baseline (a GP whose kernel hyperparameters
are fitted by marginal likelihood on the same training functions and points).
"""
from __future__ import annotations

import time
from functools import cache
from typing import Any

import numpy as np
import torch

from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_operator_learn import generate as G
from zoo_task_operator_learn.baselines import GPBaseline

from .model import CPU, REFERENCE, ofm
from .plugin import CLAIM

N_POINTS, N_TRAIN, N_TEST = 64, 1000, 500
QUICK = {"n_train": 64, "n_test": 64}
STEPS, QUICK_STEPS = 1500, 30
GP_ITERS = 30  # L-BFGS iterations of the gp baseline: 3 hyperparameters converge well within them
GP_PROCESS = {"kernel": "rbf", "lengthscale": 0.2}  # the task's sampler default
NONGAUSS = "warped"  # the task's non-Gaussian process: g + 0.5 (g^2 - 1), g the RBF GP
# margins (fixed before the first recorded run; see the claim's notes)
COV_MARGIN, ENERGY_MARGIN, MEAN_MARGIN = 0.10, 0.004, 0.05
METRICS = ("mean_error", "cov_error", "energy_distance", "marginal_ks")


def functions(process: str, coords: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` functions of ``process`` ("rbf" or "warped") at ``coords (N, 1)``: ``(n, N, 1)`` float32."""
    if process == NONGAUSS:
        return G.warped_sample(coords, n, seed=seed, **GP_PROCESS)
    return G.gp_sample(coords=coords, n=n, seed=seed, **GP_PROCESS)


def moments(process: str, coords: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The exact ``(mean, cov)`` of ``process`` at ``coords``."""
    if process == NONGAUSS:
        return G.warped_moments(coords, **GP_PROCESS)
    return np.zeros(len(coords)), G.kernel_matrix(coords, coords, **GP_PROCESS)


@cache
def dataset(process: str, seed: int, *, n_train: int, n_test: int, refine: int = 1) -> dict[str, np.ndarray]:
    """Training functions on their own random points, test functions on one fixed random point set (cached: the
    rows of one seed share it); ``refine = 2`` puts the test functions on ``2 * N_POINTS`` points instead (a finer
    discretisation than any training function had: the zero-shot 2x test)."""
    base = 10_000 * (seed + 1)
    train_x = np.stack([G.random_points(N_POINTS, 1, seed=base + i, dist="uniform") for i in range(n_train)])
    train_v = np.stack([functions(process, train_x[i], 1, base + 5_000 + i)[0] for i in range(n_train)])
    test_seed = base - 1 if refine == 1 else base - 1 - 7 * refine
    test_x = np.asarray(G.random_points(refine * N_POINTS, 1, seed=test_seed, dist="uniform"), dtype=np.float32)
    return {"train_v": train_v, "train_x": train_x.astype(np.float32), "test_x": test_x,
            "test_v": functions(process, test_x, n_test, base - 2 - 7 * (refine - 1))}


def scores(samples: np.ndarray, test: np.ndarray, exact: tuple[np.ndarray, np.ndarray]) -> dict[str, float]:
    """Mean and covariance errors against the exact moments, energy distance and marginal KS against test functions."""
    return {"mean_error": G.mean_error(samples, exact), "cov_error": G.cov_error(samples, exact),
            "energy_distance": G.energy_distance(samples, test), "marginal_ks": G.marginal_ks(samples, test)}


def _sizes(quick: bool) -> dict[str, int]:
    return dict(QUICK) if quick else {"n_train": N_TRAIN, "n_test": N_TEST}


@cache
def fitted(process: str, seed: int, quick: bool, steps: int) -> tuple[Any, dict[str, Any]]:
    """OFM (CPU preset) fit by flow matching for ``steps`` steps on the seed's training functions (cached: the 1x
    and 2x rows of a seed sample the same fitted model)."""
    data = dataset(process, seed, **_sizes(quick))
    torch.manual_seed(seed)
    model = ofm()
    return model, model.fit(data["train_v"], data["train_x"], steps=steps, seed=seed)


def ofm_row(*, seed: int, quick: bool, steps: int, process: str, refine: int = 1) -> dict[str, float]:
    """OFM fit on the training functions (64 random points each), sampled at the test points (``refine`` x 64)."""
    data = dataset(process, seed, **_sizes(quick), refine=refine)
    model, fit = fitted(process, seed, quick, steps)
    start = time.perf_counter()
    samples = model.sample(data["test_x"], len(data["test_v"]), seed=seed + 1).numpy()
    res = scores(samples, data["test_v"], moments(process, data["test_x"]))
    return {**res, "params": count_params(model), "fit_seconds": fit["fit_seconds"],
            "sample_seconds": time.perf_counter() - start}


def gp_row(*, seed: int, quick: bool, process: str) -> dict[str, float]:
    """The task's ``gp`` baseline (RBF kernel, hyperparameters by marginal likelihood) on the same data."""
    data = dataset(process, seed, **_sizes(quick))
    model = GPBaseline("rbf")  # the kernel family of both processes' underlying GP
    start = time.perf_counter()
    fit = model.fit(torch.as_tensor(data["train_v"]), torch.as_tensor(data["train_x"]), steps=10 if quick else GP_ITERS,
                    seed=seed)
    samples = model.sample(torch.as_tensor(data["test_x"]), len(data["test_v"]), seed=seed + 1).numpy()
    return {**scores(samples, data["test_v"], moments(process, data["test_x"])), "fit_seconds": time.perf_counter() - start,
            "lengthscale": float(fit["lengthscale"])}


def exact_row(*, seed: int, quick: bool, process: str, refine: int = 1) -> dict[str, float]:
    """Fresh functions of the true process at the test points: the sampling-noise floor of every metric."""
    data = dataset(process, seed, **_sizes(quick), refine=refine)
    fresh = functions(process, data["test_x"], len(data["test_v"]), 10_000 * (seed + 1) - 3)
    return scores(fresh, data["test_v"], moments(process, data["test_x"]))


SETTINGS: dict[str, Any] = {"n_points": N_POINTS, "n_train": N_TRAIN, "n_test": N_TEST, "quick": QUICK,
                            "gp_process": GP_PROCESS, "nongauss_process": NONGAUSS, "ofm": dict(CPU),
                            "reference": dict(REFERENCE), "coupling": "ot",
                            "margins": {"cov": COV_MARGIN, "energy": ENERGY_MARGIN, "mean": MEAN_MARGIN}}

REPRODUCTION = Claim(
    plugin="ofm", claim=CLAIM, task="function_generate", seeds=(0, 1, 2), steps=STEPS, quick_steps=QUICK_STEPS,
    rows=[Row("ofm_rbf", ofm_row, {"process": "rbf"}),
          Row("exact_rbf", exact_row, {"process": "rbf"}),
          Row("gp_rbf", gp_row, {"process": "rbf"}),
          Row("ofm_warped", ofm_row, {"process": NONGAUSS}),
          Row("gp_warped", gp_row, {"process": NONGAUSS}),
          Row("exact_warped", exact_row, {"process": NONGAUSS}),
          Row("ofm_rbf_2x", ofm_row, {"process": "rbf", "refine": 2}),
          Row("exact_rbf_2x", exact_row, {"process": "rbf", "refine": 2})],
    checks=[Check("ofm_rbf", "cov_error", baseline="exact_rbf", margin=-COV_MARGIN, higher=False),
            Check("ofm_rbf", "energy_distance", baseline="exact_rbf", margin=-ENERGY_MARGIN, higher=False),
            Check("ofm_rbf", "mean_error", baseline="exact_rbf", margin=-MEAN_MARGIN, higher=False),
            Check("ofm_warped", "energy_distance", baseline="gp_warped", margin=0.0, higher=False),
            Check("ofm_warped", "marginal_ks", baseline="gp_warped", margin=0.0, higher=False),
            Check("ofm_rbf_2x", "cov_error", baseline="exact_rbf_2x", margin=-COV_MARGIN, higher=False),
            Check("ofm_rbf_2x", "energy_distance", baseline="exact_rbf_2x", margin=-ENERGY_MARGIN, higher=False)],
    settings=SETTINGS,
    notes=(f"margins fixed before the first run, from the task's samplers at n={N_TEST} (exact RBF samples score "
           "cov_error ~0.05, energy ~0.0005, mean_error ~0.04 = 1/sqrt(n)): OFM may exceed the exact sampler's "
           f"cov_error by {COV_MARGIN} (a GP with 7% too large an amplitude does: 5% gives +0.06, 10% +0.17), its "
           f"energy distance by {ENERGY_MARGIN} (a 10% amplitude error gives +0.004) and its mean_error by "
           f"{MEAN_MARGIN} (one more sampling-noise unit 1/sqrt(n)). On the warped (non-Gaussian) process OFM must "
           "beat the fitted GP (margin 0) on energy distance and marginal KS. gp_rbf and exact_warped are reported "
           "only; the GP's L-BFGS runs 30 iterations (3 hyperparameters). Functional regression (condition) is "
           "tested against the exact posterior of an exactly known flow, not measured here. The *_2x rows (added "
           "after the first recording, margins the same as at 1x, fixed before their first run) sample the same "
           f"fitted model at {2 * N_POINTS} test points, twice the points any training function had: a "
           "discretisation-invariant generator keeps its 1x errors there."),
)
