"""``task_merge``: merge T = 8 fine-tuned variants of one pretrained network into one network.

The suite (``zoo_task_task_merge.suite``): a base MLP encoder (64 -> 256 -> 256, ReLU, ``nn.Linear`` layers ``fc1``,
``fc2``) pretrained on 8x8 digits (or Fashion-MNIST) with one frozen prototype head per task (``heads``, equal in every
state: ``model(x, task) -> logits``), and eight fine-tuned variants, one per label task on the same images (parity,
ge5, mod3, mod4, loops, prime, lt3, mod5), cached on disk; ``build_suite(seed, dataset, tasks)`` returns it.

Mode ``"merge"`` (the default). Model contract: the evaluated ``nn.Module`` has ``merge(suite, *, tasks=None,
few_shot=None) -> state_dict`` (it may also accept ``seed=`` and ``steps=``, passed when it does); ``few_shot`` is
None, or ``{task: (x, y)}`` with ``shots`` labelled examples per class of each task's training split (option
``shots``, drawn with ``suite.few_shot(task, shots, seed)``); unlabelled data is always at hand through
``suite.unlabeled``. The task loads the merged state into ``suite.architecture()`` and reports, on each task's test
split: ``acc/<task>``, ``avg_acc``, ``normalized_acc`` (accuracy / the task's own fine-tuned model's, averaged),
``stored_floats`` (``model.stored_floats(suite)`` when the model defines it, else one network's parameters) and
``merge_seconds``. A model with ``per_task_states(suite, tasks) -> [state]`` is scored task by task instead
(``individual``).

Negation (Ilharco et al. 2023, Sec. 3; for models with ``negate(suite, target, *, control) -> state_dict``, option
``negate=True`` by default for them): for each target task (option ``neg_targets``, all by default) the model
returns a network that should forget the target and keep the ``control`` task (the pretraining data, untransformed);
the protocol chooses its coefficient on validation so that control accuracy stays >= 95% of the base's. Reported:
``neg/target_acc`` (mean over targets), ``neg/target_drop`` (base - negated, on the target), ``neg/control_acc`` and
``neg/control_retention`` (negated / base, on the control). The ``task_arithmetic`` baseline negates too.

Baselines (``BASELINES``, ``zoo_task_task_merge.baselines``, also plain functions): ``weight_averaging``,
``task_arithmetic`` (one global lambda from {0, 0.05, ..., 1} on validation), ``ties`` (top 20%, elected sign,
disjoint mean, lambda from {0, 0.1, ..., 3} on validation), and the reference rows ``base`` and ``individual``.

Mode ``"stitching"``: delegated to ``zoo_task_task_merge.stitching.run(model, *, dataset, steps, seed, baselines,
out_dir, budget_s, rebuild, progress, **options) -> Result`` (a separate module, maintained with its plugins).
"""
from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from zoo.task import Result, status, torch_threads

from . import baselines as B
from . import suite as S

NAME = "task_merge"
MODES = ("merge", "stitching")
BASELINES = tuple(B.BASELINES)
build_suite = S.build_suite


def _tasks_option(tasks: Sequence[str] | str | None) -> list[str]:
    if isinstance(tasks, str):
        tasks = [t.strip() for t in tasks.split(",") if t.strip()]
    return S.check_tasks(tasks)


def describe(*, mode: str = "merge", dataset: str = "digits", tasks: Sequence[str] | str | None = None,
             shots: int = 0, **options: Any) -> dict[str, Any]:
    """The protocol's settings (suite recipe, splits, baselines' grids) as ``evaluate`` runs them."""
    if mode == "stitching":
        from .stitching import describe as stitching_describe

        return stitching_describe(dataset=dataset, **options)
    return {"task": NAME, "mode": mode, "dataset": dataset, "tasks": _tasks_option(tasks),
            "architecture": f"MLP encoder 64-{S.HIDDEN}-{S.HIDDEN} ReLU, frozen cosine prototype heads "
                            f"(logit scale {S.LOGIT_SCALE})", "pretrain": {
                "steps": S.PRE_STEPS, "lr": S.PRE_LR, "data": "control (untransformed) training split"},
            "finetune": {"steps": S.FT_STEPS, "lr": S.FT_LR, "params": "all"}, "optimizer": "AdamW",
            "batch": S.BATCH, "weight_decay": S.WEIGHT_DECAY, "val_fraction": S.VAL_FRACTION,
            "fashion_train": S.FASHION_TRAIN, "shots": int(shots), "lambda_grid": [B.LAMBDA_GRID[0], B.LAMBDA_GRID[-1],
                                                                                  len(B.LAMBDA_GRID)],
            "ties": {"k": B.TIES_K, "grid": [B.TIES_GRID[0], B.TIES_GRID[-1], len(B.TIES_GRID)]},
            "negation_min_control": B.NEG_CONTROL, "suite_version": S.VERSION, **options}


