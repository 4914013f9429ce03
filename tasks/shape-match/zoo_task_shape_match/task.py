"""shape_match: zero-shot non-rigid shape correspondence with functional maps, the regulariser being the model.

Protocol (``evaluate``; every number below is an option of it, ``describe()`` lists them):

1. Data (``data``, ``shapes``): seeded collections of deformed meshes per category, with cotangent Laplacian
   eigenbases (k = 30), descriptors and geodesics. Training categories (default ellipsoid, torus) give the prior's
   training maps (all ordered pairs of ``n_train`` shapes each) and the validation pairs that tune every
   regulariser's weight; held-out categories (default bumpy sphere, superquadric) give the test pairs.
2. Training: a model with ``training_loss`` (and no pretrained weights) is trained with Adam on the ground-truth maps
   of the training categories for ``steps`` steps of ``batch_size`` maps.
3. Weight tuning: for the model and each baseline, the weight ``w`` of the regulariser is chosen from ``WEIGHTS``
   (``lap_ortho``: the orthogonality weight from ``WEIGHTS`` or 0 and the commutativity weight ``lap`` from
   ``LAP_WEIGHTS``) by the mean error over the validation pairs (training categories only).
4. Test: every test pair is solved with the tuned weight (``fmaps.solve``: descriptor term + ``w R(C)``, Adam from
   the ridge start, the same steps and learning rate for all), converted to a pointwise map by nearest neighbours in
   the spectral embedding, and scored.

Metric: ``error``, the mean over test pairs of the mean geodesic distance (on the source mesh, along edges) between
matched and true vertices, divided by the source's diameter; ``error_<category>`` per held-out category; ``error_val``
on the validation pairs (the tuned value); ``weight`` (and ``lap``) chosen; ``floor``: the error of the ground-truth
map truncated to k = 30 (the pipeline's best possible); ``ortho_residual`` / ``comm_residual`` of the solved maps.

>>> from zoo_task_shape_match.baselines import Ortho
>>> describe()["categories"]["test"]
('bumpy', 'superquadric')
"""
from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result, model_device, run_budget

from . import data as D_
from . import fmaps
from .baselines import BASELINES, build_baseline  # noqa: F401 - the Task protocol's names

NAME = "shape_match"
TRAIN_CATEGORIES = ("ellipsoid", "torus")
TEST_CATEGORIES = ("bumpy", "superquadric")
WEIGHTS = (1e-4, 3e-4, 0.001, 0.003, 0.01, 0.03, 0.1)
LAP_WEIGHTS = (0.1, 1.0, 10.0, 100.0, 1000.0)
DEFAULT_STEPS = 500


def _pair_batch(s: D_.ShapeSet, pairs: np.ndarray) -> tuple[torch.Tensor, ...]:
    coef, ev = fmaps.coefficients(s), torch.as_tensor(s.evals)
    return coef[pairs[:, 0]], coef[pairs[:, 1]], ev[pairs[:, 0]], ev[pairs[:, 1]]


class _Split:
    """The pairs of one split across categories, batched for the solver."""

    def __init__(self, sets: list[D_.ShapeSet], n_pairs: int | None, seed: int) -> None:
        self.sets = sets
        self.pairs = [D_.pairs(len(s), n_pairs, seed + 7 * i) for i, s in enumerate(sets)]
        self.batches = [_pair_batch(s, p) for s, p in zip(sets, self.pairs, strict=True)]

    def solve(self, regularizer: Callable | None, weights: list[torch.Tensor], seed: int,
              solver: dict[str, Any], device: Any = None) -> list[torch.Tensor]:
        """Per category, the maps of every pair under each weighting: ``weights`` is a list of candidates, each a
        tensor broadcastable to the regulariser's terms (see ``_candidates``); maps (candidates * P, k, k)."""
        out = []
        reps = len(weights)
        rep = lambda t: t.repeat(reps, *([1] * (t.ndim - 1)))  # noqa: E731
        for A, B, ex, ey in self.batches:
            w = torch.cat([wt.expand(len(A), *wt.shape[1:]) for wt in weights]).to(device or "cpu")
            torch.manual_seed(seed)  # a stochastic regulariser draws the same noise in every run with this seed
            reg = None if regularizer is None else (lambda C, a, b, w=w: regularizer(C, a, b, w))
            out.append(fmaps.solve(rep(A), rep(B), rep(ex), rep(ey), reg, 1.0, device=device, **solver))
        return out

    def errors(self, maps: list[torch.Tensor], reps: int) -> list[np.ndarray]:
        """Per category, (reps, P) errors of ``maps`` from :meth:`solve`."""
        return [fmaps.match_errors(s, np.tile(p, (reps, 1)), C).reshape(reps, len(p))
                for s, p, C in zip(self.sets, self.pairs, maps, strict=True)]


