"""Recipes for the pretrained tags (``zoo train fno_1d.burgers``, ``zoo train fno_2d.darcy``).

Each trains the FNO by the ``operator_learn`` task's own protocol (``task.evaluate``: Adam with weight decay 1e-4,
relative-L2 loss, cosine decay over the task's default steps, inputs standardised by the training inputs' mean and
standard deviation, targets divided by their RMS ``target_scale``), rounds the weights to float16 (the stored
precision) and measures the relative L2 error of the rounded model on the task's test split at the training grid
and at 2x. The model maps ``(a - input_mean) / input_std`` to ``u / target_scale`` (the card holds the three numbers).
"""
from __future__ import annotations

import torch

import zoo
from zoo_task_operator_learn import task

RECIPES = {
    "burgers": ("fno_1d", {"preset": "paper"}),  # modes 16, width 64, 4 layers: 1.1 MB in float16
    "darcy": ("fno_2d", {"preset": "cpu"}),      # modes 8, width 24, 4 layers: 1.2 MB in float16 (paper size: 4.7 MB)
}


def _recipe(problem: str, seed: int) -> tuple[torch.nn.Module, dict[str, float]]:
    name, kw = RECIPES[problem]
    torch.manual_seed(seed)
    model = zoo.create(name, weights_dtype="float16", **kw)
    fit = task.evaluate(model, problem=problem, seed=seed, baselines=[])
    model.load_state_dict(model.state_dict())  # the float16 round trip: score what is stored
    scored = task.evaluate(model, problem=problem, seed=seed, baselines=[], train_model=False)
    metrics = {"rel_l2": scored.metrics["rel_l2"], "rel_l2_2x": scored.metrics["rel_l2_2x"],
               "rel_l2_float32": fit.metrics["rel_l2"], "steps": float(fit.metrics["steps"]),
               "train_res": float(scored.config["train_res"]), "n_train": float(scored.config["n_train"]),
               # the scalings the model was trained with: it maps (a - input_mean) / input_std to u / target_scale
               "input_mean": float(scored.config["input_mean"][0]), "input_std": float(scored.config["input_std"][0]),
               "target_scale": float(scored.config["target_scale"][0])}
    return model.eval(), metrics


def burgers(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``fno_1d`` (paper size) trained on operator_learn Burgers at 64 points; rel L2 at 64 and 128 points.

    >>> model, metrics = burgers()  # about a minute of one CPU core  # doctest: +SKIP
    """
    return _recipe("burgers", seed)


def darcy(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``fno_2d`` (CPU size) trained on operator_learn Darcy at 32x32; rel L2 at 32x32 and 64x64.

    >>> model, metrics = darcy()  # a few minutes of one CPU core  # doctest: +SKIP
    """
    return _recipe("darcy", seed)
