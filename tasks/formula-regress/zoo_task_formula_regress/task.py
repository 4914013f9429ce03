"""``formula_regress``: fit symbolic formulas from the KAN papers; relative RMSE on held-out points.

Formulas (``FORMULAS``, a fixed set): the toy functions of Liu et al. 2024 (KAN, arXiv:2404.19756,
Sec. 3.1), three of its special functions (Sec. 3.2, Table 2; ``scipy.special``, on ``[0, 1]^2`` as in
KANbeFair's ``special.py``) and two Feynman equations (Sec. 3.3; variable ranges of the AI Feynman
table). Each variable is drawn uniformly from its range (``DOMAINS``) and **rescaled to [-1, 1]**
before the model sees it (the KAN grid's default range); targets are standardised with the training
split's mean and std. ``N_TRAIN`` training and ``N_TEST`` test points, fixed (``make_data(seed=DATA_SEED)``).

Your own formula: ``Formula(name, fn, n_vars, domain)`` (a Python callable on the variables in their
physical ranges, ``(N, n_vars) -> (N,)``, and the range of each variable) goes wherever a formula name
does: ``evaluate(model, formula=Formula(...))``, ``make_data``, ``fit_formulas``, ``describe``. It is
sampled, rescaled and scored exactly as the fixed formulas.

Contract: ``model(x: (B, d)) -> (B, 1)``. Builders take ``in_features`` (default 2, the example
input's width); ``evaluate`` rebuilds the model once per formula with that formula's ``d`` through
its zoo provenance: ``zoo.create(model.zoo.name, **{**model.zoo.model_args, "in_features": d})``,
seeded with ``seed``. A plain module without ``model.zoo`` is copied (its initial weights) for each
formula whose ``d`` equals its ``in_features`` attribute; the module passed in is never trained.

Metric: ``rel_rmse = RMSE(pred, y) / std(y)`` on the test points (1.0 = predicting the mean;
invariant to the standardisation), per formula (``rel_rmse:NAME``), their mean and geometric mean.
Training: full-batch Adam with a cosine schedule for ``steps`` (default 1000). Baselines (same
steps, same seed), rebuilt per formula at the model's parameter count: ``mlp`` (``[d, h, h, 1]``, GELU,
as KANbeFair's MLP) and ``kan`` (``KAN([d, h, 1])``, G=5, k=3), ``h`` chosen by ``match_width``.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from zoo.task import Result, count_params, match_width, model_device, run_budget, to_model_device, torch_threads
from zoo_nn.kan import KAN

log = logging.getLogger(__name__)

NAME = "formula_regress"
DEFAULT_STEPS = 1000
DEFAULT_LR = 1e-2
N_TRAIN = N_TEST = 1000
TRAIN_THREADS = 1  # torch threads while training: these networks are too small to gain from more
DATA_SEED = 0  # the fixed points every evaluation uses
EXAMPLE_FORMULA = "exp_sin_sq"

_KAN = "Liu et al. 2024 (KAN, arXiv:2404.19756)"


def _sp():
    import scipy.special

    return scipy.special


# name -> (fn on the variables in their physical ranges (N, d) -> (N,), n_vars, description, source)
FORMULAS: dict[str, tuple[Callable[[np.ndarray], np.ndarray], int, str, str]] = {
    "bessel_j0": (lambda x: _sp().j0(20 * x[:, 0]), 1, "J0(20x)", f"{_KAN}, Sec. 3.1 (toy functions)"),
    "exp_sin_sq": (lambda x: np.exp(np.sin(np.pi * x[:, 0]) + x[:, 1] ** 2), 2, "exp(sin(pi x) + y^2)",
                   f"{_KAN}, Sec. 2.3 and 3.1"),
    "xy": (lambda x: x[:, 0] * x[:, 1], 2, "x * y", f"{_KAN}, Sec. 3.1"),
    "exp_sin_4d": (lambda x: np.exp(0.5 * (np.sin(np.pi * (x[:, 0] ** 2 + x[:, 1] ** 2))
                                           + np.sin(np.pi * (x[:, 2] ** 2 + x[:, 3] ** 2)))), 4,
                   "exp((sin(pi (x1^2 + x2^2)) + sin(pi (x3^2 + x4^2))) / 2)", f"{_KAN}, Sec. 3.1"),
    "ellipkinc": (lambda x: _sp().ellipkinc(x[:, 0], x[:, 1]), 2,
                  "incomplete elliptic integral of the first kind F(phi | m)", f"{_KAN}, Sec. 3.2 (Table 2)"),
    "bessel_jv": (lambda x: _sp().jv(x[:, 0], x[:, 1]), 2, "Bessel function of the first kind J_v(x)",
                  f"{_KAN}, Sec. 3.2 (Table 2)"),
    "legendre_p": (lambda x: _sp().lpmv(0, x[:, 0], x[:, 1]), 2, "Legendre function P_v(x) (lpmv, m = 0)",
                   f"{_KAN}, Sec. 3.2 (Table 2)"),
    "feynman_I_6_2": (lambda x: np.exp(-((x[:, 0] / x[:, 1]) ** 2) / 2) / (np.sqrt(2 * np.pi) * x[:, 1]), 2,
                      "exp(-(theta / sigma)^2 / 2) / (sqrt(2 pi) sigma)", f"{_KAN}, Sec. 3.3; Feynman I.6.2"),
    "feynman_I_12_11": (lambda x: x[:, 0] * (x[:, 1] + x[:, 2] * x[:, 3] * np.sin(x[:, 4])), 5,
                        "q (Ef + B v sin(theta))", f"{_KAN}, Sec. 3.3; Feynman I.12.11"),
}

# Ranges of each variable before rescaling to [-1, 1] (one pair for all variables, or one per variable).
DOMAINS: dict[str, tuple[tuple[float, float], ...]] = {
    "bessel_j0": ((-1.0, 1.0),), "exp_sin_sq": ((-1.0, 1.0),), "xy": ((-1.0, 1.0),), "exp_sin_4d": ((-1.0, 1.0),),
    "ellipkinc": ((0.0, 1.0),), "bessel_jv": ((0.0, 1.0),), "legendre_p": ((0.0, 1.0),),
    "feynman_I_6_2": ((1.0, 3.0),), "feynman_I_12_11": ((1.0, 5.0),),
}


@dataclass(frozen=True)
class Formula:
    """A formula to regress, given by the caller (or one of ``FORMULAS``, see ``resolve_formula``).

    Args:
        name: its key in the results (``rel_rmse:NAME``); must not be one of ``FORMULAS``' names.
        fn: the variables in their physical ranges, ``(N, n_vars)`` float64 numpy array -> ``(N,)`` values
            (finite everywhere on ``domain``). Called once per (name, seed), in this process.
        n_vars: the input dimension ``d``.
        domain: each variable's ``(low, high)`` range: one pair for all variables, or one per variable.
            Points are drawn uniformly there and rescaled to [-1, 1] for the model.
        description, source: shown by ``describe``.

    >>> f = Formula("sin_xy", lambda v: np.sin(v[:, 0] * v[:, 1]), n_vars=2, domain=((0.0, 3.0),))
    >>> tuple(make_data(f).x_train.shape)
    (1000, 2)
    """

    name: str
    fn: Callable[[np.ndarray], np.ndarray]
    n_vars: int
    domain: tuple[tuple[float, float], ...] = ((-1.0, 1.0),)
    description: str = ""
    source: str = "user"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"Formula name must be a non-empty string, got {self.name!r}")
        if not callable(self.fn):
            raise TypeError(f"Formula {self.name!r}: fn must be callable ((N, n_vars) array -> (N,)), got "
                            f"{type(self.fn).__name__}")
        if isinstance(self.n_vars, bool) or not isinstance(self.n_vars, int) or self.n_vars < 1:
            raise ValueError(f"Formula {self.name!r}: n_vars must be a positive int, got {self.n_vars!r}")
        try:
            domain = tuple((float(lo), float(hi)) for lo, hi in self.domain)
        except (TypeError, ValueError):
            raise ValueError(f"Formula {self.name!r}: domain must be (low, high) pairs, e.g. ((0.0, 1.0),), "
                             f"got {self.domain!r}") from None
        if len(domain) not in (1, self.n_vars):
            raise ValueError(f"Formula {self.name!r}: domain has {len(domain)} ranges; give one for all variables "
                             f"or one per variable ({self.n_vars})")
        bad = [r for r in domain if not (math.isfinite(r[0]) and math.isfinite(r[1]) and r[0] < r[1])]
        if bad:
            raise ValueError(f"Formula {self.name!r}: each range needs finite low < high, got {bad}")
        object.__setattr__(self, "domain", domain)

    def describe(self) -> dict[str, Any]:
        """The formula as data (no callable), for results and ``describe``."""
        return {"n_vars": self.n_vars, "domain": [list(r) for r in self.domain], "description": self.description,
                "source": self.source}


FormulaLike = str | Formula


def resolve_formula(formula: FormulaLike) -> Formula:
    """A ``Formula`` from a name of ``FORMULAS`` or a ``Formula`` (a user formula may not take a fixed name).

    >>> resolve_formula("xy").n_vars
    2
    """
    if isinstance(formula, Formula):
        if formula.name in FORMULAS and formula.fn is not FORMULAS[formula.name][0]:
            raise ValueError(f"user formula name {formula.name!r} is taken by a fixed formula; choose another")
        return formula
    if isinstance(formula, str):
        if formula not in FORMULAS:
            raise KeyError(f"unknown formula {formula!r}; choose from {sorted(FORMULAS)} or pass "
                           f"Formula(name, fn, n_vars, domain)")
        fn, d, description, source = FORMULAS[formula]
        return Formula(formula, fn, d, DOMAINS[formula], description, source)
    raise TypeError(f"a formula is a name from FORMULAS or a Formula(name, fn, n_vars, domain), got "
                    f"{type(formula).__name__}")


def resolve_formulas(formula: FormulaLike | Sequence[FormulaLike] | None) -> list[Formula]:
    """``evaluate``'s ``formula`` option as a list of ``Formula`` (None: all of ``FORMULAS``); names unique."""
    items = list(FORMULAS) if formula is None else [formula] if isinstance(formula, (str, Formula)) else list(formula)
    out = [resolve_formula(f) for f in items]
    names = [f.name for f in out]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"formula names must be unique, {dupes} repeat")
    return out


