"""The claims harness: a paper's claim at small scale, measured over seeds, with a three-valued verdict.

A plugin states its claim as data: the **rows** to run (its model, the task's baselines, each with its
overrides), the **seeds**, the steps or time budget, and one or more **checks** (a metric, its direction,
the baseline it is compared with and a margin fixed before the run). The harness runs every row for every
seed (with a fixed number of torch threads, timing wall and CPU seconds), tabulates mean, standard
deviation and a 95% interval per row and metric, and decides each check from the interval of the
per-seed difference (paired by seed):

- **reproduced**: the whole interval clears the margin;
- **not reproduced**: the whole interval falls short of it;
- **inconclusive**: the interval straddles the margin (more seeds, or a larger effect, would decide).

A claim is reproduced when every check is, not reproduced when any check is not, else inconclusive.

    >>> from zoo.claims import Check, Claim, Row
    >>> def fit(*, seed, quick, steps, width):  # a row: (seed, quick, **args) -> {metric: value}
    ...     return {"acc": 0.9 + 0.01 * width / 64 + 0.001 * seed}
    >>> claim = Claim(plugin="demo", claim="wider is better", task=None, steps=10,
    ...               rows=[Row("wide", fit, {"width": 128}), Row("narrow", fit, {"width": 64})],
    ...               checks=[Check("wide", "acc", baseline="narrow", margin=0.005)], seeds=(0, 1, 2))
    >>> result = run_claim(claim)
    >>> result.verdict, round(result.rows["wide"]["acc"]["mean"], 3)
    ('reproduced', 0.921)
"""
from __future__ import annotations

import datetime as _dt
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

log = logging.getLogger(__name__)

__all__ = ["Row", "Check", "Claim", "ClaimResult", "run_claim", "reproduce", "interval95", "VERDICTS"]

VERDICTS = ("reproduced", "not reproduced", "inconclusive")

# two-sided 95% Student t quantiles t_{0.975, df} for df = 1..30 (beyond 30 the normal 1.96 is within 2%)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
         2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
         2.045, 2.042)

RowFn = Callable[..., Mapping[str, float]]


def interval95(values: Sequence[float]) -> tuple[float, float, float, float]:
    """``(mean, std, low, high)``: sample mean and standard deviation, and the 95% t-interval of the mean.

    One value has no interval (``low, high = -inf, inf``): a single seed decides nothing.

    >>> [round(x, 3) for x in interval95([1.0, 2.0, 3.0])]
    [2.0, 1.0, -0.484, 4.484]
    """
    n = len(values)
    if n == 0:
        raise ValueError("interval95 needs at least one value")
    mean = math.fsum(values) / n
    if n == 1:
        return mean, 0.0, -math.inf, math.inf
    std = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    t = _T975[n - 2] if n - 1 <= len(_T975) else 1.96
    half = t * std / math.sqrt(n)
    return mean, std, mean - half, mean + half


@dataclass(frozen=True)
class Row:
    """One row of the table: ``fn(seed=, quick=, [steps=], [budget_s=], **args)`` returns its metrics.

    ``fn`` is a callable or a ``"module:attr"`` string; ``quick_args`` replace ``args`` in a quick run.
    """

    label: str
    fn: RowFn | str
    args: Mapping[str, Any] = field(default_factory=dict)
    quick_args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """``row``'s ``metric`` beats ``baseline``'s by at least ``margin`` (paired over seeds).

    ``higher=True``: the check is ``row - baseline >= margin``; ``higher=False`` (an error, a loss):
    ``baseline - row >= margin``. A negative margin states "no worse than the baseline by more than
    |margin|". Without a baseline the row's value itself is compared with the margin
    (``row >= margin``, or ``row <= margin`` when lower is better).
    """

    row: str
    metric: str
    baseline: str | None = None
    margin: float = 0.0
    higher: bool = True

    def statement(self) -> str:
        if self.baseline is None:
            return f"{self.row} {self.metric} {'>=' if self.higher else '<='} {self.margin:g}"
        diff = f"{self.row} - {self.baseline}" if self.higher else f"{self.baseline} - {self.row}"
        return f"{self.metric}: {diff} >= {self.margin:g}"

    def values(self, per_seed: Mapping[str, Mapping[str, Sequence[float]]]) -> tuple[list[float], float]:
        """Per-seed values of the compared quantity and the threshold they must clear."""
        try:
            row = list(per_seed[self.row][self.metric])
            base = list(per_seed[self.baseline][self.metric]) if self.baseline is not None else None
        except KeyError as exc:
            raise KeyError(f"check {self.statement()!r}: no row/metric {exc} in the table "
                           f"(rows: {sorted(per_seed)})") from None
        if base is None:
            return (row, self.margin) if self.higher else ([-v for v in row], -self.margin)
        pairs = zip(row, base, strict=True)
        return [r - b if self.higher else b - r for r, b in pairs], self.margin


