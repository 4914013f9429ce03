"""``zoo reproduce activation-catalog``: every catalogued activation trained in the reference MLP.

The survey makes no single claim, so the claim checked is that each catalogued activation trains:
every one goes into ``zoo_nn.backbones.DigitsMLP`` (LayerNorm, 2 x 128) as its ``act_layer`` and is
trained on ``digits_classify`` with the task's protocol (``zoo_task_digits.task.fit``), so for a given
seed every row starts from the same linear weights and sees the same batches. The task's own
baseline (``mlp-ln-relu``) is trained beside them; GELU is a catalogue row. The table is the ranking.
"""
from __future__ import annotations

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_digits import task

from .catalog import ENTRIES
from .plugin import CLAIM, TASK, model_name

BASELINE = "mlp-ln-relu"
CHANCE_THRESHOLD = 0.15  # 0.10 + 3 binomial standard errors (sqrt(0.09 / 450) = 0.014) on the 450 test images


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


REPRODUCTION = Claim(
    plugin="activation-catalog", claim=CLAIM, task=TASK, steps=task.DEFAULT_STEPS, quick_steps=3, seeds=(0, 1, 2),
    rows=[Row(BASELINE, activation_row), *(Row(name, activation_row, {"activation": name}) for name in ENTRIES)],
    checks=[Check(name, "test_acc", margin=CHANCE_THRESHOLD) for name in ENTRIES],
    settings={"chance_threshold": CHANCE_THRESHOLD},
    notes="one check per activation: test accuracy >= 0.15, more than 3 binomial standard errors above chance (0.10) "
          "on 450 test images; the ranking and the comparison with the ReLU baseline are reported, not checked",
)
