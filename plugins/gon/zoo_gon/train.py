"""Recipe of the pretrained tag ``gon_implicit.digits`` (run by ``zoo train gon_implicit.digits``)."""
from __future__ import annotations

import torch

import zoo
from zoo_task_image_fit import signal_set as task

DIGITS_STEPS = 500  # the reproduction's step count


def digits(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``gon_implicit`` (defaults) trained on 512 16x16 digits (split seed ``seed``) for 500 steps.

    Minibatch Adam 1e-4, batch 64, the model's own ``fit``; deterministic for a given seed on CPU.
    Returns the model (eval mode) and the metrics measured here: reconstruction MSE/PSNR on (256 of)
    the training digits and on the 256 held-out digits (``signal_set_fit.score``), steps.

    >>> model, metrics = digits()                                   # doctest: +SKIP
    """
    sset = task.load_set("digits", 16, seed=seed)
    torch.manual_seed(seed)
    model = zoo.create("gon_implicit")
    fig = model.fit(sset, steps=DIGITS_STEPS, seed=seed)
    return model.eval(), {**task.score(model, sset), "steps": float(fig["steps"])}