@dataclass(frozen=True)
class Claim:
    """A paper's claim as rows, seeds, a budget and checks, for ``run_claim`` (``zoo reproduce ID``).

    ``steps``/``budget_s`` (and their quick variants) are passed to every row function that takes
    them; ``settings`` are the plugin's own constants worth recording (never the task's defaults:
    those come from the task's ``describe()``).
    """

    plugin: str
    claim: str
    rows: Sequence[Row]
    checks: Sequence[Check]
    task: str | None = None
    seeds: Sequence[int] = (0, 1, 2)
    quick_seeds: Sequence[int] = (0,)
    steps: int | None = None
    quick_steps: int | None = None
    budget_s: float | None = None
    quick_budget_s: float | None = None
    threads: int | None = 1
    settings: Mapping[str, Any] = field(default_factory=dict)
    task_options: Mapping[str, Any] = field(default_factory=dict)  # passed to the task's describe()
    notes: str = ""  # what the verdict rests on, in words (the margin's reason, what is reported only)

    def __post_init__(self) -> None:
        labels = [r.label for r in self.rows]
        if len(set(labels)) != len(labels):
            raise ValueError(f"claim {self.plugin}: row labels repeat: {labels}")
        for c in self.checks:
            for name in (c.row, c.baseline):
                if name is not None and name not in labels:
                    raise ValueError(f"claim {self.plugin}: check {c.statement()!r} names row {name!r}, "
                                     f"not one of {labels}")
        if not self.seeds or not self.checks:
            raise ValueError(f"claim {self.plugin}: needs at least one seed and one check")


@dataclass
class ClaimResult:
    """What ``zoo.reproduce`` returns: per-row statistics, per-check intervals and the verdict."""

    plugin: str
    claim: str
    verdict: str
    rows: dict[str, dict[str, dict[str, Any]]]  # row -> metric -> {mean, std, ci95, n}
    checks: list[dict[str, Any]]
    seeds: list[int]
    settings: dict[str, Any] = field(default_factory=dict)
    per_seed: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    quick: bool = False
    notes: str = ""
    date: str = field(default_factory=lambda: _dt.date.today().isoformat())

    @property
    def passed(self) -> bool:
        """True only for a reproduced claim."""
        return self.verdict == "reproduced"

    @property
    def table(self) -> dict[str, dict[str, float]]:
        """Per-row means, one column per metric."""
        return {r: {m: s["mean"] for m, s in ms.items()} for r, ms in self.rows.items()}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_record(self) -> dict[str, Any]:
        """The registry.yaml entry: everything but the plugin id, numbers rounded to 6 significant digits."""
        return _rounded({k: v for k, v in self.to_dict().items() if k != "plugin"})

    def render(self) -> str:
        from .task import format_table

        def cell(s: Mapping[str, Any]) -> str:
            lo, hi = s["ci95"]
            return f"{s['mean']:.4g}" if not math.isfinite(lo) or hi == lo else f"{s['mean']:.4g} ±{(hi - lo) / 2:.2g}"
        table = format_table({r: {m: cell(s) for m, s in ms.items()} for r, ms in self.rows.items()})
        checks = "\n".join(f"  {c['verdict']:<15} {c['check']}: {c['mean']:+.4g} [{c['ci95'][0]:.4g}, {c['ci95'][1]:.4g}]"
                           for c in self.checks)
        quick = "  (quick run: a smoke test, not a measurement)" if self.quick else ""
        return (f"{self.plugin}: {self.claim}\n\nmean ±95% half-interval over seeds {self.seeds}\n{table}\n\n"
                f"checks (paired over seeds):\n{checks}\n\n{self.verdict.upper()}{quick}"
                + (f"\n{self.notes}" if self.notes else ""))


