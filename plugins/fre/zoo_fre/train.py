"""Recipes for the pretrained tags (run by ``zoo train fre.gridworld``)."""
from __future__ import annotations

import torch

import zoo
from zoo.task import torch_threads
from zoo_task_control_toy import task

from .reproduce import STEPS


def gridworld(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``fre`` (CPU defaults) pretrained on control_toy's seeded offline gridworld data for the claim's 3,000 steps,
    with its zero-shot normalised returns (64 new reward functions per family, 32 labelled samples each).

    >>> model, metrics = gridworld(seed=0)  # about 2 minutes of CPU  # doctest: +SKIP
    """
    with torch_threads(1):
        torch.manual_seed(seed)
        model = zoo.create("fre")
        res = task.evaluate(model, mode="gridworld", steps=STEPS, seed=seed, baselines=[], train_model=True)
    keep = ("return", "return_goal", "return_linear", "return_mlp", "final_vae_loss")
    return model.eval(), {k: float(res.metrics[k]) for k in keep} | {"steps": float(STEPS)}