class FormulaData(NamedTuple):
    """Train and test points of one formula: inputs in [-1, 1]^d, standardised targets ``(N, 1)``."""

    name: str
    x_train: torch.Tensor
    y_train: torch.Tensor
    x_test: torch.Tensor
    y_test: torch.Tensor


def _ranges(formula: Formula) -> np.ndarray:
    dom = formula.domain
    return np.array(dom * formula.n_vars if len(dom) == 1 else dom, dtype=np.float64)  # (d, 2)


@functools.lru_cache(maxsize=64)
def _make(formula: Formula, n_train: int, n_test: int, seed: int) -> FormulaData:
    name, d = formula.name, formula.n_vars
    rng = np.random.default_rng(seed)
    u = rng.uniform(-1.0, 1.0, size=(n_train + n_test, d))
    lo, hi = _ranges(formula).T
    y = np.asarray(formula.fn(lo + (u + 1) / 2 * (hi - lo)), dtype=np.float64)
    if y.shape not in ((n_train + n_test,), (n_train + n_test, 1)):
        raise ValueError(f"{NAME}: formula {name!r} returned shape {y.shape} for {n_train + n_test} points; "
                         f"fn must map (N, {d}) -> (N,)")
    y = y.reshape(-1)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{NAME}: formula {name!r} produced non-finite values on its domain {formula.domain}")
    if y[:n_train].std() == 0:
        raise ValueError(f"{NAME}: formula {name!r} is constant on its domain; nothing to regress")
    mean, std = y[:n_train].mean(), y[:n_train].std()
    y = (y - mean) / std
    t = lambda a: torch.tensor(a, dtype=torch.float32)  # noqa: E731
    return FormulaData(name, t(u[:n_train]), t(y[:n_train, None]), t(u[n_train:]), t(y[n_train:, None]))


