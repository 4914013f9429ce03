"""Recipe for the pretrained tag: ``zoo train simsiam_cnn.fashion_mnist`` runs ``fashion_mnist(seed=0)``."""
from __future__ import annotations

import torch

import zoo
from zoo.task import torch_threads

STEPS = 600  # fixed here so the tag does not move with the task's default


def fashion_mnist(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``simsiam_cnn`` pretrained by ``ssl_probe`` on its 10,000 unlabeled Fashion-MNIST images (the paper's SGD
    rule, batch 128) and its probe figures on the 10,000 test images. Deterministic for a seed on one CPU thread.

    >>> model, metrics = fashion_mnist(seed=0)  # several minutes of CPU  # doctest: +SKIP
    """
    from zoo_task_ssl_probe import task

    with torch_threads(1):
        torch.manual_seed(seed)
        model = zoo.create("simsiam_cnn")
        r = task.evaluate(model, mode="fashion_mnist", steps=STEPS, seed=seed, baselines=[], init_probe=False)
    keep = ("linear_probe_acc", "knn_acc", "fewshot_acc", "feature_std", "effective_rank", "final_ssl_loss",
            "pretrain_steps")
    return model, {k: float(r.metrics[k]) for k in keep}
