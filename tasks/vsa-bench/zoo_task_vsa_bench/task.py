"""vsa_bench: vector-symbolic architectures on seeded synthetic problems. Nothing is trained.

Modes (``evaluate(model, mode=...)``; the default follows the model's ``vsa_kind``, see ``contract``):

- ``factorize``: ``n`` composites ``s = x_1 * ... * x_F`` of F random bipolar codebooks of M vectors of dimension
  D, optionally corrupted (``flip``: sign-flip probability per entry, ``noise``: Gaussian std); the model's
  ``factorize(s, codebooks, iters)`` returns indices and the sweeps it used. Metrics: ``accuracy`` (all F factors
  right), ``factor_accuracy`` (per factor), ``iterations`` (mean sweeps, non-converged problems count ``iters``),
  ``iterations_solved`` (mean over solved problems), ``converged`` (fraction that reached a fixed point before
  ``iters``), ``max_iters``. Baseline: ``classic_resonator``.
- ``membership`` / ``intersection``: ``n`` pairs of sets of ``set_size`` symbols of an alphabet of ``alphabet``
  (overlap uniform in 0..set_size), bundled by the model at each dimension in ``D`` (one int or a sweep).
  membership: ``membership_error`` (members called absent plus non-members called present, over both),
  ``false_negative``, ``false_positive``; intersection: ``intersection_mae`` (mean |estimate - |A & B||) and
  ``intersection_rmse``. With a sweep each metric gets a ``_d{D}`` suffix. Baseline: ``map_i_bundle``.
- ``invariance``: ``n`` random smooth 1D functions on [0, 1] sampled at N=50 and N=500 points, uniform or skewed
  (t = u^2); the model's ``encode`` at its own D. Metrics: cosine (real part of the normalised complex inner
  product) between codes of the same function: ``cos_density`` (50 vs 500 uniform), ``cos_distribution`` (500
  uniform vs 500 skewed), ``cos_both`` (50 skewed vs 500 uniform); ``cos_different`` (two different functions,
  500 uniform: the floor); ``mask_cos`` (50 points vs the same padded to 500 with masked junk: 1 when the mask is
  honoured); and when the model has ``decode``: ``decode_rel_l2`` (from 500 uniform) and
  ``decode_rel_l2_skewed50`` on 100 query points. Baseline: ``fpe_sum`` at the model's D.

Everything is fixed by ``seed``; the baselines see the same problems.

>>> from zoo_task_vsa_bench.baselines import ClassicResonator
>>> r = evaluate(ClassicResonator(), mode="factorize", D=512, M=8, n=20, seed=0, baselines=[])
>>> r.metrics["accuracy"]
1.0
"""
from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result

from . import data as D_
from . import plots
from .baselines import BASELINES, build_baseline  # noqa: F401 - the Task protocol's names
from .contract import kind_of

NAME = "vsa_bench"
MODES = ("factorize", "membership", "intersection", "invariance")
KIND_OF_MODE = {"factorize": "factorize", "membership": "memory", "intersection": "memory", "invariance": "encode"}
DEFAULT_MODE = {"factorize": "factorize", "memory": "membership", "encode": "invariance"}
BASELINE_OF_KIND = {"factorize": "classic_resonator", "memory": "map_i_bundle", "encode": "fpe_sum"}
DEFAULT_DIM = {"factorize": 1024, "membership": (64, 128, 256, 512, 1024, 2048),
               "intersection": (64, 128, 256, 512, 1024, 2048)}
DEFAULT_N = {"factorize": 200, "membership": 200, "intersection": 200, "invariance": 64}
DEFAULT_ITERS = 200
N_POINTS = (50, 500)
N_QUERY = 100


