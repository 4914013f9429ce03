"""``operator_learn``: learn a map between functions from solver-made data (``function_generate``, a distribution
over functions, is ``function_generate.py``).

``evaluate(model, problem=...)``. The model's ``input_kind`` (class attribute, default
``"grid"``) fixes its forward contract:

* ``"grid"``: ``model(a (B, C_in, *grid)) -> (B, C_out, *grid)`` at any grid size;
* ``"points"``: ``model(values (B, N, C_in), coords (B, N, d)) -> (B, N, C_out)`` for any N;
* ``"samples"``: ``model(samples (B, N, 2), mask (B, N), t_query (B, M)) -> (B, M, 1)`` (function-on-function);
* ``"curve"``: ``model(x (B, T), t (T,)) -> (B, 1)`` (scalar-on-function).

Problems (:data:`PROBLEMS`; the data and solvers are ``data.py``): ``burgers`` (1D, train at 64 points, test at 64
and 128), ``darcy`` / ``darcy_lognormal`` (2D, 32 -> 64), ``antiderivative`` and ``poisson`` (1D, 64 -> 128), taking
grid and points models; ``function_on_function`` (samples models) and ``scalar_on_function`` (curve models).
The test functions are the same at every resolution (solved on a fine grid, subsampled), so ``rel_l2_2x`` is
zero-shot super-resolution. Points models are trained on the training grid's points and also scored on random
points of the fine grid that lie on no coarser grid (``rel_l2_irregular``).

Training (``training.py``; unless the model is pretrained, or it has its own ``fit(train, *, steps, budget_s, seed,
progress)``): Adam (weight decay 1e-4 as in the FNO paper), learning rate the caller's ``lr`` else the model's
``default_lr`` else ``training.DEFAULT_LR`` (3e-3), cosine decay to 0 over ``steps`` (constant under ``budget_s``
alone), minibatches of ``batch_size`` drawn by a seeded permutation per epoch, loss: the mean over the batch of each
sample's relative L2 error ``||pred - u|| / ||u||``. Inputs are standardised by one mean and standard deviation per
channel of the training inputs, targets divided by their root mean square (:class:`Normalizer`). Metric: that
relative L2 averaged over the test functions.

Baselines (``baselines=``; default :data:`DEFAULT_BASELINES` for the problem), trained the same way on the same data
and budget, sized to the model's ``count_params`` by ``match_params``: ``fno``, ``unet``, ``mlp_grid`` (one
resolution: NaN at the others, the reason in ``Result.config["not_applicable"]``); functional: ``linear``,
``mlp_interp``, ``fpca_mlp`` (``baselines.py``).

Functional regression (its metrics and losses) is ``functional.py``.
"""
from __future__ import annotations

import inspect
import logging
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result, count_params, model_device, status

from . import baselines as B
from . import data
from .training import (  # noqa: F401 - re-exported: task.fit, task.rel_l2, ...
    BATCH_SIZE,
    DEFAULT_LR,
    WEIGHT_DECAY,
    Split,
    fit,
    predict,
    probe,
    rel_l2,
    score,
    train_row,
)

log = logging.getLogger(__name__)

NAME = "operator_learn"
GRID_PROBLEMS = ("burgers", "darcy", "darcy_lognormal", "antiderivative", "poisson")
FUNCTIONAL_PROBLEMS = ("function_on_function", "scalar_on_function")
PROBLEMS = (*GRID_PROBLEMS, *FUNCTIONAL_PROBLEMS)
KINDS = {**{p: ("grid", "points") for p in GRID_PROBLEMS}, "function_on_function": ("samples",),
         "scalar_on_function": ("curve",)}
BASELINES = B.GRID_BASELINES + B.FUNCTIONAL_BASELINES
DEFAULT_BASELINES = {**{p: B.GRID_BASELINES for p in GRID_PROBLEMS},
                     **{p: B.FUNCTIONAL_BASELINES for p in FUNCTIONAL_PROBLEMS}}
# per problem: training resolution, sizes of the splits, steps; measured to train one model and the fno
# baseline on Burgers in ~20-40 s on one core (README)
SETTINGS: dict[str, dict[str, Any]] = {
    "burgers": {"train_res": 64, "n_train": 512, "n_test": 100, "steps": 500},
    "darcy": {"train_res": 32, "n_train": 256, "n_test": 50, "steps": 500},
    "darcy_lognormal": {"train_res": 32, "n_train": 256, "n_test": 50, "steps": 500},
    "antiderivative": {"train_res": 64, "n_train": 512, "n_test": 100, "steps": 300},
    "poisson": {"train_res": 64, "n_train": 512, "n_test": 100, "steps": 300},
    "function_on_function": {"n_train": 512, "n_test": 200, "steps": 500},
    "scalar_on_function": {"n_train": 512, "n_test": 200, "steps": 500},
}
IRREGULAR_POINTS = 256  # points per function of the irregular test (1D; 2D uses the training grid's count)


