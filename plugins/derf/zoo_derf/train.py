"""Recipes for the pretrained tags (run by ``zoo train derf_vit.digits``)."""
from __future__ import annotations

import torch

import zoo
from zoo_task_digits import task

DIGITS_STEPS = task.DEFAULT_STEPS  # 600 AdamW steps of 64 images, the task's default budget


def digits(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``derf_vit`` trained on digits_classify's training split for a fixed number of steps.

    Deterministic for a given seed (seeded construction, seeded batches, CPU). Returns the
    trained model (in eval mode) and the metrics measured here: test accuracy on the task's
    held-out split, the final train loss (mean of the last 10% of steps) and the step count.

    >>> model, metrics = digits(seed=0)  # about 20 s of CPU  # doctest: +SKIP
    """
    torch.manual_seed(seed)
    model = zoo.create("derf_vit")
    fit = task.train(model, steps=DIGITS_STEPS, seed=seed)
    metrics = {"accuracy": task.accuracy(model)["accuracy"], "final_train_loss": fit["final_train_loss"],
               "steps": float(fit["steps"])}
    return model, metrics
