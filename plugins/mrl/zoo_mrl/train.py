"""Recipes for the pretrained tags (``zoo train mrl_digits_cnn.digits``): ``recipe(seed=0) -> (model, metrics)``."""
from __future__ import annotations

import logging
from collections.abc import Callable

import torch

from zoo.task import torch_threads

log = logging.getLogger(__name__)

STEPS = 600  # zoo_task_digits.task.DEFAULT_STEPS, fixed here so the recipe does not move if the task's default does


def fit_digits(build: Callable[[], torch.nn.Module], *, seed: int = 0, steps: int = STEPS,
               dataset: str = "digits") -> tuple[torch.nn.Module, dict[str, float]]:
    """Call ``build()`` after ``torch.manual_seed(seed)``, train the model on digits_classify's ``dataset``
    (``"digits"`` or ``"fashion_mnist"``) for ``steps`` steps (batches drawn with ``seed``), and return it with
    its test accuracy at every granularity (``accuracy@m``, and ``accuracy``: the largest one's)."""
    from zoo_task_digits import task as digits

    with torch_threads(1):  # tiny models: one thread is faster on small shared machines and machine-independent
        torch.manual_seed(seed)
        model = build()
        stats = digits.train(model, steps=steps, seed=seed, dataset=dataset)
        metrics = digits.accuracy(model, dataset=dataset)
    log.info("trained %d steps in %.1f s (seed %d): %s", stats["steps"], stats["train_seconds"], seed, metrics)
    return model, metrics


def digits(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``mrl_digits_cnn.digits``: 600 AdamW steps on digits_classify; metrics ``accuracy@m`` for each m.

    >>> model, metrics = digits()   # doctest: +SKIP
    >>> metrics["accuracy@8"]       # doctest: +SKIP
    """
    import zoo

    return fit_digits(lambda: zoo.create("mrl_digits_cnn"), seed=seed)