def input_kind(model: nn.Module) -> str:
    return getattr(model, "input_kind", "grid")


def _problem(model: nn.Module, problem: str | None) -> str:
    if problem is None:
        kind = input_kind(model)
        problem = getattr(model, "problem", None) or {"samples": "function_on_function",
                                                     "curve": "scalar_on_function"}.get(kind, "burgers")
    if problem not in PROBLEMS:
        raise ValueError(f"{NAME}: unknown problem {problem!r}; choose from {', '.join(PROBLEMS)}")
    return problem


def _check_kind(model: nn.Module, problem: str) -> str:
    kind = input_kind(model)
    if kind not in KINDS[problem]:
        takes = ", ".join(KINDS[problem])
        other = [p for p, k in KINDS.items() if kind in k]
        raise ValueError(f"{NAME}: problem {problem!r} takes {takes} models, the model's input_kind is {kind!r}; "
                         f"evaluate it on problem={other[0]!r}" if other else
                         f"{NAME}: problem {problem!r} takes {takes} models, the model's input_kind is {kind!r} "
                         f"(input kinds of {NAME}: grid, points, samples, curve)")
    return kind


# ------------------------------------------------------------------------------------------------- grid data
class Normalizer:
    """The task's fixed scalings, from the training split (the same numbers at every resolution): inputs standardised
    by one mean and standard deviation per channel; targets divided by their root mean square per channel, so every
    problem's targets are O(1) (Darcy's u is ~1e-2). Dividing prediction and target by one number leaves each relative
    L2 error unchanged, so the metrics are those of ``prediction * u_scale`` against the physical ``u``."""

    def __init__(self, a: np.ndarray, u: np.ndarray):
        axes = (0, *range(2, a.ndim))
        self.mean = a.mean(axis=axes).astype(np.float32)
        self.std = np.maximum(a.std(axis=axes), 1e-6).astype(np.float32)
        self.u_scale = np.maximum(np.sqrt((u.astype(np.float64) ** 2).mean(axis=axes)), 1e-12).astype(np.float32)

    def grid(self, a: np.ndarray) -> torch.Tensor:
        shape = (1, -1) + (1,) * (a.ndim - 2)
        return torch.from_numpy((a - self.mean.reshape(shape)) / self.std.reshape(shape))

    def points(self, values: np.ndarray) -> torch.Tensor:
        return torch.from_numpy((values - self.mean) / self.std)

    def target_grid(self, u: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(u / self.u_scale.reshape((1, -1) + (1,) * (u.ndim - 2)))

    def target_points(self, u: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(u / self.u_scale)


def grid_split(d: data.OperatorData, kind: str, norm: Normalizer) -> Split:
    if kind == "grid":
        return Split((norm.grid(d.a),), norm.target_grid(d.u))
    values, coords, target = data.to_points(d)
    return Split((norm.points(values), torch.from_numpy(coords)), norm.target_points(target))


# ------------------------------------------------------------------------------------------------ baselines
def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, problem: str = "burgers",
                   train_res: int | None = None, circular: bool | None = None) -> nn.Module:
    """Baseline ``name`` for ``problem``, its width matched to ``params`` (``count_params``), seeded.

    ``data``: for ``fpca_mlp`` the training curves interpolated to the baselines' grid (n, G) (``evaluate`` passes
    them); ``mlp_grid`` is built for ``train_res`` (default: the problem's). Unknown names raise ``ValueError``.

    >>> build_baseline("fno", problem="burgers").width
    32
    """
    if name not in B.ALL or name == "gp":
        raise ValueError(f"unknown {NAME} baseline {name!r}; choose from {', '.join(BASELINES)} "
                         "(function_generate's gp: zoo_task_operator_learn.function_generate.build_baseline)")
    problem = _problem(nn.Module(), problem)
    torch.manual_seed(seed)
    if problem in FUNCTIONAL_PROBLEMS:
        if name not in B.FUNCTIONAL_BASELINES:
            raise ValueError(f"{NAME}: {name!r} is a grid baseline; problem {problem!r} takes "
                             f"{', '.join(B.FUNCTIONAL_BASELINES)}")
        kind = KINDS[problem][0]
        return B.build_functional(name, kind, params=params, curves=data)
    if name not in B.GRID_BASELINES:
        raise ValueError(f"{NAME}: {name!r} is a functional-regression baseline; problem {problem!r} takes "
                         f"{', '.join(B.GRID_BASELINES)}")
    dim = data_dim(problem)
    if name == "fno":
        return B.build_fno(dim, 1, 1, params=params)
    if name == "unet":
        return B.build_unet(dim, 1, 1, params=params, circular=problem == "burgers" if circular is None else circular)
    res = train_res or SETTINGS[problem]["train_res"]
    return B.build_mlp_grid(1, 1, (res,) * dim, params=params)


def data_dim(problem: str) -> int:
    return 2 if problem.startswith("darcy") else 1


# ------------------------------------------------------------------------------------------------ evaluate
def evaluate(model: nn.Module, *, problem: str | None = None, steps: int | None = None, budget_s: float | None = None,
             seed: int = 0, data_seed: int = 0, train_res: int | None = None, test_res: tuple[int, ...] | None = None,
             n_train: int | None = None, n_test: int | None = None, lr: float | None = None,
             batch_size: int = BATCH_SIZE, out_dir: str | None = None, baselines: list[str] | tuple[str, ...] | None = None,
             train_model: bool | None = None, irregular_points: int | None = None,
             rebuild: Callable[..., nn.Module] | None = None, progress: bool = False) -> Result:
    """Train ``model`` (unless pretrained) and the baselines on ``problem`` and score them on its test split.

    ``seed`` seeds the training (minibatch order, baseline initialisation); ``data_seed`` fixes the functions (the
    same data for every training seed, so seeds measure training noise). ``test_res``: the resolutions scored
    besides ``train_res`` (default: twice it): ``rel_l2_2x`` at twice ``train_res``, ``rel_l2_<res>`` at the others.
    ``problem`` defaults to the model's ``problem`` attribute, else by kind (grid/points: burgers, samples:
    function_on_function, curve: scalar_on_function). A model that fails on the problem's inputs or returns the
    wrong shape raises ``ValueError`` before any training.

    >>> r = evaluate(FNO1d(modes=8, width=16), problem="burgers", steps=200)  # doctest: +SKIP
    >>> r.metrics["rel_l2"], r.metrics["rel_l2_2x"], r.baselines["unet"]["rel_l2_2x"]  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    problem = _problem(model, problem)
    kind = _check_kind(model, problem)
    cfg = SETTINGS[problem]
    if steps is None and budget_s is None:
        steps = cfg["steps"]
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    names = list(DEFAULT_BASELINES[problem] if baselines is None else baselines)
    bad = [b for b in names if b not in DEFAULT_BASELINES[problem]]
    if bad:
        raise ValueError(f"{NAME}: unknown baseline(s) {bad} for problem {problem!r}; choose from "
                         f"{', '.join(DEFAULT_BASELINES[problem])}")
    n_train, n_test = n_train or cfg["n_train"], n_test or cfg["n_test"]
    label = getattr(getattr(model, "zoo", None), "name", None) or type(model).__name__
    if label in names:
        label = f"{label} (model)"
    train_kw = {"steps": steps, "budget_s": budget_s, "batch_size": batch_size, "seed": seed}
    config: dict[str, Any] = {"problem": problem, "input_kind": kind, "seed": seed, "data_seed": data_seed,
                              "n_train": n_train, "n_test": n_test, "steps": steps, "budget_s": budget_s,
                              "batch_size": batch_size, "trained": bool(train_model), "not_applicable": {}}
    if problem in FUNCTIONAL_PROBLEMS:
        from .functional import evaluate_functional

        metrics, base, extra = evaluate_functional(model, problem, kind, names, n_train=n_train, n_test=n_test,
                                                   data_seed=data_seed, lr=lr, train_model=train_model,
                                                   train_kw=train_kw, label=label)
        config.update(extra)
        if out_dir is not None:  # no figure of functional regression yet: say so rather than write nothing silently
            config["figures"] = "none: out_dir draws the grid problems only"
        return Result(task=NAME, metrics=metrics, baselines=base, n=n_test, seconds=time.perf_counter() - t0, config=config)

    train_res = train_res or cfg["train_res"]
    test_res = tuple(test_res) if test_res is not None else (2 * train_res,)
    resolutions = (train_res, *[r for r in test_res if r != train_res])
    status(f"{NAME}: {problem} data ({n_train} train, {n_test} test functions at {resolutions})", force=progress)
    train_data = data.load(problem, split="train", n=n_train, resolution=train_res, seed=data_seed)
    norm = Normalizer(train_data.a, train_data.u)
    tests = {r: data.load(problem, split="test", n=n_test, resolution=r, seed=data_seed) for r in resolutions}
    config.update({"train_res": train_res, "test_res": list(resolutions[1:]), "lr": lr if lr is not None else
                   getattr(model, "default_lr", DEFAULT_LR), "input_mean": norm.mean.tolist(), "input_std": norm.std.tolist(),
                   "target_scale": norm.u_scale.tolist()})
    irregular = None
    if kind == "points":
        npts = irregular_points or (IRREGULAR_POINTS if data_dim(problem) == 1 else train_res ** 2)
        v, c, t = data.irregular(problem, split="test", n=n_test, n_points=npts, seed=data_seed)
        irregular = Split((norm.points(v), torch.from_numpy(c)), norm.target_points(t))
        config["irregular_points"] = npts

    rows: dict[str, tuple[nn.Module, str, dict[str, float]]] = {}
    params = count_params(model)
    train_split = grid_split(train_data, kind, norm)
    probe(model, train_split, problem)
    torch.manual_seed(seed)
    rows[label] = (model, kind, train_row(model, train_split, train_model=train_model, lr=lr, train_kw=train_kw,
                                          label=label, progress=progress))
    for b in names:
        base = build_baseline(b, params=params, seed=seed, problem=problem, train_res=train_res).to(model_device(model))
        rows[b] = (base, "grid", train_row(base, grid_split(train_data, "grid", norm), train_model=True, lr=None,
                                           train_kw=train_kw, label=b, progress=progress))

    artifacts: dict[str, str] = {}
    for key, (net, k, m) in rows.items():
        for r in resolutions:
            split = grid_split(tests[r], k, norm)
            names_r = ["rel_l2"] if r == train_res else ["rel_l2_2x"] if r == 2 * train_res else [f"rel_l2_{r}"]
            if isinstance(net, B.MLPGrid) and r != train_res:
                value = float("nan")
                config["not_applicable"][f"{key}.{names_r[0]}"] = (f"mlp_grid maps the {train_res}-point grid's values; "
                                                                 "it has no input or output at another resolution")
            else:
                value = score(net, split)
            m.update(dict.fromkeys(names_r, value))
        if irregular is not None and k == "points":
            m["rel_l2_irregular"] = score(net, irregular)
    if out_dir is not None:
        from .plots import save_examples

        net, k, _ = rows[label]
        scale = torch.from_numpy(norm.u_scale)  # figures in the problem's units
        if k == "grid":
            scale = scale.reshape(-1, *[1] * data_dim(problem))
        preds = {r: (tests[r], predict(net, grid_split(tests[r], k, norm)) * scale) for r in resolutions}
        artifacts = save_examples(Path(out_dir), preds, kind=k, title=f"{label} on {problem}")
    metrics = rows.pop(label)[2]
    return Result(task=NAME, metrics=metrics, baselines={k: v[2] for k, v in rows.items()}, n=n_test,
                  seconds=time.perf_counter() - t0, config=config, artifacts=artifacts)


# ------------------------------------------------------------------------------------------------ contract
def example_input(model: nn.Module | None = None) -> Any:
    """A small input of the forward contract of ``model``'s ``input_kind`` (grid when no model is given):

    grid: ``a`` (2, C_in, 64), or (2, C_in, 32, 32) for a model whose ``grid_dim`` (or FNO's ``dim``) is 2;
    points: ``(values (2, 64, 1), coords (2, 64, 1))``; samples: ``(samples (2, 30, 2), mask (2, 30), t_query
    (2, 16))`` (the second curve padded after 20 samples); curve: ``(x (2, 128), t (128,))``.

    >>> example_input().shape, [tuple(x.shape) for x in example_input(PointsModel())]  # doctest: +SKIP
    """
    kind = input_kind(model) if model is not None else "grid"
    x = torch.arange(64) / 64
    a = torch.stack([torch.sin(2 * math.pi * x), torch.cos(4 * math.pi * x)])[:, None]
    if kind == "grid":
        c = getattr(model, "in_channels", 1)
        if grid_dim(model) == 2:  # (2, C, 32, 32): a product of the 1-D curves at half the resolution
            a = a[..., ::2, None] * a[..., None, ::2]
        return a.repeat(1, c, *([1] * (a.ndim - 2)))
    if kind == "points":
        return a.transpose(1, 2).contiguous(), x.reshape(1, 64, 1).expand(2, 64, 1).contiguous()
    if kind == "samples":
        t = torch.linspace(0, 1, 30).expand(2, 30)
        samples = torch.stack([t, torch.sin(2 * math.pi * t)], -1)
        mask = torch.ones(2, 30, dtype=torch.bool)
        mask[1, 20:] = False
        return samples * mask[..., None], mask, torch.linspace(0, 1, 16).expand(2, 16).contiguous()
    if kind == "curve":
        t = torch.linspace(0, 1, 128)
        return torch.stack([torch.sin(math.pi * t), torch.sin(3 * math.pi * t)]), t
    raise ValueError(f"{NAME}: unknown input_kind {kind!r}; choose from {', '.join(INPUT_KINDS)}")


INPUT_KINDS = ("grid", "points", "samples", "curve")


def grid_dim(model: nn.Module | None) -> int:
    """The number of spatial axes a grid model takes: its ``grid_dim``, else the ``dim`` of zoo_nn's FNO/U-Net, else 1."""
    d = getattr(model, "grid_dim", None) or getattr(model, "dim", None)
    return d if d in (1, 2) else 1


def check_output(model: nn.Module, output: Any) -> None:
    """The forward contract of the model's kind on :func:`example_input` ``(model)``: a finite tensor of shape grid
    (2, C_out, 64), points (2, 64, C_out), samples (2, 16, 1), curve (2, 1); C_out = ``out_channels``, else 1."""
    kind = input_kind(model)
    c = getattr(model, "out_channels", 1)
    grid = (2, c, 32, 32) if grid_dim(model) == 2 else (2, c, 64)
    want = {"grid": grid, "points": (2, 64, c), "samples": (2, 16, 1), "curve": (2, 1)}.get(kind)
    got = tuple(getattr(output, "shape", ()))
    if not isinstance(output, torch.Tensor) or got != want:
        raise AssertionError(f"{NAME}: a {kind} model's output on the example input must be {want}, "
                             f"got {got or type(output).__name__}")
    if not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: the output has non-finite values")


def describe(*, problem: str = "burgers", **options: Any) -> dict[str, Any]:
    """The protocol of ``problem`` as :func:`evaluate` runs it with ``options`` (its keyword arguments).

    >>> d = describe(problem="burgers")
    >>> d["train_res"], d["test_res"], d["baselines"]
    (64, [128], ['fno', 'unet', 'mlp_grid'])
    """
    if problem not in PROBLEMS:
        raise ValueError(f"{NAME}: unknown problem {problem!r}; choose from {', '.join(PROBLEMS)}")
    known = set(inspect.signature(evaluate).parameters) - {"model", "problem", "rebuild", "progress"}
    unknown = set(options) - known
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)}; choose from {', '.join(sorted(known))}")
    cfg = {**SETTINGS[problem], **{k: v for k, v in options.items() if v is not None}}
    out: dict[str, Any] = {
        "problem": problem, "input_kinds": list(KINDS[problem]), "data": _data_text(problem),
        "n_train": cfg["n_train"], "n_test": cfg["n_test"], "steps": cfg["steps"], "budget_s": cfg.get("budget_s"),
        "data_seed": cfg.get("data_seed", 0), "optimizer": f"Adam (weight decay {WEIGHT_DECAY:g}), cosine decay over steps",
        "lr": cfg.get("lr") or f"the model's default_lr, else {DEFAULT_LR:g}", "batch_size": cfg.get("batch_size", BATCH_SIZE),
        "loss": "mean over the batch of ||pred - u|| / ||u||",
        "baselines": list(cfg.get("baselines") or DEFAULT_BASELINES[problem]),
        "baseline_sizes": "width matched to the model's count_params (match_params); linear: not sized"}
    if problem in GRID_PROBLEMS:
        res = cfg["train_res"]
        out.update({"train_res": res, "test_res": list(cfg.get("test_res") or [2 * res]),
                    "inputs": "standardised by the training inputs' mean and std (one per channel)",
                    "targets": "divided by the training targets' root mean square (one per channel; metrics unchanged)",
                    "metrics": {"rel_l2": "mean relative L2 at train_res", "rel_l2_2x": "at 2 * train_res (same functions)",
                                "rel_l2_irregular": f"points models: on {IRREGULAR_POINTS} (1D) / train_res^2 (2D) random "
                                                    "fine-grid points per function on no coarser grid"}})
    return out


def _data_text(problem: str) -> str:
    if problem in FUNCTIONAL_PROBLEMS:
        return f"data.functional({problem!r}): see zoo_task_operator_learn.data"
    return (f"data.load({problem!r}): solved on {data.fine_resolution(problem)} points per axis, subsampled "
            "(zoo_task_operator_learn.data)")

