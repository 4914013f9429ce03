"""Recipe for the pretrained tag: ``zoo train crate_mae.fashion_mnist`` runs ``fashion_mnist(seed=0)``."""
from __future__ import annotations

import torch

import zoo
from zoo.task import torch_threads

STEPS = 600  # fixed here so the tag does not move with the task's default
FASHION = {"img_size": 28, "patch": 4}  # 7 x 7 patches of 4 x 4; every other setting is the CPU default


def fashion_mnist(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``crate_mae`` (28 x 28 inputs, patch 4) pretrained by ``ssl_probe`` on its 10,000 unlabeled Fashion-MNIST
    training images with the model's ``ssl_defaults`` (AdamW, batch 128, cosine schedule, 75% masking) for ``STEPS``
    steps, and its probe figures and masked reconstruction error on the 10,000 test images. Deterministic for a seed
    on one CPU thread.

    >>> model, metrics = fashion_mnist(seed=0)  # several minutes of CPU  # doctest: +SKIP
    """
    from zoo_task_ssl_probe import task

    with torch_threads(1):
        torch.manual_seed(seed)
        model = zoo.create("crate_mae", **FASHION)
        r = task.evaluate(model, mode="fashion_mnist", steps=STEPS, seed=seed, baselines=["raw"], init_probe=False)
    keep = ("linear_probe_acc", "knn_acc", "fewshot_acc", "feature_std", "effective_rank", "recon_mse",
            "final_ssl_loss", "pretrain_steps")
    out = {k: float(r.metrics[k]) for k in keep if k in r.metrics}
    out.update({f"raw_{k}": float(r.baselines["raw"][k]) for k in ("linear_probe_acc", "knn_acc")})
    return model.eval(), out
