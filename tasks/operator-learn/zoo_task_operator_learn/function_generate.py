"""``function_generate``: learn a distribution over functions from samples on random irregular points, then sample it
on points drawn from another distribution.

Contract (``input_kind = "generative"``): ``model.fit(values (n, N, C), coords (n, N, d), *, steps, seed, progress)
-> dict`` (``budget_s`` too when its signature takes it), ``model.sample(coords (N, d), n, *, seed) -> (n, N, C)``,
optionally ``model.condition(obs_coords (K, d), obs_values (K, C), query_coords (M, d), n, *, seed) -> (n, M, C)``.

Protocol (``evaluate``): ``n_train`` functions of ``process`` (``generate.py``: ``rbf`` and ``matern`` zero-mean
GPs with ``lengthscale`` / ``nu``, ``nongauss`` the warped GP ``g + 0.5 (g^2 - 1)``), each at its own
``train_points`` points drawn from ``train_dist`` (uniform on [0, 1)^dim by default; ``dim`` 1, or 2). The model
samples ``n_test`` functions at ``test_points`` points from ``test_dist`` (``"skewed"``: ``U^2``, dense near 0, by
default): a point distribution it was not trained on. Metrics (``generate.py``): ``mean_error`` and ``cov_error`` against the
process's exact mean and covariance at those points, ``energy_distance`` and ``marginal_ks`` against ``n_test``
exact samples of the process there; the same four with suffix ``_train_dist`` on points from ``train_dist``. For
the GPs and a model with ``condition``: ``cond_mean_error`` / ``cond_cov_error``, the model's conditional samples
given ``n_obs`` noise-free observations of a test function against the exact GP posterior (``gp_posterior``), averaged
over ``n_cond`` test functions. Baseline ``gp``: a GP of the process's kernel family with variance, lengthscale
and noise fitted by marginal likelihood on the training functions (``baselines.GPBaseline``).
"""
from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result, count_params, run_budget  # noqa: F401 - run_budget: plugins' fit loops use it

from . import generate
from .baselines import GPBaseline, to_numpy

NAME = "function_generate"
PROCESSES = ("rbf", "matern", "nongauss")
BASELINES = ("gp",)
DEFAULTS = {"n_train": 200, "train_points": 32, "n_test": 500, "test_points": 64, "steps": 1000, "lengthscale": 0.2,
            "nu": 2.5, "n_obs": 8, "n_cond": 10}


def _check(process: str, train_dist: str, test_dist: str) -> None:
    if process not in PROCESSES:
        raise ValueError(f"{NAME}: unknown process {process!r}; choose from {', '.join(PROCESSES)}")
    for d in (train_dist, test_dist):
        if d not in ("uniform", "skewed"):
            raise ValueError(f"{NAME}: point distributions are 'uniform' or 'skewed', got {d!r}")


def draw(process: str, coords: np.ndarray, n: int, *, seed: Any, lengthscale: float, nu: float) -> np.ndarray:
    """``n`` functions of ``process`` at ``coords`` (N, d): (n, N, 1) float32."""
    if process == "nongauss":
        return generate.warped_sample(coords, n, seed=seed, lengthscale=lengthscale)
    return generate.gp_sample(process, coords, n, seed=seed, lengthscale=lengthscale, nu=nu)


def moments(process: str, coords: np.ndarray, *, lengthscale: float, nu: float) -> tuple[np.ndarray, np.ndarray]:
    """The exact mean (N,) and covariance (N, N) of ``process`` at ``coords``."""
    if process == "nongauss":
        return generate.warped_moments(coords, lengthscale=lengthscale)
    return np.zeros(len(coords)), generate.kernel_matrix(coords, coords, kernel=process, lengthscale=lengthscale, nu=nu)


def points(n_points: int, dim: int, *, seed: Any, dist: str) -> np.ndarray:
    """Random points (N, dim) from ``dist``, sorted along the axis in 1D (for figures; the metrics do not care)."""
    p = generate.random_points(n_points, dim, seed=seed, dist=dist)
    return np.sort(p, axis=0) if dim == 1 else p


