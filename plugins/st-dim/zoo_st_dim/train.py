"""Recipe for the pretrained tag: ``zoo train st_dim.pong`` runs ``pong(seed=0)``."""
from __future__ import annotations

import torch

import zoo
from zoo.task import torch_threads
from zoo_task_ssl_probe import pong as P

STEPS = 600  # the claim's budget (reproduce.STEPS), fixed here so the tag does not move with it


def pong(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``st_dim`` pretrained on ssl_probe's Pong frames (consecutive pairs, Adam lr 3e-4, batches of 64, ``STEPS``
    steps) and its probe metrics on the held-out episodes of the same seed (mean weighted F1 over ball x/y and the
    paddles' y). Deterministic for a given seed (seeded construction, seeded batches, one CPU thread).

    >>> model, metrics = pong(seed=0)  # about 2 minutes of CPU  # doctest: +SKIP
    """
    with torch_threads(1):
        torch.manual_seed(seed)
        model = zoo.create("st_dim")
        data = P.load(seed)
        fit = P.train(model, data, steps=STEPS, seed=seed, **{**P.TRAINING, **model.ssl_defaults})
        scores = P.score(model, data)
    keep = ("mean_f1", "mean_acc", *(f"f1_{v}" for v in P.VARIABLES), "feature_std", "effective_rank")
    return model, {**{k: scores[k] for k in keep}, "final_ssl_loss": fit["final_ssl_loss"],
                   "steps": fit["pretrain_steps"]}
