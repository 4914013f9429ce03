"""``zoo reproduce crate-mae``: CRATE-MAE against the ViT masked autoencoder of the same configuration on digits.

Each model row builds one seeded model (CPU default: 8x8 digits, patch 2 -> 16 tokens, d 32, 3 encoder + 3 decoder
layers, 4 heads, 75% masking) and runs ``ssl_probe``'s own protocol on ``mode="digits"``
(``task.evaluate(..., baselines=[])``): masked-autoencoder pretraining on the clean training images with the model's
``ssl_defaults`` (AdamW, lr 1e-3, weight decay 0.05, batch 128, cosine schedule) for ``STEPS`` steps, then the task's
probes on the frozen features (mean patch token of the unmasked image) and ``recon_mse`` on the test split (a seeded
75% mask, visible patches kept, the error averaged over all pixels). ``mae_vit`` is the same pipeline with ViT
blocks; ``param_ratio`` is CRATE-MAE's trainable parameter count over ``mae_vit``'s at that configuration, exact.
The task's baselines (``supervised``, ``random_init``: its reference CNN sized to CRATE-MAE's parameter count;
``raw`` pixels) are trained and scored by the task's ``run_model`` for the same steps and batch.
"""
from __future__ import annotations

import math
from typing import Any

import torch

from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_ssl_probe import task
from zoo_task_ssl_probe.train import settings

from .model import CPU, PAPER, MaskedAutoencoder, crate_mae, mae_vit, param_count
from .plugin import CLAIM, TASK

MODE = "digits"
STEPS = 400
QUICK_STEPS = 20
BUILDERS = {"crate_mae": crate_mae, "mae_vit": mae_vit}


def build(model: str, seed: int) -> MaskedAutoencoder:
    torch.manual_seed(seed)
    return BUILDERS[model]()


def model_row(*, seed: int, quick: bool, model: str) -> dict[str, float]:
    """One masked autoencoder pretrained and probed on digits (the task's metrics plus ``log_recon_mse``)."""
    net = build(model, seed)
    res = task.evaluate(net, mode=MODE, steps=QUICK_STEPS if quick else STEPS, seed=seed, baselines=[],
                        init_probe=True)
    m = dict(res.metrics)
    m["log_recon_mse"] = math.log(m["recon_mse"])
    if model == "crate_mae":
        m["param_ratio"] = count_params(net) / count_params(mae_vit())
        base = PAPER["base"]  # the paper's sizes: CRATE-MAE-Base against the official ViT-MAE-Base (8 decoder layers)
        m["param_ratio_paper_base"] = param_count("crate", **base) / param_count("vit", **{**base, "decoder_depth": 8})
    return m


def baseline_row(*, seed: int, quick: bool, name: str) -> dict[str, float]:
    """A task baseline sized to CRATE-MAE's parameter count, trained and scored like the model rows."""
    split = task.load(MODE)
    size = count_params(build("crate_mae", seed))
    b = task.build_baseline(name, params=size, seed=seed, mode=MODE, n_classes=split.n_classes)
    opts = settings(None, batch=MaskedAutoencoder.ssl_defaults["batch"])
    m = task.run_model(b, split, mode=MODE, steps=QUICK_STEPS if quick else STEPS, seed=seed, init_probe=False,
                       **opts)
    if name != "raw":
        m["params"] = float(count_params(b.encoder))
    return m


ROWS = [Row(name, model_row, {"model": name}) for name in BUILDERS] + [
    Row(name, baseline_row, {"name": name}) for name in ("supervised", "random_init", "raw")]

CHECKS = [
    Check("crate_mae", "param_ratio", margin=0.35, higher=False),
    Check("crate_mae", "linear_probe_acc", baseline="mae_vit", margin=-0.03),
    Check("crate_mae", "log_recon_mse", baseline="mae_vit", margin=-math.log(1.25), higher=False),
]

SETTINGS: dict[str, Any] = {"mode": MODE, "steps": STEPS, "quick_steps": QUICK_STEPS, "config": CPU,
                            "ssl_defaults": MaskedAutoencoder.ssl_defaults, "features": "mean patch token",
                            "baseline_size": "task reference CNN matched to count_params(crate_mae)"}

REPRODUCTION = Claim(
    plugin="crate-mae", claim=CLAIM, task=TASK, seeds=(0, 1, 2), quick_seeds=(0,), rows=ROWS, checks=CHECKS,
    settings=SETTINGS, task_options={"mode": MODE},
    notes="margins fixed before any run: (1) parameter ratio CRATE-MAE / ViT-MAE at the same configuration <= 0.35 "
          "('about 30%'; exact, no seed dependence; param_ratio_paper_base reports the paper's Base sizes against "
          "the official ViT-MAE-Base); (2) 'comparable' linear-probe accuracy: CRATE-MAE at most 3 points below "
          "ViT-MAE (paired over 3 seeds); (3) comparable masked reconstruction: CRATE-MAE's recon_mse at most 25% "
          "above ViT-MAE's (log scale, margin log 1.25). Both models train for the same steps with the same "
          "optimiser, batch and masks; the task's baselines are reported, not checked (the paper compares with "
          "ViT-MAE only).",
)