def make_data(name: FormulaLike, n_train: int = N_TRAIN, n_test: int = N_TEST, seed: int = DATA_SEED) -> FormulaData:
    """The fixed train/test points of formula ``name`` (a name of ``FORMULAS`` or a ``Formula``; see the
    module docstring).

    >>> data = make_data("xy")
    >>> tuple(data.x_train.shape), tuple(data.y_test.shape)
    ((1000, 2), (1000, 1))
    """
    data = _make(resolve_formula(name), n_train, n_test, seed)
    return FormulaData(*(t.clone() if isinstance(t, torch.Tensor) else t for t in data))


def example_input(batch: int = 4) -> torch.Tensor:
    return _make(resolve_formula(EXAMPLE_FORMULA), N_TRAIN, N_TEST, DATA_SEED).x_train[:batch].clone()


def check_output(model: nn.Module, output: Any) -> None:
    """The forward contract: a tensor of shape (B, 1)."""
    if not isinstance(output, torch.Tensor) or output.ndim != 2 or output.shape[1] != 1:
        shape = tuple(output.shape) if isinstance(output, torch.Tensor) else type(output).__name__
        raise AssertionError(f"{NAME}: output is {shape}, expected a tensor of shape (B, 1)")


@torch.no_grad()
def relative_rmse(model: nn.Module, data: FormulaData) -> float:
    """``RMSE / std(y)`` on the test points."""
    model.eval()
    x, y = to_model_device(model, data.x_test, data.y_test)
    err = (model(x) - y).pow(2).mean().sqrt()
    return float(err / y.std(unbiased=False))


