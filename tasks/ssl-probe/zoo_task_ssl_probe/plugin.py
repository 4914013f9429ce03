"""zoo plugin of the task distribution: the spec of ssl_probe (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="ssl_probe",
        contract="encode(x) -> (N, D) features; ssl_loss(*views) -> scalar; ssl_views: int = 2 (2: two random "
                 "augmentations of one batch, 1: the clean batch, the model masks inside ssl_loss); optional "
                 "reconstruct(x) -> x_hat (recon_mse), ssl_defaults {optimizer, lr, weight_decay, momentum, batch}, "
                 "ssl_param_groups(), ssl_input 'image' | 'series', encoder (sizes the baselines). x: images "
                 "(N, 1, 28, 28) fashion_mnist / (N, 1, 8, 8) digits in [0, 1], series (N, L) ucr / multiscale (raw); "
                 "mode='pong': pong.py",
        evaluate="zoo_task_ssl_probe.task:evaluate",
        example_input="zoo_task_ssl_probe.task:example_input",
        check_output="zoo_task_ssl_probe.task:check_output",
        describe="zoo_task_ssl_probe.task:describe",
        baselines=("supervised", "random_init", "raw"),
        description="self-supervised pretraining (mode= fashion_mnist | digits | ucr | multiscale | pong), frozen "
                    "features scored by a linear probe, cosine kNN (k=20), 5-shot nearest centroid and collapse "
                    "indicators (feature_std, effective_rank); baselines: supervised reference encoder, the same "
                    "untrained, raw inputs",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