def _cos(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Re<a, b> / (|a| |b|) per row, for complex or real codes."""
    num = (a * b.conj()).sum(dim=1).real if a.is_complex() else (a * b).sum(dim=1)
    return num / (a.abs().pow(2).sum(1).sqrt() * b.abs().pow(2).sum(1).sqrt()).clamp_min(1e-12)


def _factorize(model: nn.Module, *, dim: int, n: int, factors: int, codebook_size: int, iters: int, flip: float,
               noise: float, seed: int) -> tuple[dict[str, float], np.ndarray]:
    p = D_.factorization_problems(n, factors, codebook_size, dim, seed=seed, flip=flip, noise=noise)
    with torch.no_grad():
        out = model.factorize(p.composite, list(p.codebooks), iters)
    if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError(f"{NAME}: factorize must return (indices (B, F), iterations (B,)), got {type(out).__name__}; "
                        "see zoo_task_vsa_bench.contract")
    idx, used = out
    right = idx.cpu() == p.indices
    solved = right.all(dim=1)
    used = used.cpu().double()
    metrics = {"accuracy": float(solved.double().mean()), "factor_accuracy": float(right.double().mean()),
               "iterations": float(used.mean()),
               "iterations_solved": float(used[solved].mean()) if bool(solved.any()) else float("nan"),
               "converged": float((used < iters).double().mean()), "max_iters": float(iters)}
    return metrics, used.numpy()


def _memory(model: nn.Module, mode: str, *, dims: Sequence[int], n: int, set_size: int, alphabet: int, probes: int,
            seed: int) -> dict[str, float]:
    sets = D_.symbol_sets(n, set_size, alphabet, seed=seed, probes=probes)
    out: dict[str, float] = {}
    for dim in dims:
        sfx = f"_d{dim}" if len(dims) > 1 else ""
        with torch.no_grad():
            atoms = model.atoms(alphabet, int(dim), seed)
            mem_a = model.bundle(atoms, sets.sets_a)
            if mode == "membership":
                fn = (~model.contains(atoms, mem_a, sets.members).bool()).double().mean()
                fp = model.contains(atoms, mem_a, sets.others).bool().double().mean()
                out.update({f"membership_error{sfx}": float((fn + fp) / 2), f"false_negative{sfx}": float(fn),
                            f"false_positive{sfx}": float(fp)})
            else:
                est = model.intersection(atoms, mem_a, model.bundle(atoms, sets.sets_b)).double().cpu()
                err = est - sets.overlap.double()
                out.update({f"intersection_mae{sfx}": float(err.abs().mean()),
                            f"intersection_rmse{sfx}": float(err.pow(2).mean().sqrt())})
    return out


def _tensors(coef: np.ndarray, n_points: int, sampling: str, seed: int) -> tuple[torch.Tensor, ...]:
    t = D_.sample_points(coef.shape[0], n_points, seed=seed, sampling=sampling)
    y = D_.function_values(coef, t)
    f = lambda a: torch.as_tensor(a, dtype=torch.float32)[..., None]  # noqa: E731
    return f(t), f(y), torch.ones(t.shape, dtype=torch.bool)


def invariance_data(n: int, seed: int) -> dict[str, Any]:
    """The samples of the invariance mode: ``{setting: (x, y, mask)}`` for the four sampling settings and the
    padded one, the function coefficients and the query grid with its true values."""
    coef = D_.random_functions(n, seed=seed)
    lo, hi = N_POINTS
    sets = {"uniform50": _tensors(coef, lo, "uniform", seed + 1), "uniform500": _tensors(coef, hi, "uniform", seed + 2),
            "skewed500": _tensors(coef, hi, "skewed", seed + 3), "skewed50": _tensors(coef, lo, "skewed", seed + 4)}
    x, y, _ = sets["uniform50"]
    rng = np.random.default_rng(seed + 5)  # junk in the padding: anything, since the mask must hide it
    pad = lambda a: torch.cat([a, torch.as_tensor(rng.random((n, hi - lo, 1)) * 3 - 1, dtype=torch.float32)], 1)  # noqa: E731
    mask = torch.zeros(n, hi, dtype=torch.bool)
    mask[:, :lo] = True
    sets["padded50"] = (pad(x), pad(y), mask)
    xq = np.broadcast_to(np.linspace(0, 1, N_QUERY), (n, N_QUERY))
    return {"samples": sets, "coef": coef, "xq": torch.as_tensor(xq.copy(), dtype=torch.float32)[..., None],
            "yq": torch.as_tensor(D_.function_values(coef, xq), dtype=torch.float32)[..., None]}


def _invariance(model: nn.Module, *, n: int, seed: int, dim: int | None) -> tuple[dict[str, float], int]:
    d = invariance_data(n, seed)
    with torch.no_grad():
        z = {k: model.encode(*v) for k, v in d["samples"].items()}
    ref = z["uniform500"]
    if not ref.is_complex() or ref.ndim != 2 or ref.shape[0] != n:
        raise TypeError(f"{NAME}: encode must return (B, D) complex codes, got {ref.dtype} {tuple(ref.shape)}")
    if dim is not None and ref.shape[1] != dim:
        raise ValueError(f"{NAME}: the model encodes to D={ref.shape[1]}, the run asks D={dim}; build it with dim={dim} "
                         "(zoo.create(name, dim=...)) or leave D unset")
    m = {"cos_density": float(_cos(z["uniform50"], ref).mean()), "cos_distribution": float(_cos(z["skewed500"], ref).mean()),
         "cos_both": float(_cos(z["skewed50"], ref).mean()), "cos_different": float(_cos(ref, ref.roll(1, 0)).mean()),
         "mask_cos": float(_cos(z["padded50"], z["uniform50"]).mean())}
    if callable(getattr(model, "decode", None)):
        def rel(code: torch.Tensor) -> float:
            with torch.no_grad():
                pred = model.decode(code, d["xq"]).float()
            return float(((pred - d["yq"]).norm(dim=(1, 2)) / d["yq"].norm(dim=(1, 2))).mean())
        m.update(decode_rel_l2=rel(ref), decode_rel_l2_skewed50=rel(z["skewed50"]))
    return m, int(ref.shape[1])


def _dims(mode: str, D: int | Sequence[int] | None) -> list[int]:
    dims = DEFAULT_DIM[mode] if D is None else D
    dims = [int(dims)] if isinstance(dims, (int, np.integer)) else [int(v) for v in dims]
    if not dims or min(dims) < 1:
        raise ValueError(f"{NAME}: D must be a positive dimension or a list of them, got {D!r}")
    return dims


def evaluate(model: nn.Module, *, mode: str | None = None, D: int | Sequence[int] | None = None, seed: int = 0,
             n: int | None = None, F: int = 3, M: int = 16, iters: int = DEFAULT_ITERS, flip: float = 0.0,
             noise: float = 0.0, set_size: int = 32, alphabet: int = 1000, probes: int = 16,
             baselines: Sequence[str] | None = None, out_dir: str | None = None, steps: int | None = None,
             budget_s: float | None = None, progress: bool = False, rebuild: Callable[..., nn.Module] | None = None) -> Result:
    """Score ``model`` (and the baseline of its kind, on the same problems) in ``mode``; see the module docstring.

    ``D``: dimension (factorize: of the codebooks, default 1024; membership/intersection: one or a sweep, default
    64..2048; invariance: only checked against the model's own). ``steps``/``budget_s`` are accepted for the Task
    protocol and unused (nothing is trained). ``out_dir`` receives PNGs: iteration histograms (factorize),
    error-vs-D curves with the model's ``reference_curves(mode, dims, set_size, alphabet)`` when it has one
    (membership/intersection).
    """
    del steps, budget_s, progress, rebuild  # nothing to train or rebuild
    kind = kind_of(model)
    mode = DEFAULT_MODE[kind] if mode is None else mode
    if mode not in MODES:
        raise ValueError(f"{NAME}: mode={mode!r}; choose from {MODES}")
    if KIND_OF_MODE[mode] != kind:
        raise ValueError(f"{NAME}: mode {mode!r} needs a {KIND_OF_MODE[mode]!r} model, this one is {kind!r}; "
                         f"run mode={DEFAULT_MODE[kind]!r}")
    names = [BASELINE_OF_KIND[kind]] if baselines is None else list(baselines)
    for b in names:
        if b not in BASELINES or BASELINE_OF_KIND[kind] != b:
            raise ValueError(f"{NAME}: baseline {b!r} does not run in mode {mode!r}; it has {BASELINE_OF_KIND[kind]!r}")
    n = DEFAULT_N[mode] if n is None else int(n)
    t0 = time.perf_counter()
    config: dict[str, Any] = {"mode": mode, "seed": seed, "n": n}
    artifacts: dict[str, str] = {}
    if mode == "factorize":
        dim = _dims(mode, D)
        if len(dim) != 1:
            raise ValueError(f"{NAME}: factorize runs at one D, got {D!r}")
        kw = dict(dim=dim[0], n=n, factors=F, codebook_size=M, iters=iters, flip=flip, noise=noise, seed=seed)
        config.update({"D": dim[0], "F": F, "M": M, "iters": iters, "flip": flip, "noise": noise})
        metrics, used = _factorize(model, **kw)
        results = {b: _factorize(build_baseline(b), **kw) for b in names}
        base = {b: r[0] for b, r in results.items()}
        if out_dir is not None:
            artifacts["iterations"] = plots.histogram(
                Path(out_dir) / "factorize_iterations.png", {"model": used, **{b: r[1] for b, r in results.items()}},
                xlabel=f"sweeps to a fixed point (cap {iters})", title=f"F={F}, M={M}, D={dim[0]}")
    elif mode in ("membership", "intersection"):
        dims = _dims(mode, D)
        kw = dict(dims=dims, n=n, set_size=set_size, alphabet=alphabet, probes=probes, seed=seed)
        config.update({"D": dims, "set_size": set_size, "alphabet": alphabet, "probes": probes})
        metrics = _memory(model, mode, **kw)
        base = {b: _memory(build_baseline(b), mode, **kw) for b in names}
        if out_dir is not None:
            artifacts[mode] = _plot_memory(Path(out_dir), mode, model, dims, metrics, base, set_size, alphabet)
    else:
        config.update({"n_points": N_POINTS, "samplings": D_.SAMPLINGS, "n_query": N_QUERY})
        dim = None if D is None else _dims("factorize", D)[0]
        metrics, width = _invariance(model, n=n, seed=seed, dim=dim)
        config["D"] = width
        base = {b: _invariance(build_baseline(b, dim=width), n=n, seed=seed, dim=None)[0] for b in names}
    return Result(task=NAME, metrics=metrics, baselines=base, n=n, seconds=time.perf_counter() - t0, config=config,
                  artifacts=artifacts)


def _plot_memory(out: Path, mode: str, model: nn.Module, dims: list[int], metrics: dict[str, float],
                 base: dict[str, dict[str, float]], set_size: int, alphabet: int) -> str:
    key = "membership_error" if mode == "membership" else "intersection_mae"
    col = lambda m: [m[f"{key}_d{d}" if len(dims) > 1 else key] for d in dims]  # noqa: E731
    series = {"model": col(metrics), **{b: col(m) for b, m in base.items()}}
    ref = getattr(model, "reference_curves", None)
    extra = ref(mode, dims, set_size, alphabet) if callable(ref) else {}
    series.update(extra)
    return plots.curves(out / f"{mode}_vs_dim.png", dims, series, xlabel="dimension D", ylabel=key,
                        title=f"{mode}: |S|={set_size}, alphabet {alphabet}", dashed=list(extra))


def example_input() -> dict[str, Any]:
    """One small batch for every kind: a factorisation problem, two set pairs with probes, and sampled functions."""
    p = D_.factorization_problems(2, 3, 4, 64, seed=0)
    sets = D_.symbol_sets(2, 5, 40, seed=0, probes=6)
    x, y, mask = _tensors(D_.random_functions(2, seed=0), 10, "uniform", 0)
    return {"s": p.composite, "codebooks": p.codebooks, "iters": 20, "alphabet": 40, "dim": 64, "seed": 0,
            "sets": sets.sets_a, "sets_b": sets.sets_b, "items": torch.cat([sets.members[:, :3], sets.others[:, :3]], 1),
            "x": x, "y": y, "mask": mask}


def check_output(model: nn.Module, output: Any) -> None:
    """The forward contract of the model's kind on :func:`example_input` (B=2)."""
    kind = kind_of(model)
    if kind == "factorize":
        ok = isinstance(output, tuple) and len(output) == 2
        idx, used = output if ok else (None, None)
        if not ok or idx.shape != (2, 3) or idx.dtype != torch.long or used.shape != (2,) or used.dtype != torch.long:
            raise AssertionError(f"{NAME}: factorize must return (indices (2, 3) long, iterations (2,) long), got {output!r}")
        if int(idx.min()) < 0 or int(idx.max()) >= 4 or int(used.min()) < 1 or int(used.max()) > 20:
            raise AssertionError(f"{NAME}: indices must lie in [0, M=4) and iterations in [1, iters=20]: {output!r}")
    elif kind == "memory":
        ok = isinstance(output, tuple) and len(output) == 2
        if not ok or output[0].shape != (2, 6) or output[0].dtype != torch.bool or output[1].shape != (2,) \
                or not torch.isfinite(output[1].float()).all():
            raise AssertionError(f"{NAME}: a memory model's forward returns (contains (2, 6) bool, intersection (2,) "
                                 f"finite), got {output!r}")
    else:
        if not isinstance(output, torch.Tensor) or not output.is_complex() or output.ndim != 2 or output.shape[0] != 2 \
                or not torch.isfinite(output.abs()).all():
            raise AssertionError(f"{NAME}: encode must return finite (2, D) complex codes, got "
                                 f"{getattr(output, 'dtype', type(output))} {tuple(getattr(output, 'shape', ()))}")


def describe(*, mode: str | None = None, **options: Any) -> dict[str, Any]:
    """The settings of ``mode`` (every mode when None) as :func:`evaluate` runs them with ``options``.

    >>> describe(mode="factorize", M=64)["factorize"]["M"]
    64
    """
    params = inspect.signature(evaluate).parameters
    known = {k: p.default for k, p in params.items() if k not in ("model", "mode", "out_dir", "steps", "budget_s",
                                                                    "progress", "rebuild", "baselines", "seed")}
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)}; choose from {', '.join(known)}")
    opt = {**known, **options}
    out: dict[str, Any] = {}
    for m in MODES if mode is None else (mode,):
        n = DEFAULT_N[m] if opt["n"] is None else opt["n"]
        if m == "factorize":
            out[m] = {"D": DEFAULT_DIM[m] if opt["D"] is None else opt["D"], "F": opt["F"], "M": opt["M"], "n": n,
                      "iters": opt["iters"], "flip": opt["flip"], "noise": opt["noise"],
                      "codebooks": "iid uniform +-1", "baseline": BASELINE_OF_KIND["factorize"],
                      "iterations": "sweeps until the model's state is a fixed point, the confirming sweep included"}
        elif m in ("membership", "intersection"):
            out[m] = {"D": list(DEFAULT_DIM[m] if opt["D"] is None else _dims(m, opt["D"])), "set_size": opt["set_size"],
                      "alphabet": opt["alphabet"], "n": n, "probes": opt["probes"],
                      "overlap": "uniform in 0..set_size", "baseline": BASELINE_OF_KIND["memory"]}
        else:
            out[m] = {"n_functions": n, "n_points": N_POINTS, "samplings": {"uniform": "U(0, 1)", "skewed": "u^2, u ~ U(0, 1)"},
                      "functions": "4 harmonics, 1/k amplitudes, max |f| = 1", "n_query": N_QUERY,
                      "baseline": BASELINE_OF_KIND["encode"]}
    return out
