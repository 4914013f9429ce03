"""``icl_toy``: interventions (task vectors, function vectors) on tiny GPTs trained in code on in-context tasks.

Two frozen GPTs (``models.trained_gpt``, trained once and cached): ``mode="token"`` is the GPT of the eight token
tasks (token bijections, weekday and month arithmetic; ``data`` lists them), ``mode="regression"`` the GPT of
Garg et al.'s in-context linear regression (d = 4, 20 shots) with four fixed weight vectors as its tasks.

Protocol: the model (an intervention, see ``interventions``) is fitted on ``n_fit`` prompts per task (clean prompts
with ``shots`` demonstrations, their corrupted copies and their zero-shot queries: ``ICLData``), then scored on
``n_test`` fresh zero-shot prompts per task (``BOS xq ->`` or the lone query vector) with its intervention applied:
``acc`` (token: the argmax is the right answer) or ``mse`` (regression), overall and per task (``acc:<task>``).
The baselines ``none``, ``random_heads`` and ``mean_heads`` are fitted and scored on the same prompts; the row
``icl`` is the GPT itself on the clean ``shots``-shot test prompts (what the interventions try to recover) with its
per-layer logit-lens decodability of the answer (``lens@l``: the residual stream entering block ``l`` through the
final norm and the head).
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result, count_params

from . import data as D
from .gpt import HookedGPT, residual_states
from .interventions import ICLData, MeanHeads, NoVector, Prompts, RandomHeads, TaskVectorModel
from .models import CONFIGS, KINDS, build_gpt, trained_gpt

NAME = "icl_toy"
MODES = KINDS
BASELINES = ("none", "random_heads", "mean_heads")
SHOTS = {"token": 5, "regression": 10}
N_FIT = 64
N_TEST = 128
K_HEADS = 4
_BUILDERS = {"none": NoVector, "random_heads": RandomHeads, "mean_heads": MeanHeads}


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"{NAME}: unknown mode {mode!r}; choose from {', '.join(MODES)}")


def task_names(mode: str) -> tuple[str, ...]:
    """The tasks of ``mode``: the token task names, or ``linear_w0..3`` for the fixed regression weights."""
    _check_mode(mode)
    return D.TASK_NAMES if mode == "token" else tuple(f"linear_w{i}" for i in range(D.N_REG_TASKS))


def icl_data(mode: str = "token", *, n: int = N_FIT, shots: int | None = None, seed: int = 0,
             stream: str = "fit") -> ICLData:
    """``n`` clean, corrupted and zero-shot prompts per task of ``mode`` (see ``interventions.ICLData``); ``stream``
    "fit" or "test" selects independent seeded draws. The corrupted prompts have the clean ones' inputs and output
    set; the zero-shot prompts their queries."""
    _check_mode(mode)
    if stream not in ("fit", "test"):
        raise ValueError(f"{NAME}: stream must be 'fit' or 'test', got {stream!r}")
    shots = SHOTS[mode] if shots is None else int(shots)
    if not 1 <= shots <= CONFIGS[mode]["shots"]:
        raise ValueError(f"{NAME}: shots must be in 1..{CONFIGS[mode]['shots']} (the GPT's training prompts), got {shots}")
    base = (1_000 if stream == "fit" else 2_000) + 101 * seed
    names = task_names(mode)
    parts: dict[str, list] = {"clean": [], "corrupt": [], "zero": []}
    for t in range(len(names)):
        if mode == "token":
            make = lambda corrupt, t=t: D.token_prompts(t, n, shots, rng=np.random.default_rng(base + t),  # noqa: E731
                                                       corrupt=corrupt)
        else:
            w = np.repeat(D.regression_weights()[t:t + 1], n, 0)
            make = lambda corrupt, w=w, t=t: D.regression_prompts(w, shots, rng=np.random.default_rng(base + t),  # noqa: E731
                                                                 corrupt=corrupt)
        (x, y), (xc, yc) = make(False), make(True)
        zero = np.concatenate([x[:, :1], x[:, -2:]], 1) if mode == "token" else x[:, -1:]  # the lone query
        task = np.full(n, t)
        for key, (inp, tgt) in {"clean": (x, y), "corrupt": (xc, yc), "zero": (zero, y)}.items():
            parts[key].append((inp, tgt, task))

    def cat(key: str) -> Prompts:
        inp, tgt, task = (np.concatenate([p[i] for p in parts[key]]) for i in range(3))
        return Prompts(torch.from_numpy(inp), torch.from_numpy(tgt), torch.from_numpy(task).long())

    return ICLData(kind=mode, tasks=names, shots=shots, clean=cat("clean"), corrupt=cat("corrupt"), zero=cat("zero"))


# ------------------------------------------------------------------------------------------ scoring
@torch.no_grad()
def score(model: nn.Module | None, gpt: HookedGPT, prompts: Prompts, tasks: tuple[str, ...],
          kind: str) -> dict[str, float]:
    """``acc`` (token) or ``mse`` (regression) of the query answers, overall and per task, with ``model``'s
    intervention (``None``: the GPT alone)."""
    out = gpt(prompts.inputs) if model is None else model(gpt, prompts.inputs, prompts.task)
    last = out[:, -1]
    if kind == "token":
        per = (last.argmax(-1) == prompts.targets).float()
        key = "acc"
    else:
        per = (last[:, 0] - prompts.targets) ** 2
        key = "mse"
    res = {key: float(per.mean())}
    for t, name in enumerate(tasks):
        res[f"{key}:{name}"] = float(per[prompts.task == t].mean())
    return res


@torch.no_grad()
def logit_lens(gpt: HookedGPT, prompts: Prompts, kind: str) -> dict[str, float]:
    """Per layer l, the answer decoded from the residual stream entering block l (l = depth: the model's own
    output): ``lens@l`` accuracy (token) or squared error (regression)."""
    states = residual_states(gpt, prompts.inputs)  # (B, depth + 1, dim)
    dec = gpt.unembed(states)
    if kind == "token":
        vals = (dec.argmax(-1) == prompts.targets[:, None]).float().mean(0)
    else:
        vals = ((dec[..., 0] - prompts.targets[:, None]) ** 2).mean(0)
    return {f"lens@{i}": float(v) for i, v in enumerate(vals)}


# ------------------------------------------------------------------------------------------ baselines
def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, mode: str = "token",
                   k: int = K_HEADS, layer: int | None = None, **options: Any) -> nn.Module:
    """Baseline ``name`` for the GPT of ``mode`` (interventions hold no trained parameters: ``params`` is unused)."""
    if name not in _BUILDERS:
        raise ValueError(f"{NAME}: unknown baseline {name!r}; choose from {', '.join(BASELINES)}")
    if options:
        raise ValueError(f"{NAME}: build_baseline takes no options {sorted(options)}; it takes mode, k and layer")
    _check_mode(mode)
    arch = CONFIGS[mode]["arch"]
    sizes = {"n_tasks": len(task_names(mode)), "depth": arch["depth"], "dim": arch["dim"]}
    torch.manual_seed(seed)
    if name == "none":
        return NoVector(**sizes)
    return _BUILDERS[name](**sizes, heads=arch["heads"], k=k, layer=layer)


# ------------------------------------------------------------------------------------------ the task contract
def example_input(model: nn.Module | None = None) -> tuple[HookedGPT, torch.Tensor, torch.Tensor]:
    """``(gpt, ids (2, 3), task (2,))``: an untrained token GPT of the model's depth and width (seed 0) and two
    zero-shot prompts."""
    depth = getattr(model, "depth", CONFIGS["token"]["arch"]["depth"])
    dim = getattr(model, "dim", CONFIGS["token"]["arch"]["dim"])
    heads = getattr(model, "heads", CONFIGS["token"]["arch"]["heads"])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        gpt = build_gpt("token", depth=depth, dim=dim, heads=heads).eval()
    ids = torch.tensor([[D.VOCAB.bos, D.VOCAB.word0 + 3, D.VOCAB.arrow], [D.VOCAB.bos, D.VOCAB.day0 + 1, D.VOCAB.arrow]])
    return gpt, ids, torch.tensor([0, min(4, getattr(model, "n_tasks", 8) - 1)])


def check_output(model: nn.Module, output: Any) -> None:
    if not isinstance(output, torch.Tensor):
        raise AssertionError(f"{NAME}: output is a {type(output).__name__}, expected logits (B, T, vocab)")
    if tuple(output.shape) != (2, 3, D.VOCAB.size):
        raise AssertionError(f"{NAME}: an intervention returns the GPT's logits (2, 3, {D.VOCAB.size}) on the example "
                             f"input, got {tuple(output.shape)}")
    if not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: the logits hold NaN or inf")


def describe(*, mode: str = "token", steps: int | None = None, budget_s: float | None = None, shots: int | None = None,
             n_fit: int = N_FIT, n_test: int = N_TEST) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options."""
    _check_mode(mode)
    cfg = CONFIGS[mode]
    return {"mode": mode, "tasks": list(task_names(mode)), "shots": SHOTS[mode] if shots is None else shots,
            "n_fit_per_task": n_fit, "n_test_per_task": n_test, "fit_steps": steps, "fit_budget_s": budget_s,
            "gpt": {**cfg["arch"], "train_steps": cfg["steps"], "train_shots": cfg["shots"], "batch": cfg["batch"],
                    "lr": cfg["lr"], "optimizer": "AdamW, warm-up + cosine"},
            "metric": "zero-shot acc" if mode == "token" else "zero-shot mse",
            "baselines": list(BASELINES), "baseline_heads_k": K_HEADS, "reference": "icl (the GPT on clean prompts)"}


