"""The catalogue's ranking: every catalogued activation trained in the reference MLP, next to the task's baseline.

A survey makes no claim, so this plugin registers none (``zoo reproduce`` has nothing to decide): the
ranking is a measurement, not a verdict. Every activation goes into ``zoo_nn.backbones.DigitsMLP``
(LayerNorm, 2 x 128) as its ``act_layer`` and is trained on ``digits_classify`` with the task's protocol
(``zoo_task_digits.task.fit``), so for a given seed every row starts from the same linear weights and sees
the same batches. The task's own baseline (``mlp-ln-relu``) is trained beside them.

    >>> table = ranking(["relu", "gelu"], seeds=(0,), steps=3)  # doctest: +SKIP
    >>> list(table)[0] in {"relu", "gelu", "mlp-ln-relu"}  # doctest: +SKIP
    True
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch

import zoo
from zoo.claims import interval95
from zoo_task_digits import task

from .catalog import ENTRIES
from .plugin import model_name

__all__ = ["BASELINE", "activation_row", "ranking"]

BASELINE = "mlp-ln-relu"


def activation_row(*, seed: int, steps: int, activation: str | None = None) -> dict[str, float]:
    """``act_<activation>_mlp`` (or, without an activation, the task's ReLU baseline) trained and tested."""
    if activation is None:
        model = task.build_baseline(BASELINE, seed=seed)
    else:
        torch.manual_seed(seed)
        model = zoo.create(model_name(activation))
    m = task.fit(model, steps=steps, seed=seed)
    return {"test_acc": m["accuracy"], "final_train_loss": m["final_train_loss"],
            "ms_per_step": 1e3 * m["seconds_per_step"], "params": m["params"]}


def ranking(activations: Iterable[str] | None = None, seeds: Sequence[int] = (0, 1, 2),
            steps: int = task.DEFAULT_STEPS) -> dict[str, dict[str, Any]]:
    """Rows (the baseline and each activation, default all of ``ENTRIES``) sorted by mean test accuracy.

    Each row: per metric ``{mean, std, ci95}`` over ``seeds`` (the 95% t-interval of the mean).
    """
    names = [BASELINE, *(ENTRIES if activations is None else activations)]
    rows: dict[str, dict[str, Any]] = {}
    for name in names:
        per_seed = [activation_row(seed=s, steps=steps, activation=None if name == BASELINE else name) for s in seeds]
        rows[name] = {}
        for metric in per_seed[0]:
            mean, std, low, high = interval95([r[metric] for r in per_seed])
            rows[name][metric] = {"mean": mean, "std": std, "ci95": (low, high)}
    return dict(sorted(rows.items(), key=lambda kv: -kv[1]["test_acc"]["mean"]))