def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, **options: Any) -> nn.Module:
    """The merger module of baseline ``name`` (parameter-free: ``params`` is ignored)."""
    return B.build(name, **options)


def _call_merge(fn: Callable[..., Any], suite: S.Suite, tasks: list[str], few_shot: Any, seed: int,
                steps: int | None) -> Any:
    kw: dict[str, Any] = {"tasks": tasks, "few_shot": few_shot}
    params = inspect.signature(fn).parameters
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    if "seed" in params or takes_all:
        kw["seed"] = seed
    if steps is not None and ("steps" in params or takes_all):
        kw["steps"] = steps
    return fn(suite, **kw)


def _check_state(state: Any, suite: S.Suite, who: str) -> dict[str, torch.Tensor]:
    if not isinstance(state, dict):
        raise TypeError(f"{NAME}: {who} must return a state dict (name -> tensor), got {type(state).__name__}")
    missing = sorted(set(suite.base_state) - set(state))
    extra = sorted(set(state) - set(suite.base_state))
    if missing or extra:
        raise ValueError(f"{NAME}: {who} returned a state dict with missing keys {missing} / unexpected keys {extra}")
    for k, v in state.items():
        if tuple(v.shape) != tuple(suite.base_state[k].shape):
            raise ValueError(f"{NAME}: {who}: {k} has shape {tuple(v.shape)}, expected {tuple(suite.base_state[k].shape)}")
    return {k: v.detach().to("cpu", torch.float32) for k, v in state.items()}


def score_merger(model: nn.Module, suite: S.Suite, *, tasks: list[str], few_shot: Any = None, seed: int = 0,
                 steps: int | None = None, negate: bool = False, neg_targets: Sequence[str] | None = None,
                 who: str = "model") -> dict[str, float]:
    """The metrics of mode ``merge`` (see the module docstring) for one merger on ``suite``."""
    t0 = time.perf_counter()
    if hasattr(model, "per_task_states"):
        states = [_check_state(s, suite, f"{who}.per_task_states") for s in model.per_task_states(suite, tasks)]
    elif hasattr(model, "merge"):
        states = [_check_state(_call_merge(model.merge, suite, tasks, few_shot, seed, steps), suite, f"{who}.merge")]
        states = states * len(tasks)
    else:
        raise TypeError(f"{NAME}: mode 'merge' evaluates a module with merge(suite, *, tasks=None, few_shot=None) -> "
                        f"state_dict; {type(model).__name__} has none")
    seconds = time.perf_counter() - t0
    out: dict[str, float] = {}
    norm = []
    for t, state in zip(tasks, states, strict=True):
        acc = suite.accuracy(state, t)
        out[f"acc/{t}"] = acc
        norm.append(acc / max(suite.individual_accuracy(t), 1e-12))
    out["avg_acc"] = sum(out[f"acc/{t}"] for t in tasks) / len(tasks)
    out["normalized_acc"] = sum(norm) / len(norm)
    stored = getattr(model, "stored_floats", None)
    out["stored_floats"] = float(stored(suite) if callable(stored) else stored if stored is not None else suite.n_params())
    out["merge_seconds"] = seconds
    if negate and hasattr(model, "negate"):
        out.update(negation_metrics(model, suite, neg_targets or tasks, who=who))
    return out


