"""``zoo reproduce evonorm``: BN-ReLU vs GN-ReLU vs EvoNorm-B0 vs EvoNorm-S0 at batch 128 and batch 4.

The four layers sit in the same tiny pre-activation ResNet; for a given seed every row starts
from the same convolution and head weights (no norm-activation layer draws random numbers) and
sees the same batches. Training is the task's own (``zoo_task_digits.task.fit``) with a fixed number
of steps per batch size. The task's CNN baseline (``cnn-ln-relu``, LayerNorm applied per position,
so batch-size-free) is trained beside them under the same settings.
"""
from __future__ import annotations

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_digits import task

from .plugin import CLAIM, TASK

MODELS = {"BN-ReLU": "tinyresnet_bn_relu", "GN-ReLU": "tinyresnet_gn_relu", "EvoNorm-B0": "tinyresnet_evonorm_b0",
          "EvoNorm-S0": "tinyresnet_evonorm_s0", "task baseline": "cnn-ln-relu"}
# batch size -> steps: ~14 epochs at batch 128; 600 steps at batch 4 (~1.8 epochs, the small-batch regime).
# Quick runs use batch 8 and 4, 2 steps each.
BATCHES = {128: 150, 4: 600}
QUICK_BATCHES = {128: 8, 4: 4}


def build(name: str, seed: int) -> torch.nn.Module:
    """The seeded, untrained model of one row (a registered model or the task's baseline)."""
    if name in task.BASELINES:
        return task.build_baseline(name, seed=seed)
    torch.manual_seed(seed)
    return zoo.create(name)


def norm_row(*, seed: int, model: str, batch_size: int, steps: int) -> dict[str, float]:
    """One row trained on digits_classify at ``batch_size``: test accuracy, train loss, time per step, params."""
    m = task.fit(build(model, seed), steps=steps, seed=seed, batch_size=batch_size)
    return {"test_acc": m["accuracy"], "final_train_loss": m["final_train_loss"],
            "ms_per_step": 1e3 * m["seconds_per_step"], "params": m["params"]}


REPRODUCTION = Claim(
    plugin="evonorm", claim=CLAIM, task=TASK, seeds=(0, 1, 2),
    rows=[Row(f"{label} @ {b}", norm_row, {"model": name, "batch_size": b, "steps": steps},
              quick_args={"batch_size": QUICK_BATCHES[b], "steps": 2})
          for b, steps in BATCHES.items() for label, name in MODELS.items()],
    checks=[Check("EvoNorm-S0 @ 128", "test_acc", baseline="BN-ReLU @ 128"),
            Check("EvoNorm-S0 @ 4", "test_acc", baseline="BN-ReLU @ 4"),
            Check("EvoNorm-S0 @ 4", "test_acc", baseline="GN-ReLU @ 4")],
    notes="margin 0: the paper claims EvoNorm-S0 is at least as good, not by how much; EvoNorm-B0 and the task's "
          "cnn-ln-relu are reported only. Rows run interleaved per seed, so time per step sees the same load",
)
