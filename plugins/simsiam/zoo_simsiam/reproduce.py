"""``zoo reproduce simsiam``: SimSiam with and without its stop-gradient against the ``ssl_probe`` baselines.

Each row pretrains one seeded model on ``ssl_probe``'s ``digits`` mode (1,347 unlabeled training images, two random
views per step: crop/resize, brightness/contrast, noise; ``task.evaluate(..., baselines=[])``) and scores its frozen
backbone features on the 450 test images: linear probe, cosine kNN (k = 20), 5-shot, ``feature_std`` and
``effective_rank``. The SimSiam rows also report ``output_std``: the paper's collapse measure (Sec. 4.1, Fig. 2
middle), the mean per-dimension std of the l2-normalised projector output z / ||z|| on the test images (about
1/sqrt(dim) = 0.0625 when healthy, 0 when collapsed). Both SimSiam rows use the paper's optimiser (SGD, lr 0.05 x
128/256, momentum 0.9, wd 1e-4, cosine, predictor at a fixed lr). The baseline rows are the task's ``supervised``
(labels, cross-entropy, the task's AdamW, the same steps and batch 128), ``random_init`` (the encoder untrained) and
``raw`` (pixels), the encoders sized to SimSiam's backbone (``task.build_baseline(params=count_params(encoder))``:
identical architecture, so exactly matched). Digits, not Fashion-MNIST: a Fashion-MNIST SimSiam row costs about 4
minutes of CPU (0.3-0.6 s per step at 28x28, 30 s of probes) and the claim's 15 rows would not fit 10 minutes.
"""
from __future__ import annotations

from typing import Any

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_ssl_probe import probe, task

from .plugin import CLAIM, TASK

MODE = "digits"
STEPS, QUICK_STEPS = 500, 4
BATCH = 128


def _simsiam(seed: int, **args: Any) -> torch.nn.Module:
    torch.manual_seed(seed)
    return zoo.create("simsiam_cnn", **args)


def simsiam_row(*, seed: int, quick: bool, steps: int, **args: Any) -> dict[str, float]:
    """SimSiam (``args`` go to the builder, e.g. ``stop_gradient=False``) pretrained and probed; plus ``output_std``."""
    model = _simsiam(seed, **args)
    r = task.evaluate(model, mode=MODE, steps=steps, seed=seed, baselines=[], init_probe=not quick)
    with torch.no_grad():
        z = model.project(task.load(MODE).x_test)
    return {**r.metrics, "output_std": probe.collapse(z)["feature_std"]}


def baseline_row(*, seed: int, quick: bool, steps: int, name: str) -> dict[str, float]:
    """The task's baseline ``name``, its encoder sized to SimSiam's backbone, under the same steps and batch."""
    size = count_params(_simsiam(seed).encoder)
    b = task.build_baseline(name, params=size, seed=seed, mode=MODE)
    r = task.evaluate(b, mode=MODE, steps=steps, seed=seed, baselines=[], batch=BATCH, baseline_params=None,
                      init_probe=not quick)
    out = dict(r.metrics)
    if name != "raw":
        out["params"] = float(count_params(b.encoder))
    return out


REPRODUCTION = Claim(
    plugin="simsiam", claim=CLAIM, task=TASK, steps=STEPS, quick_steps=QUICK_STEPS,
    seeds=(0, 1, 2), quick_seeds=(0, 1), task_options={"mode": MODE, "steps": STEPS, "batch": BATCH},
    rows=[Row("simsiam", simsiam_row, {}),
          Row("simsiam_no_stopgrad", simsiam_row, {"stop_gradient": False}),
          Row("supervised", baseline_row, {"name": "supervised"}),
          Row("random_init", baseline_row, {"name": "random_init"}),
          Row("raw", baseline_row, {"name": "raw"})],
    checks=[
        Check("simsiam", "knn_acc", baseline="random_init", margin=0.0),
        Check("simsiam", "knn_acc", baseline="simsiam_no_stopgrad", margin=0.02),
        Check("simsiam_no_stopgrad", "output_std", baseline="simsiam", margin=0.03, higher=False),
    ],
    notes="Margins fixed before the recorded run (after one seed-0 pilot at 300 steps: kNN SimSiam 0.958, without "
          "stop-gradient 0.916, untrained encoder 0.940; output_std was not piloted). (1) Meaningful representations: "
          "SimSiam's kNN accuracy above the same encoder untrained (margin 0). (2) and (3), the stop-gradient ablation "
          "of Sec. 4.1: without it kNN accuracy at least 2 points lower, and the std of the l2-normalised projector "
          "output at least 0.03 lower (about half the healthy 1/sqrt(256) = 0.0625; the paper's collapsed output has "
          "std 0). The paper's 'accuracy near chance' is not a check: at 500 steps the backbone of a collapsing model "
          "still carries its random-feature information (an untrained encoder has kNN 0.94 on digits).",
)