def negation_metrics(model: nn.Module, suite: S.Suite, targets: Sequence[str], who: str = "model") -> dict[str, float]:
    """Ilharco et al.'s negation table for ``model.negate`` over ``targets`` (means; see the module docstring)."""
    base_control = suite.accuracy(suite.base_state, S.CONTROL)
    rows = []
    for t in targets:
        state = _check_state(model.negate(suite, t, control=S.CONTROL), suite, f"{who}.negate")
        base_t = suite.accuracy(suite.base_state, t)
        tgt, ctl = suite.accuracy(state, t), suite.accuracy(state, S.CONTROL)
        rows.append((tgt, base_t - tgt, ctl, ctl / max(base_control, 1e-12)))
    n = len(rows)
    return {"neg/target_acc": sum(r[0] for r in rows) / n, "neg/target_drop": sum(r[1] for r in rows) / n,
            "neg/control_acc": sum(r[2] for r in rows) / n, "neg/control_retention": sum(r[3] for r in rows) / n}


def evaluate(model: nn.Module, *, mode: str = "merge", dataset: str = "digits", steps: int | None = None, seed: int = 0,
             baselines: Sequence[str] | None = None, out_dir: str | None = None, budget_s: float | None = None,
             rebuild: Callable[..., nn.Module] | None = None, progress: bool = False, **options: Any) -> Result:
    """Score ``model`` on the suite of ``dataset`` for ``seed`` and the baselines (all by default; ``[]`` for none).

    Options of mode ``merge``: ``tasks`` (names or a comma-separated string; all eight by default), ``shots`` (labelled
    examples per class handed to ``merge`` as ``few_shot``; 0 = none), ``negate`` (default: whether the model has
    ``negate``), ``neg_targets``. See the module docstring for the metrics.
    """
    if mode not in MODES:
        raise ValueError(f"{NAME}: unknown mode {mode!r}; choose from {list(MODES)}")
    if mode == "stitching":
        try:
            from .stitching import run
        except ImportError as exc:
            raise NotImplementedError(f"{NAME}: mode 'stitching' needs zoo_task_task_merge/stitching.py, which this "
                                      f"install lacks ({exc}); reinstall zoo-task-task-merge from a checkout that has "
                                      "it") from None
        return run(model, dataset=dataset, steps=steps, seed=seed, baselines=baselines, out_dir=out_dir,
                   budget_s=budget_s, rebuild=rebuild, progress=progress, **options)
    known = {"tasks", "shots", "negate", "neg_targets"}
    bad = sorted(set(options) - known)
    if bad:
        raise ValueError(f"{NAME}: unknown options {bad} for mode 'merge'; valid: {sorted(known)}")
    tasks = _tasks_option(options.get("tasks"))
    shots = int(options.get("shots", 0) or 0)
    if shots < 0:
        raise ValueError(f"{NAME}: shots must be >= 0, got {shots}")
    negate = bool(options.get("negate", hasattr(model, "negate")))
    neg_targets = options.get("neg_targets")
    if neg_targets is not None:
        neg_targets = _tasks_option(neg_targets)
    names = list(BASELINES) if baselines is None else list(baselines)
    for b in names:
        if b not in BASELINES:
            raise ValueError(f"{NAME}: unknown baseline {b!r}; choose from {list(BASELINES)}")
    t0 = time.perf_counter()
    # hundreds of small forward passes and solves: one thread (two oversubscribe a busy CPU: 25 s became 115 s)
    with torch_threads(1):
        if progress:
            status(f"{NAME}: building the {dataset} suite (seed {seed})", force=True)
        suite = S.build_suite(seed=seed, dataset=dataset, tasks=tasks)
        few_shot = {t: suite.few_shot(t, shots, seed) for t in tasks} if shots else None
        metrics = score_merger(model, suite, tasks=tasks, few_shot=few_shot, seed=seed, steps=steps, negate=negate,
                               neg_targets=neg_targets)
        rows: dict[str, dict[str, float]] = {}
        for b in names:
            if progress:
                status(f"{NAME}: baseline {b}", force=True)
            rows[b] = score_merger(B.build(b), suite, tasks=tasks, few_shot=few_shot, seed=seed, negate=negate,
                                   neg_targets=neg_targets, who=b)
    n = sum(len(suite.test(t)[1]) for t in tasks)
    return Result(task=NAME, metrics=metrics, baselines=rows, n=n, seconds=time.perf_counter() - t0,
                  config=describe(mode=mode, dataset=dataset, tasks=tasks, shots=shots, seed=seed))