def evaluate(model: nn.Module, *, mode: str = "token", steps: int | None = None, budget_s: float | None = None,
             seed: int = 0, baselines: list[str] | None = None, shots: int | None = None, n_fit: int = N_FIT,
             n_test: int = N_TEST, progress: bool = False, out_dir: str | None = None,
             rebuild: Callable[..., nn.Module] | None = None) -> Result:
    """Fit the intervention ``model`` on the cached GPT of ``mode`` and score it zero-shot next to the baselines."""
    t0 = time.perf_counter()
    settings = describe(mode=mode, steps=steps, budget_s=budget_s, shots=shots, n_fit=n_fit, n_test=n_test)
    if not callable(getattr(model, "fit", None)):
        raise ValueError(f"{NAME}: the model must be an intervention with fit(gpt, data) and forward(gpt, inputs, task) "
                         f"(see zoo_task_icl_toy.interventions.TaskVectorModel); got {type(model).__name__}")
    names = list(BASELINES) if baselines is None else list(baselines)
    unknown = sorted(set(names) - set(BASELINES))
    if unknown:
        raise ValueError(f"{NAME}: unknown baselines {unknown}; choose from {', '.join(BASELINES)}")
    gpt = trained_gpt(mode, progress=progress)
    fit_data = icl_data(mode, n=n_fit, shots=shots, seed=seed, stream="fit")
    test = icl_data(mode, n=n_test, shots=shots, seed=seed, stream="test")
    tasks = fit_data.tasks

    def run(m: nn.Module) -> dict[str, float]:
        torch.manual_seed(seed)
        out = {"params": float(count_params(m))}
        out.update(m.fit(gpt, fit_data, steps=steps, budget_s=budget_s, seed=seed) or {})
        out.update(score(m, gpt, test.zero, tasks, mode))
        return out

    metrics = run(model)
    rows = {b: run(build_baseline(b, seed=seed, mode=mode)) for b in names}
    rows["icl"] = {**score(None, gpt, test.clean, tasks, mode), **logit_lens(gpt, test.clean, mode)}
    return Result(task=NAME, metrics=metrics, baselines=rows, n=len(test.zero), seconds=time.perf_counter() - t0,
                  config={**settings, "seed": seed})


__all__ = ["NAME", "BASELINES", "MODES", "evaluate", "build_baseline", "example_input", "check_output", "describe",
           "icl_data", "score", "logit_lens", "task_names", "trained_gpt", "TaskVectorModel", "ICLData", "Prompts"]