def training_set(process: str, *, n: int, n_points: int, dist: str = "uniform", seed: int = 0, lengthscale: float = 0.2,
                 nu: float = 2.5, dim: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(values (n, N, 1), coords (n, N, dim))``: each function at its own random points, seeded per function."""
    coords = np.stack([points(n_points, dim, seed=[seed, 1, i], dist=dist) for i in range(n)])
    values = np.stack([draw(process, c, 1, seed=[seed, 2, i], lengthscale=lengthscale, nu=nu)[0]
                       for i, c in enumerate(coords)])
    return values.astype(np.float32), coords.astype(np.float32)


def _fit(model: nn.Module, values: np.ndarray, coords: np.ndarray, *, steps: int | None, budget_s: float | None,
         seed: int, progress: bool) -> dict[str, float]:
    fit = getattr(model, "fit", None)
    if not callable(fit) or not callable(getattr(model, "sample", None)):
        raise ValueError(f"{NAME}: the model needs fit(values, coords, *, steps, seed, progress) and sample(coords, n, *, "
                         f"seed) (input_kind 'generative'); {type(model).__name__} has "
                         f"{'no fit' if not callable(fit) else 'no sample'}")
    accepted = inspect.signature(fit).parameters
    kw = {"steps": steps, "budget_s": budget_s, "seed": seed, "progress": progress}
    t0 = time.perf_counter()
    out = fit(torch.from_numpy(values), torch.from_numpy(coords), **{k: v for k, v in kw.items() if k in accepted}) or {}
    return {"fit_seconds": time.perf_counter() - t0, **{k: float(v) for k, v in out.items() if isinstance(v, (int, float))}}


def _sample_metrics(model: nn.Module, process: str, coords: np.ndarray, n: int, *, seed: int, data_seed: int,
                    lengthscale: float, nu: float) -> dict[str, float]:
    with torch.no_grad():
        s = to_numpy(model.sample(torch.from_numpy(coords), n, seed=seed))
    if s.ndim == 2:
        s = s[..., None]
    if s.shape[:2] != (n, len(coords)):
        raise ValueError(f"{NAME}: model.sample(coords ({len(coords)}, d), {n}) returned shape {s.shape}, expected "
                         f"({n}, {len(coords)}, C)")
    ref = draw(process, coords, n, seed=[data_seed, 3], lengthscale=lengthscale, nu=nu)
    exact = moments(process, coords, lengthscale=lengthscale, nu=nu)
    return {"mean_error": generate.mean_error(s, exact), "cov_error": generate.cov_error(s, exact),
            "energy_distance": generate.energy_distance(s, ref), "marginal_ks": generate.marginal_ks(s, ref)}


def _conditional(model: nn.Module, process: str, query: np.ndarray, *, n: int, n_obs: int, n_cond: int, seed: int,
                 data_seed: int, lengthscale: float, nu: float) -> dict[str, float]:
    means, covs = [], []
    for j in range(n_cond):
        obs = points(n_obs, query.shape[1], seed=[data_seed, 4, j], dist="uniform")
        both = np.concatenate([obs, query])
        f = draw(process, both, 1, seed=[data_seed, 5, j], lengthscale=lengthscale, nu=nu)[0]
        mean, cov = generate.gp_posterior(obs, f[:n_obs], query, kernel=process, lengthscale=lengthscale, nu=nu)
        with torch.no_grad():
            s = to_numpy(model.condition(torch.from_numpy(obs), torch.from_numpy(f[:n_obs]), torch.from_numpy(query), n,
                                         seed=seed + j))
        means.append(generate.mean_error(s, (np.ravel(mean), cov)))
        covs.append(generate.cov_error(s, (np.ravel(mean), cov)))
    return {"cond_mean_error": float(np.mean(means)), "cond_cov_error": float(np.mean(covs))}


def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, process: str = "rbf",
                   nu: float = 2.5) -> GPBaseline:
    """``gp``: the GP baseline of ``process``'s kernel family (the non-Gaussian process gets an RBF GP), unfitted;
    ``params`` is unused (its three hyperparameters are fitted, not trained), so is ``seed``."""
    if name != "gp":
        raise ValueError(f"unknown {NAME} baseline {name!r}; choose from {', '.join(BASELINES)}")
    return GPBaseline("matern" if process == "matern" else "rbf", nu=nu)


def evaluate(model: nn.Module, *, process: str = "rbf", steps: int | None = None, budget_s: float | None = None,
             seed: int = 0, data_seed: int = 0, n_train: int | None = None, train_points: int | None = None,
             n_test: int | None = None, test_points: int | None = None, train_dist: str = "uniform",
             test_dist: str = "skewed", lengthscale: float | None = None, nu: float | None = None,
             n_obs: int | None = None, n_cond: int | None = None, dim: int = 1, baselines: list[str] | None = None,
             train_model: bool | None = None, rebuild: Callable[..., nn.Module] | None = None, progress: bool = False) -> Result:
    """Fit ``model`` to functions of ``process`` and score its samples (module docstring) next to the ``gp`` baseline.

    >>> r = zoo.evaluate("ofm", task="function_generate", process="matern")  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    o = {k: v if v is not None else DEFAULTS[k] for k, v in dict(
        n_train=n_train, train_points=train_points, n_test=n_test, test_points=test_points, steps=steps,
        lengthscale=lengthscale, nu=nu, n_obs=n_obs, n_cond=n_cond).items()}
    if steps is None and budget_s is not None:
        o["steps"] = None
    _check(process, train_dist, test_dist)
    names = list(BASELINES if baselines is None else baselines)
    if set(names) - set(BASELINES):
        raise ValueError(f"{NAME}: unknown baseline(s) {sorted(set(names) - set(BASELINES))}; choose from gp")
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    if dim not in (1, 2):
        raise ValueError(f"{NAME}: dim must be 1 or 2, got {dim}")
    values, coords = training_set(process, n=o["n_train"], n_points=o["train_points"], dist=train_dist, seed=data_seed,
                                  lengthscale=o["lengthscale"], nu=o["nu"], dim=dim)
    test_coords = {suffix: points(o["test_points"], dim, seed=[data_seed, 6], dist=dist)
                   for suffix, dist in (("", test_dist), ("_train_dist", train_dist))}
    rows: dict[str, tuple[nn.Module, dict[str, float]]] = {}
    label = getattr(getattr(model, "zoo", None), "name", None) or type(model).__name__
    torch.manual_seed(seed)
    m: dict[str, float] = {"params": float(count_params(model))}
    if train_model:
        m.update(_fit(model, values, coords, steps=o["steps"], budget_s=budget_s, seed=seed, progress=progress))
    rows[label] = (model, m)
    for b in names:
        base = build_baseline(b, process=process, nu=o["nu"])
        rows[b] = (base, {"params": 0.0, **_fit(base, values, coords, steps=None, budget_s=None, seed=seed, progress=False)})
    for net, row in rows.values():
        for suffix, c in test_coords.items():
            row.update({k + suffix: v for k, v in _sample_metrics(net, process, c, o["n_test"], seed=seed, data_seed=data_seed,
                                                                  lengthscale=o["lengthscale"], nu=o["nu"]).items()})
        if process != "nongauss" and callable(getattr(net, "condition", None)):
            row.update(_conditional(net, process, test_coords[""], n=o["n_test"], n_obs=o["n_obs"], n_cond=o["n_cond"],
                                    seed=seed, data_seed=data_seed, lengthscale=o["lengthscale"], nu=o["nu"]))
    metrics = rows.pop(label)[1]
    config = {"process": process, "dim": dim, "seed": seed, "data_seed": data_seed, "train_dist": train_dist,
              "test_dist": test_dist, "budget_s": budget_s, "trained": bool(train_model), **o}
    return Result(task=NAME, metrics=metrics, baselines={k: v[1] for k, v in rows.items()}, n=o["n_test"],
                  seconds=time.perf_counter() - t0, config=config)


def describe(**options: Any) -> dict[str, Any]:
    """The protocol as :func:`evaluate` runs it with ``options`` (its keyword arguments).

    >>> describe(process="matern")["test_dist"]
    'skewed'
    """
    sig = inspect.signature(evaluate).parameters
    known = set(sig) - {"model", "rebuild", "progress"}
    unknown = set(options) - known
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)}; choose from {', '.join(sorted(known))}")
    opt = {k: (p.default if p.default is not None else DEFAULTS.get(k)) for k, p in sig.items() if k in known}
    opt.update({k: v for k, v in options.items() if v is not None})
    return {**opt, "processes": list(PROCESSES),
            "points": f"uniform on [0, 1) or skewed ({generate.SKEW_DESCRIPTION}); each training function at its own points",
            "metrics": ["mean_error", "cov_error", "energy_distance", "marginal_ks (at test_dist points; suffix "
                        "_train_dist at train_dist points)", "cond_mean_error, cond_cov_error (GP processes, models with "
                        "condition: against the exact posterior given n_obs noise-free observations)"],
            "baselines": list(BASELINES), "gp": "variance, lengthscale and noise by maximum marginal likelihood (L-BFGS)"}
