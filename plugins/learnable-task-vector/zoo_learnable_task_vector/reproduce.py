"""``zoo reproduce learnable-task-vector``: LTV against the task's baselines on both ``icl_toy`` GPTs.

One seed = one ``task.evaluate`` per mode (fit and test prompts drawn from that seed; the GPTs are the task's cached
ones): ``mode="regression"`` (Garg et al.'s in-context linear regression, four fixed weight vectors as the tasks,
zero-shot MSE of the lone query) and ``mode="token"`` (eight token tasks, zero-shot accuracy). Next to LTV: the task's
``none``, ``random_heads`` and ``mean_heads`` (the FV-style sum of the top-4 heads' task means at layer 1) and the
GPT's own in-context score (``icl``: 10-shot regression, 5-shot tokens). ``hidden_gap`` measures the alignment the
paper credits: per task, the distance between the mean last hidden state (entering the final norm) of the
intervened zero-shot prompts and that of the clean in-context prompts, over the latter's norm, averaged over tasks.
"""
from __future__ import annotations

import functools
from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo_task_icl_toy import data as D
from zoo_task_icl_toy import task
from zoo_task_icl_toy.gpt import add_to_residual, residual_states

from .model import BATCH, LR, STEPS, learnable_task_vector
from .plugin import CLAIM, TASK

QUICK = {"n_fit": 8, "n_test": 16}
QUICK_STEPS = 10
METHODS = ("learnable_task_vector", "none", "random_heads", "mean_heads")
# |w_t|^2 averaged over the four regression tasks: the zero-shot error of predicting 0, the scale of the margin
ZERO_MSE = float((D.regression_weights() ** 2).sum(1).mean())


@torch.no_grad()
def hidden_gap(model: Any, gpt: Any, zero: Any, clean: Any, n_tasks: int) -> float:
    """Mean over tasks of |mean h(zero-shot, intervened) - mean h(clean)| / |mean h(clean)| at the last position."""
    add = model.additions(zero.task) if model is not None else None
    if add is None:
        h_zero = residual_states(gpt, zero.inputs)[:, -1]
    else:
        with add_to_residual(gpt, {layer: add[:, layer] for layer in range(add.shape[1])}):
            h_zero = residual_states(gpt, zero.inputs)[:, -1]
    h_clean = residual_states(gpt, clean.inputs)[:, -1]
    gaps = []
    for t in range(n_tasks):
        a, b = h_zero[zero.task == t].mean(0), h_clean[clean.task == t].mean(0)
        gaps.append(float((a - b).norm() / b.norm()))
    return sum(gaps) / len(gaps)


@functools.lru_cache(maxsize=8)
def run_seed(seed: int, quick: bool) -> dict[str, dict[str, float]]:
    """Every row's metrics for one seed (one evaluate per mode; the rows read from it)."""
    sizes = QUICK if quick else {"n_fit": task.N_FIT, "n_test": task.N_TEST}
    rows: dict[str, dict[str, float]] = {}
    for mode in ("regression", "token"):
        n_tasks = len(task.task_names(mode))
        torch.manual_seed(seed)
        ltv = learnable_task_vector(n_tasks=n_tasks)
        res = task.evaluate(ltv, mode=mode, seed=seed, steps=QUICK_STEPS if quick else None, **sizes)
        gpt = task.trained_gpt(mode)
        fit = task.icl_data(mode, n=sizes["n_fit"], seed=seed, stream="fit")
        test = task.icl_data(mode, n=sizes["n_test"], seed=seed, stream="test")
        models = {"learnable_task_vector": ltv, "none": None}
        for b in ("random_heads", "mean_heads"):
            models[b] = task.build_baseline(b, seed=seed, mode=mode)
            models[b].fit(gpt, fit, seed=seed)
        for name in METHODS:
            m = res.metrics if name == "learnable_task_vector" else res.baselines[name]
            rows[f"{name}:{mode}"] = {k: v for k, v in m.items() if ":" not in k}
            rows[f"{name}:{mode}"]["hidden_gap"] = hidden_gap(models[name], gpt, test.zero, test.clean, n_tasks)
        rows[f"icl:{mode}"] = {k: v for k, v in res.baselines["icl"].items() if ":" not in k}
    return rows


def ltv_row(*, seed: int, quick: bool, row: str) -> dict[str, float]:
    return run_seed(seed, quick)[row]


ROWS = [Row(f"{name}:{mode}", ltv_row, {"row": f"{name}:{mode}"})
        for mode in ("regression", "token") for name in (*METHODS, "icl")]

CHECKS = [
    Check("learnable_task_vector:regression", "mse", baseline="mean_heads:regression", margin=0.25 * ZERO_MSE,
          higher=False),
    Check("learnable_task_vector:token", "acc", baseline="none:token", margin=0.3),
    Check("learnable_task_vector:token", "acc", baseline="mean_heads:token", margin=0.0),
]

REPRODUCTION = Claim(
    plugin="learnable-task-vector", claim=CLAIM, task=TASK, seeds=(0, 1, 2, 3, 4), quick_seeds=(0,), rows=ROWS,
    checks=CHECKS, task_options={"mode": "regression"},
    settings={"alpha_steps": STEPS, "alpha_lr": LR, "alpha_batch": BATCH, "alpha_init": "N(0, 1)",
              "zero_shot_mse_of_predicting_0": ZERO_MSE, "n_fit_per_task": task.N_FIT, "n_test_per_task": task.N_TEST},
    notes="margins fixed before the first run: (1) regression, the paper's central claim: LTV's zero-shot MSE must be "
          "below the FV-style mean_heads' by >= a quarter of the zero-shot error of predicting 0 (0.25 |w|^2 averaged "
          "over the four tasks); (2) tokens: LTV must raise zero-shot accuracy by >= 0.30 over no vector; (3) and be "
          "no worse than mean_heads (margin 0: the paper reports LTV at or above the baselines on text tasks). "
          "Reported only: random_heads, the GPTs' own in-context scores (icl) and hidden_gap (the alignment of the last "
          "hidden state with in-context prompts). LTV learns n_tasks x layers x heads weights (128 token, 64 "
          "regression); the baselines learn nothing: parameter matching does not apply to interventions. The five "
          "seeds vary the prompts and alpha's initialisation; the GPTs are the task's cached ones (trained once).",
)
