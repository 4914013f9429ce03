"""Recipes for the pretrained tags: ``zoo train example_mlp.digits`` runs ``digits(seed=0)``.

A recipe is ``recipe(seed=0) -> (model, metrics)``. It builds the model with ``zoo.create``, never by
calling the builder: ``zoo.create`` attaches ``model.zoo`` (the model's name, builder arguments and task),
which ``zoo train`` needs to save, push and card the weights, and ``zoo.evaluate`` needs to find the task.
"""
from __future__ import annotations

import torch

import zoo
from zoo.task import torch_threads

STEPS = 600  # the task's default budget (zoo_task_digits.task.DEFAULT_STEPS), fixed here so the tag does not move with it


def digits(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``example_mlp`` trained on digits_classify's training split with the task's optimiser; its test accuracy.

    Deterministic for a given seed (seeded construction, seeded batches, one CPU thread).

    >>> model, metrics = digits(seed=0)  # a few seconds of CPU  # doctest: +SKIP
    >>> metrics["accuracy"]              # doctest: +SKIP
    """
    from zoo_task_digits import task

    with torch_threads(1):  # a tiny model: one thread is faster on a small machine, and machine-independent
        torch.manual_seed(seed)
        model = zoo.create("example_mlp")
        fit = task.train(model, steps=STEPS, seed=seed)
        metrics = {"accuracy": task.accuracy(model)["accuracy"], "final_train_loss": fit["final_train_loss"],
                   "steps": float(fit["steps"])}
    return model, metrics