def train(model: nn.Module, data: FormulaData, *, steps: int | None = DEFAULT_STEPS, lr: float = DEFAULT_LR,
          seed: int = 0, batch_size: int | None = None, budget_s: float | None = None,
          progress: str | None = None, num_threads: int | None = TRAIN_THREADS) -> dict[str, float]:
    """Fit ``model`` to ``data`` with MSE (or the model's own ``loss(output, target)``, e.g. MSE plus an
    auxiliary loss): Adam, cosine decay over ``steps``, full batch unless ``batch_size``. Returns loss
    and timing (``seconds_per_step`` is the wall time per step).

    ``num_threads``: torch intra-op threads while training (default 1: these networks are so small
    that more threads only add overhead, and on a busy machine contend badly); None leaves it as is.
    """
    g = torch.Generator().manual_seed(seed)
    loss_fn = getattr(model, "loss", nn.functional.mse_loss)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps or 10_000)
    x, y = to_model_device(model, data.x_train, data.y_train)
    model.train()

    def step(i: int) -> float:
        if batch_size is None or batch_size >= len(x):
            xb, yb = x, y
        else:
            idx = torch.randint(len(x), (batch_size,), generator=g)
            xb, yb = x[idx], y[idx]
        loss = loss_fn(model(xb), yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        return loss.item()

    with torch_threads(num_threads) if num_threads else contextlib.nullcontext():
        out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    model.eval()
    return out


class FormulaMLP(nn.Sequential):
    """The MLP baseline: ``[Linear -> act] x depth -> Linear(., 1)`` (KANbeFair's MLP, GELU)."""

    def __init__(self, in_features: int = 2, hidden: int = 32, depth: int = 2,
                 act_layer: Callable[[], nn.Module] = nn.GELU):
        layers: list[nn.Module] = []
        d = in_features
        for _ in range(depth):
            layers += [nn.Linear(d, hidden), act_layer()]
            d = hidden
        super().__init__(*layers, nn.Linear(d, 1))
        self.in_features = in_features


def formula_mlp(in_features: int = 2, hidden: int = 32, depth: int = 2) -> nn.Module:
    """``[Linear -> GELU] x depth -> Linear(., 1)`` (KANbeFair's MLP), ``depth`` 2."""
    return FormulaMLP(in_features, hidden, depth)


def formula_kan(in_features: int = 2, hidden: int = 5, grid_size: int = 5, spline_order: int = 3) -> nn.Module:
    """``KAN([in_features, hidden, 1])`` with the paper's B-spline layers."""
    model = KAN([in_features, hidden, 1], grid_size=grid_size, spline_order=spline_order)
    model.in_features = in_features
    return model


BASELINES: dict[str, Callable[[int, int], nn.Module]] = {"mlp": formula_mlp, "kan": formula_kan}



def build_baseline(name: str, *, params: int | None = None, data: FormulaData | None = None, seed: int = 0,
                   in_features: int | None = None) -> nn.Module:
    """Baseline ``name`` for ``data``'s inputs (or ``in_features``), its hidden width matched to ``params``."""
    if in_features is None:
        if data is None:
            raise ValueError(f"{NAME}.build_baseline needs data= or in_features=")
        in_features = int(data.x_train.shape[1])
    if name not in BASELINES:
        raise ValueError(f"unknown {NAME} baseline {name!r}; choose from {sorted(BASELINES)}")
    if params is None:
        raise ValueError(f"{NAME}.build_baseline sizes {name!r} to the model it is compared with: pass params=")
    width = match_width(lambda w: BASELINES[name](in_features, w), params)
    torch.manual_seed(seed)
    return BASELINES[name](in_features, width)


def instantiate(model: nn.Module, in_features: int, seed: int = 0,
                rebuild: Callable[..., nn.Module] | None = None) -> nn.Module | None:
    """A fresh, seeded build of ``model``'s architecture for ``in_features`` inputs (see the module
    docstring) through ``rebuild`` (``zoo.evaluate`` passes one for zoo models); without it, a copy of
    the module when it takes that many inputs, else None."""
    if rebuild is not None:
        torch.manual_seed(seed)
        return rebuild(in_features=in_features).to(model_device(model))
    return copy.deepcopy(model) if getattr(model, "in_features", None) == in_features else None


def fit(model: nn.Module, data: FormulaData, *, train_model: bool = True, progress: str | None = None,
        **train_kw: Any) -> dict[str, float]:
    """One model's part of ``evaluate`` on one formula: ``params``, the figures of ``train`` (seeded with
    ``train_kw["seed"]``) unless ``train_model`` is False, and ``rel_rmse``."""
    m: dict[str, float] = {"params": float(count_params(model))}
    if train_model:
        torch.manual_seed(train_kw.get("seed", 0))
        m.update(train(model, data, progress=progress, **train_kw))
    m["rel_rmse"] = relative_rmse(model, data)
    return m


def summarise(per: dict[str, dict[str, float]]) -> dict[str, float]:
    """``evaluate``'s metrics from per-formula ``fit`` rows: mean and geometric mean of ``rel_rmse``, mean
    ``params``, timing, and each formula's ``rel_rmse:NAME`` and ``params:NAME``."""
    out: dict[str, float] = {}
    errs = [m["rel_rmse"] for m in per.values()]
    out["rel_rmse_mean"] = sum(errs) / len(errs)
    out["rel_rmse_gmean"] = math.exp(sum(math.log(max(e, 1e-12)) for e in errs) / len(errs))
    out["params_mean"] = sum(m["params"] for m in per.values()) / len(per)
    if all("seconds_per_step" in m for m in per.values()):
        out["seconds_per_step"] = sum(m["seconds_per_step"] for m in per.values()) / len(per)
        out["train_seconds"] = sum(m["train_seconds"] for m in per.values())
    for name, m in per.items():
        out[f"rel_rmse:{name}"] = m["rel_rmse"]
        out[f"params:{name}"] = m["params"]
    return out


def fit_formulas(build: Callable[[int], nn.Module], formulas: FormulaLike | Sequence[FormulaLike] | None = None, *,
                 baseline: str | None = None, seed: int = 0, **train_kw: Any) -> dict[str, float]:
    """One row of ``evaluate``'s table for a claim: per formula, ``build(d)`` (seeded with ``seed``) or, with
    ``baseline``, that task baseline at ``build(d)``'s parameter count, trained and scored; ``summarise``d.

    ``evaluate(model)`` reports the model and every baseline at once; this runs one of them, with the
    same seeds, so a claim can tabulate each as its own row.

    >>> mlp = fit_formulas(formula_mlp, ["xy"], steps=5)
    >>> kan = fit_formulas(formula_mlp, ["xy"], baseline="kan", steps=5)  # a KAN of the MLP's size
    >>> abs(kan["params:xy"] - mlp["params:xy"]) / mlp["params:xy"] < 0.1
    True
    """
    per: dict[str, dict[str, float]] = {}
    for f in resolve_formulas(formulas):
        data = make_data(f)
        torch.manual_seed(seed)
        model = build(f.n_vars)
        if baseline is not None:
            model = build_baseline(baseline, params=count_params(model), data=data, seed=seed)
        per[f.name] = fit(model, data, seed=seed, **train_kw)
    return summarise(per)


def describe(*, formula: FormulaLike | Sequence[FormulaLike] | None = None, steps: int | None = None,
             budget_s: float | None = None, lr: float = DEFAULT_LR, batch_size: int | None = None) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options (its defaults without any). ``formula`` takes names
    of ``FORMULAS`` and your own ``Formula(name, fn, n_vars, domain)`` objects, listed under
    ``user_formulas`` (dimension, domain, description: the callable itself is not data).

    >>> describe()["optimizer"], describe(formula="xy")["formulas"]
    ('Adam', ['xy'])
    >>> describe(formula=Formula("x3", lambda v: v[:, 0] ** 3, 1))["user_formulas"]["x3"]["domain"]
    [[-1.0, 1.0]]
    """
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    formulas = resolve_formulas(formula)
    user = {f.name: f.describe() for f in formulas if f.name not in FORMULAS}
    return {"formulas": [f.name for f in formulas], **({"user_formulas": user} if user else {}),
            "custom_formula": "evaluate(model, formula=Formula(name, fn, n_vars, domain)): fn maps the variables in "
                              "their domain, an (N, n_vars) array, to (N,) values",
            "n_train": N_TRAIN, "n_test": N_TEST, "data_seed": DATA_SEED,
            "inputs": "uniform on each variable's DOMAINS range (a Formula's domain), rescaled to [-1, 1]",
            "targets": "standardised with the training split's mean and std",
            "steps": steps, "budget_s": budget_s, "optimizer": "Adam", "lr": lr, "schedule": "cosine decay over steps",
            "batch_size": "full batch" if batch_size is None else batch_size, "loss": "MSE",
            "metrics": ["rel_rmse:<formula> = RMSE / std(y) on the test points", "rel_rmse_mean", "rel_rmse_gmean"],
            "baselines": {b: (fn.__doc__ or fn.__name__).strip().splitlines()[0] for b, fn in BASELINES.items()},
            "baseline_size": "hidden width by match_width to the model's count_params, per formula",
            "torch_threads": TRAIN_THREADS}


def evaluate(model: nn.Module, *, formula: FormulaLike | Sequence[FormulaLike] | None = None, steps: int | None = None,
             budget_s: float | None = None, seed: int = 0, baselines: list[str] | None = None,
             train_model: bool | None = None, lr: float = DEFAULT_LR, batch_size: int | None = None,
             progress: bool = False, rebuild: Callable[..., nn.Module] | None = None) -> Result:
    """Train and test ``model`` on each formula next to the ``mlp`` and ``kan`` baselines.

    Args:
        formula: one name, a list, or None for all of ``FORMULAS``; a ``Formula(name, fn, n_vars, domain)``
            of your own wherever a name goes (see ``Formula``).
        steps, budget_s: training length per model and formula (default ``DEFAULT_STEPS`` steps).
        baselines: subset of ``["mlp", "kan"]`` (default both), each at the model's parameter count.
        train_model: default True unless the model carries pretrained weights (then it is scored as
            is, on the formulas that match its ``in_features``).
        progress: show training progress bars (the CLI does).

    >>> r = evaluate(zoo.create("bspline_mlp"), formula="xy", steps=200)  # doctest: +SKIP
    >>> print(r.table("bspline_mlp"))                                      # doctest: +SKIP
    >>> mine = Formula("sin_xy", lambda v: np.sin(v[:, 0] * v[:, 1]), n_vars=2, domain=((0.0, 3.0),))
    >>> r = zoo.evaluate("bspline_mlp", formula=mine, steps=200)          # doctest: +SKIP
    """
    t0 = time.perf_counter()
    formulas = resolve_formulas(formula)
    baselines = list(BASELINES) if baselines is None else list(baselines)
    prov = getattr(model, "zoo", None)
    if train_model is None:
        train_model = not getattr(prov, "pretrained", False)
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    kw = {"steps": steps, "budget_s": budget_s, "seed": seed, "lr": lr, "batch_size": batch_size}
    per: dict[str, dict[str, float]] = {}
    per_base: dict[str, dict[str, dict[str, float]]] = {b: {} for b in baselines}
    for f in formulas:
        name, d = f.name, f.n_vars
        data = make_data(f)
        if train_model:
            m = instantiate(model, d, seed, rebuild)
        else:  # pretrained: scored as is, on the formulas of its width
            width = getattr(model, "in_features", None) or dict(getattr(prov, "model_args", {})).get("in_features")
            m = model if width == d else None
        if m is None:
            log.warning("%s: skipping %s (d=%d): the model cannot be built for that many inputs", NAME, name, d)
            continue
        per[name] = fit(m, data, train_model=train_model, progress=f"train model on {name}" if progress else None, **kw)
        for b in baselines:
            base = build_baseline(b, params=int(per[name]["params"]), in_features=d, seed=seed).to(model_device(m))
            per_base[b][name] = fit(base, data, progress=f"train {b} on {name}" if progress else None, **kw)
    if not per:
        raise ValueError(f"{NAME}: no formula could be evaluated; give the model zoo provenance or in_features")
    return Result(task=NAME, metrics=summarise(per), baselines={b: summarise(v) for b, v in per_base.items()},
                  n=N_TEST * len(per), seconds=time.perf_counter() - t0,
                  config={**describe(formula=[f for f in formulas if f.name in per], steps=steps, budget_s=budget_s,
                                     lr=lr, batch_size=batch_size),
                          "seed": seed, "trained": train_model})