def _candidates(name: str, model: nn.Module) -> tuple[Callable, list[dict[str, float]], list[torch.Tensor]]:
    """``(regulariser(C, evals_x, evals_y, weights), settings, weights)``: the weightings tried on the validation
    pairs. ``lap_ortho`` gets its two terms weighted separately (``LAP_WEIGHTS`` x ``WEIGHTS`` and 0), every other
    model one weight from ``WEIGHTS``."""
    if name == "none":
        return (lambda C, a, b, w: w[:, 0] * model.regularizer(C, a, b)), [{"weight": 0.0}], [torch.zeros(1, 1)]
    if name == "lap_ortho":
        grid = [(lap, w) for lap in LAP_WEIGHTS for w in (0.0, *WEIGHTS)]  # w = 0: commutativity alone

        def lap_ortho(C: torch.Tensor, a: torch.Tensor, b: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return w[:, 0] * fmaps.commutativity(C, a, b) + w[:, 1] * fmaps.orthogonality(C)
        return lap_ortho, [{"weight": w, "lap": lap} for lap, w in grid], [torch.tensor([[lap, w]]) for lap, w in grid]
    return ((lambda C, a, b, w: w[:, 0] * model.regularizer(C, a, b)), [{"weight": w} for w in WEIGHTS],
            [torch.tensor([[w]]) for w in WEIGHTS])


def _score(name: str, model: nn.Module, val: _Split, test: _Split, seed: int, solver: dict[str, Any],
           test_categories: Sequence[str]) -> dict[str, float]:
    reg, settings, weights = _candidates(name, model)
    device = model_device(model)  # the data goes where the model is; the maps come back to the CPU
    per_cand = np.concatenate(val.errors(val.solve(reg, weights, seed, solver, device), len(weights)), axis=1).mean(1)
    best = int(np.argmin(per_cand))
    maps = test.solve(reg, [weights[best]], seed, solver, device)
    per_cat = [e[0] for e in test.errors(maps, 1)]
    out = {"error": float(np.concatenate(per_cat).mean()), "error_val": float(per_cand[best]), **settings[best]}
    out.update({f"error_{c}": float(e.mean()) for c, e in zip(test_categories, per_cat, strict=True)})
    C = torch.cat(maps)
    ex, ey = torch.cat([b[2] for b in test.batches]), torch.cat([b[3] for b in test.batches])
    out["ortho_residual"] = float(fmaps.orthogonality(C).mean())
    out["comm_residual"] = float(fmaps.commutativity(C, ex, ey).mean())
    return out


def training_maps(categories: Sequence[str], n_train: int, seed: int, k: int = D_.K) -> torch.Tensor:
    """Ground-truth functional maps of all ordered pairs of ``n_train`` training shapes per category, (N, k, k)."""
    maps = []
    for c in categories:
        s = D_.shape_set(c, "train", n_train, seed, k)
        maps.append(fmaps.gt_maps(s, D_.pairs(len(s), None, seed)))
    return torch.cat(maps)


def _train(model: nn.Module, maps: torch.Tensor, *, steps: int | None, budget_s: float | None, batch_size: int,
           lr: float, seed: int, progress: bool) -> dict[str, float]:
    torch.manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    model.train()

    device = model_device(model)

    def step(_: int) -> float:
        idx = torch.randint(0, len(maps), (batch_size,), generator=gen)
        loss = model.training_loss(maps[idx].to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return float(loss.detach())

    info = run_budget(step, steps=steps, budget_s=budget_s, progress="shape_match prior" if progress else None)
    model.eval()
    return info


def evaluate(model: nn.Module, *, seed: int = 0, steps: int | None = None, budget_s: float | None = None,
             train_categories: Sequence[str] = TRAIN_CATEGORIES, test_categories: Sequence[str] = TEST_CATEGORIES,
             n_train: int = 24, n_val: int = 8, n_test: int = 12, val_pairs: int = 8, test_pairs: int = 24,
             batch_size: int = 64, lr: float = 1e-3, solver_steps: int = fmaps.SOLVER["steps"],
             solver_lr: float = fmaps.SOLVER["lr"], baselines: Sequence[str] | None = None, progress: bool = False,
             rebuild: Callable[..., nn.Module] | None = None) -> Result:
    """Train ``model`` when it has ``training_loss`` (``steps``, default ``DEFAULT_STEPS``), then tune and score it and
    the baselines (default all three) on the same pairs; see the module docstring."""
    del rebuild  # nothing to rebuild (and no figures: no out_dir)
    if not callable(getattr(model, "regularizer", None)):
        raise TypeError(f"{NAME}: {type(model).__name__} has no regularizer(C, evals_x, evals_y) -> (B,); subclass "
                        "zoo_task_shape_match.baselines.MapRegularizer")
    overlap = set(train_categories) & set(test_categories)
    if overlap:
        raise ValueError(f"{NAME}: categories {sorted(overlap)} are in both train and test; zero-shot needs disjoint ones")
    names = list(BASELINES) if baselines is None else list(baselines)
    for b in names:
        if b not in BASELINES:
            raise ValueError(f"{NAME}: unknown baseline {b!r}; choose from {BASELINES}")
    t0 = time.perf_counter()
    solver = {"steps": solver_steps, "lr": solver_lr}
    config: dict[str, Any] = {"seed": seed, "train_categories": tuple(train_categories),
                              "test_categories": tuple(test_categories), "n_train": n_train, "n_val": n_val,
                              "n_test": n_test, "val_pairs": val_pairs, "test_pairs": test_pairs, "solver": solver,
                              "k": D_.K, "descriptors": dict(D_.DESCRIPTORS)}
    pretrained = getattr(getattr(model, "zoo", None), "pretrained", False)
    if callable(getattr(model, "training_loss", None)) and not pretrained and steps != 0:
        steps = DEFAULT_STEPS if steps is None and budget_s is None else steps
        maps = training_maps(train_categories, n_train, seed)
        config["training"] = {**_train(model, maps, steps=steps, budget_s=budget_s, batch_size=batch_size, lr=lr,
                                       seed=seed, progress=progress), "maps": len(maps), "batch_size": batch_size,
                              "lr": lr, "optimizer": "Adam"}
    val = _Split([D_.shape_set(c, "val", n_val, seed, geodesic=True) for c in train_categories], val_pairs, seed)
    test = _Split([D_.shape_set(c, "test", n_test, seed, geodesic=True) for c in test_categories], test_pairs, seed + 1)
    with torch.no_grad():
        floor = [fmaps.match_errors(s, p, fmaps.gt_maps(s, p)) for s, p in zip(test.sets, test.pairs, strict=True)]
    model.eval()
    metrics = _score("model", model, val, test, seed, solver, test_categories)
    metrics["floor"] = float(np.concatenate(floor).mean())
    base = {b: _score(b, build_baseline(b), val, test, seed, solver, test_categories) for b in names}
    n = sum(len(p) for p in test.pairs)
    return Result(task=NAME, metrics=metrics, baselines=base, n=n, seconds=time.perf_counter() - t0, config=config)


def example_input(model: nn.Module | None = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Two k x k maps (a noisy identity and a random one) and two spectra; ``k`` is the model's ``k`` when it has one."""
    k = int(getattr(model, "k", D_.K))
    gen = torch.Generator().manual_seed(0)
    C = torch.stack([torch.eye(k) + 0.05 * torch.randn(k, k, generator=gen), torch.randn(k, k, generator=gen) / k ** 0.5])
    ev = torch.linspace(0, 1, k).pow(1.5).expand(2, k) * 350
    return C, ev.clone(), (ev * 1.02).clone()


def check_output(model: nn.Module, output: Any) -> None:
    """The contract on :func:`example_input`: a finite (2,) tensor."""
    if not isinstance(output, torch.Tensor) or output.shape != (2,) or not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: regularizer(C (2, k, k), evals_x, evals_y) must return a finite (2,) tensor, got "
                             f"{getattr(output, 'dtype', type(output))} {tuple(getattr(output, 'shape', ()))}")


def describe(**options: Any) -> dict[str, Any]:
    """The protocol's settings as :func:`evaluate` runs them with ``options``.

    >>> describe(n_test=6)["shapes"]["n_test"]
    6
    """
    params = inspect.signature(evaluate).parameters
    known = {k: p.default for k, p in params.items() if k not in ("model", "seed", "progress", "rebuild",
                                                                    "baselines", "budget_s")}
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)}; choose from {', '.join(known)}")
    o = {**known, **options}
    return {
        "categories": {"train": tuple(o["train_categories"]), "test": tuple(o["test_categories"])},
        "shapes": {"n_train": o["n_train"], "n_val": o["n_val"], "n_test": o["n_test"], "val_pairs": o["val_pairs"],
                   "test_pairs": o["test_pairs"], "vertices": "642 (icosphere) / 450 (torus grid)",
                   "deformation": "bend + low-frequency displacement, 8% parameter jitter, unit area"},
        "spectral": {"k": D_.K, "laplacian": "cotangent, lumped mass", "eigensolver": "scipy eigsh shift-invert",
                     "descriptors": dict(D_.DESCRIPTORS)},
        "solver": {"steps": o["solver_steps"], "lr": o["solver_lr"], "optimizer": "Adam", "start": "ridge least squares",
                   "data_term": "||C A - B||^2 / ||B||^2"},
        "tuning": {"weights": WEIGHTS, "lap_weights": LAP_WEIGHTS, "on": "validation pairs of the training categories"},
        "prior_training": {"steps": DEFAULT_STEPS if o["steps"] is None else o["steps"], "batch_size": o["batch_size"],
                           "lr": o["lr"], "optimizer": "Adam", "maps": "all ordered pairs of n_train shapes per category"},
        "metric": "mean geodesic (edge-graph) error on the source / its diameter, pointwise map by spectral nearest "
                  "neighbours, no refinement",
        "baselines": BASELINES,
    }