def _rounded(x: Any) -> Any:
    if isinstance(x, float):
        return float(f"{x:.6g}") if math.isfinite(x) else x
    if isinstance(x, dict):
        return {k: _rounded(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_rounded(v) for v in x]
    return x


def resolve(target: Any) -> Any:
    """``"module:attr"`` -> the object (anything else, e.g. a row's callable, is returned as is)."""
    from .registry import resolve_target

    return resolve_target(target) if isinstance(target, str) else target


def _call(fn: RowFn, seed: int, quick: bool, steps: int | None, budget_s: float | None,
          args: Mapping[str, Any]) -> dict[str, float]:
    import inspect

    params = inspect.signature(fn).parameters
    takes_all = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kw: dict[str, Any] = {"seed": seed, "quick": quick}
    if steps is not None:
        kw["steps"] = steps
    if budget_s is not None:
        kw["budget_s"] = budget_s
    kw = {k: v for k, v in kw.items() if takes_all or k in params}
    out = fn(**kw, **args)
    bad = {k: v for k, v in out.items() if not isinstance(v, (int, float)) or isinstance(v, bool)}
    if bad:
        raise TypeError(f"row function {getattr(fn, '__qualname__', fn)} returned non-numeric metrics {sorted(bad)}")
    return {k: float(v) for k, v in out.items()}


def summarise(values: Iterable[float]) -> dict[str, Any]:
    """``{"mean", "std", "ci95": [low, high], "n"}`` of the values (see ``interval95``)."""
    vals = list(values)
    mean, std, lo, hi = interval95(vals)
    return {"mean": mean, "std": std, "ci95": [lo, hi], "n": len(vals)}


def decide(check: Check, per_seed: Mapping[str, Mapping[str, Sequence[float]]]) -> dict[str, Any]:
    """One check's record: the compared quantity's mean and 95% interval, and its verdict."""
    vals, threshold = check.values(per_seed)
    mean, std, lo, hi = interval95(vals)
    verdict = "reproduced" if lo >= threshold else "not reproduced" if hi < threshold else "inconclusive"
    sign = 1.0 if (check.higher or check.baseline is not None) else -1.0  # report the metric itself, not -metric
    ci = sorted([sign * lo + 0.0, sign * hi + 0.0])
    return {"check": check.statement(), "mean": sign * mean + 0.0, "std": std, "ci95": ci, "n": len(vals),
            "margin": check.margin, "verdict": verdict}


def combine(verdicts: Iterable[str]) -> str:
    """All reproduced -> reproduced; any not reproduced -> not reproduced; else inconclusive."""
    vs = list(verdicts)
    if vs and all(v == "reproduced" for v in vs):
        return "reproduced"
    return "not reproduced" if "not reproduced" in vs else "inconclusive"


def task_settings(task: str | None, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The task's protocol settings from its ``describe(**options)`` (empty without a task or a describe)."""
    if task is None:
        return {}
    from . import registry

    spec = registry.task(task)
    if spec.describe is None:
        return {"task": task}
    return {"task": task, **resolve(spec.describe)(**dict(options or {}))}


def run_claim(claim: Claim, *, quick: bool = False, seeds: Sequence[int] | None = None,
              progress: bool = False) -> ClaimResult:
    """Run every row of ``claim`` for every seed and decide its verdict.

    ``quick=True`` uses the quick seeds, steps and arguments (a smoke run: its verdict is
    reported but means nothing). ``seeds`` overrides the claim's seeds. ``progress=True`` prints one
    line per row and seed on stderr (the CLI does unless ``--quiet``).
    """
    from .task import status, torch_threads

    seeds = list(seeds if seeds is not None else (claim.quick_seeds if quick else claim.seeds))
    steps = claim.quick_steps if quick and claim.quick_steps is not None else claim.steps
    budget = claim.quick_budget_s if quick and claim.quick_budget_s is not None else claim.budget_s
    per_seed: dict[str, dict[str, list[float]]] = {r.label: {} for r in claim.rows}
    timing = {r.label: [0.0, 0.0] for r in claim.rows}
    t0, c0 = time.perf_counter(), time.process_time()
    threads = torch_threads(claim.threads) if claim.threads else _nothing()
    done, total = 0, len(seeds) * len(claim.rows)
    with threads:
        for seed in seeds:
            for row in claim.rows:
                args = {**row.args, **(row.quick_args if quick else {})}
                w, c = time.perf_counter(), time.process_time()
                metrics = _call(resolve(row.fn), seed, quick, steps, budget, args)
                timing[row.label][0] += time.perf_counter() - w
                timing[row.label][1] += time.process_time() - c
                for k, v in metrics.items():
                    per_seed[row.label].setdefault(k, []).append(v)
                done += 1
                spent = time.perf_counter() - t0
                status(f"reproduce {claim.plugin}: [{done}/{total}] seed {seed}, {row.label}: "
                       f"{time.perf_counter() - w:.1f} s (about {spent / done * (total - done):.0f} s left)", force=progress)
    for label, metrics in per_seed.items():
        uneven = {k: len(v) for k, v in metrics.items() if len(v) != len(seeds)}
        if uneven:
            raise ValueError(f"row {label!r} returned metrics {sorted(uneven)} on some seeds only")
    rows = {label: {m: summarise(v) for m, v in metrics.items()} for label, metrics in per_seed.items()}
    checks = [decide(c, per_seed) for c in claim.checks]
    settings = {**task_settings(claim.task, claim.task_options), **dict(claim.settings), "steps": steps, "budget_s": budget,
                "torch_threads": claim.threads,
                "row_args": {r.label: {**r.args, **(r.quick_args if quick else {})} for r in claim.rows},
                "row_seconds": {k: {"wall": w, "cpu": c} for k, (w, c) in timing.items()}}
    return ClaimResult(plugin=claim.plugin, claim=claim.claim, verdict=combine(c["verdict"] for c in checks),
                       rows=rows, checks=checks, seeds=seeds, settings=settings, per_seed=per_seed,
                       seconds=time.perf_counter() - t0, cpu_seconds=time.process_time() - c0, quick=quick,
                       notes=claim.notes)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def reproduce(plugin_id: str, *, quick: bool = False, seeds: Sequence[int] | None = None,
              record: str | bool | None = None, progress: bool = False) -> ClaimResult:
    """Measure plugin ``plugin_id``'s paper claim; with ``record`` write it to a registry.yaml.

    ``record=True`` writes to ``./registry.yaml``, a path writes there; a quick run is never
    recorded. Raises ``ClaimNotFound`` for a plugin without a claim.

    >>> r = zoo.reproduce("gon", quick=True)   # doctest: +SKIP
    >>> print(r.render())                       # doctest: +SKIP
    """
    from . import registry

    spec = registry.claim(plugin_id)
    if spec.not_measured is not None:
        from .errors import ClaimNotFound

        raise ClaimNotFound(f"plugin {plugin_id} ships part of its method and measures no claim: {spec.not_measured}")
    target = resolve(spec.reproduce)
    if not isinstance(target, Claim):
        raise TypeError(f"{spec.reproduce} must be a zoo.claims.Claim, got {type(target).__name__}")
    path = None
    if record and not quick:
        from pathlib import Path

        from . import registry_file

        path = Path("registry.yaml" if record is True else record)
        registry_file.check_recordable(path, plugin_id)  # before the run, not after it
    result = run_claim(target, quick=quick, seeds=seeds, progress=progress)
    if path is not None:
        registry_file.record(path, plugin_id, "reproduction", result.to_record())
    return result
