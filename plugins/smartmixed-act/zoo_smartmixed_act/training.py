"""SmartMixed's two phases inside the task's own training run: freeze after ``n`` training steps.

``freeze_after(model, n)`` counts the model's training-mode forward passes (one per step in
``zoo_task_digits.task.train``) and freezes every SmartMixed layer just before pass ``n + 1``, so
selection (phase 1) and fixed training (phase 2) are one run on one optimiser and one learning-rate
schedule, as in the paper, and the model is trained by ``zoo.evaluate`` like every baseline.
Frozen logits get no gradient, so the optimiser leaves them alone in phase 2.

    >>> import torch, zoo
    >>> model = zoo.create("smartmixed_mlp", hidden=8)
    >>> with freeze_after(model, 2) as counts:  # doctest: +SKIP
    ...     zoo.evaluate(model, steps=4, baselines=[])
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

from torch import nn

from .model import freeze


@contextlib.contextmanager
def freeze_after(model: nn.Module, steps: int) -> Iterator[list[dict[str, int]]]:
    """Within the block, freeze the model's SmartMixed layers after ``steps`` training forward passes.

    Yields the list that receives the per-layer counts per function at freezing; if the block
    runs fewer training passes, the layers are frozen when it ends.
    """
    counts: list[dict[str, int]] = []
    calls = 0

    def hook(module: nn.Module, args: tuple) -> None:
        nonlocal calls
        if module.training:
            if calls == steps and not counts:
                counts.extend(freeze(module))
            calls += 1

    handle = model.register_forward_pre_hook(hook)
    try:
        yield counts
    finally:
        handle.remove()
        if not counts:
            counts.extend(freeze(model))
