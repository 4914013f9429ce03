"""Recipe for the pretrained tag: ``zoo train nutime.multiscale`` runs ``multiscale(seed=0)``."""
from __future__ import annotations

import torch

import zoo
from zoo.task import torch_threads

STEPS = 300  # the claim's budget (reproduce.STEPS), fixed here so the tag does not move with it


def multiscale(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``nutime`` (CPU default) pretrained by BYOL on ``ssl_probe``'s multi-scale series (raw values, amplitudes and
    offsets 1e-3..1e3; the model's ``ssl_defaults``: AdamW lr 2e-3, batch 128, cosine schedule) for ``STEPS`` steps,
    with its probe figures on the held-out series next to the raw-values baseline. Deterministic for a seed on one
    CPU thread.

    >>> model, metrics = multiscale(seed=0)  # a few minutes of CPU  # doctest: +SKIP
    """
    from zoo_task_ssl_probe import task

    with torch_threads(1):
        torch.manual_seed(seed)
        model = zoo.create("nutime")
        r = task.evaluate(model, mode="multiscale", steps=STEPS, seed=seed, baselines=["raw"], init_probe=False)
    keep = ("linear_probe_acc", "knn_acc", "fewshot_acc", "feature_std", "effective_rank", "final_ssl_loss",
            "pretrain_steps")
    out = {k: float(r.metrics[k]) for k in keep if k in r.metrics}
    out.update({f"raw_{k}": float(r.baselines["raw"][k]) for k in ("linear_probe_acc", "knn_acc")})
    return model.eval(), out
