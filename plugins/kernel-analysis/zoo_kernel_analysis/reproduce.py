"""``zoo reproduce kernel-analysis``: does a trained network's representation give a lower kernel-analysis curve
than the raw pixels and than the same network untrained?

Per seed: a small digits CNN (``zoo_nn``'s ``DigitsCNN``, width 16, 4 conv blocks, global pooling) is trained with
the digits task's loop for ``STEPS`` steps; a second CNN of the same architecture keeps its (differently seeded)
initialisation. On ``N_PROBE`` held-out digit images (in a seeded order) the kernel-analysis curve (leave-one-out
error of a linear classifier on the top-d RBF kernel principal components, d = 1..``D_MAX``, the kernel width chosen
per d) is measured for the raw pixels (64 values), the untrained CNN's pooled features and the trained CNN's pooled
features (32 values each, the input of the linear head). The metric is the curve's area on the log-d axis
(``area``), and the errors at a few d.
"""
from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo_nn.backbones import DigitsCNN
from zoo_task_digits import task as digits

from .kernel import SCALES, kernel_analysis_curve
from .plugin import CLAIM

CNN = {"width": 16, "stages": 2}
LAYER = "features"  # the pooled features the linear head reads
STEPS, QUICK_STEPS = 300, 30
N_PROBE, QUICK_N_PROBE = 450, 120
D_MAX, QUICK_D_MAX = 100, 20
REPORT_D = (1, 2, 5, 10, 20, 50, 100)
AREA_MARGIN = 0.05


def _features(model: torch.nn.Module, x: torch.Tensor) -> np.ndarray:
    return zoo.activations(model, x, layers=[LAYER])[LAYER].astype(np.float64)


@cache
def _measure(seed: int, quick: bool) -> dict[str, dict[str, float]]:
    torch.manual_seed(seed)
    trained = DigitsCNN(**CNN)
    fit = digits.train(trained, steps=QUICK_STEPS if quick else STEPS, seed=seed)
    torch.manual_seed(seed + 10_000)
    untrained = DigitsCNN(**CNN)
    x, y = digits.probe_data(n=QUICK_N_PROBE if quick else N_PROBE, seed=seed)
    reps = {"pixels": x.flatten(1).double().numpy(), "random_cnn": _features(untrained, x),
            "trained_cnn": _features(trained, x)}
    d_max = QUICK_D_MAX if quick else D_MAX
    out: dict[str, dict[str, float]] = {}
    for name, feats in reps.items():
        res = kernel_analysis_curve(feats, y.numpy(), d_max=d_max)
        out[name] = {"area": res["area"], **{f"error@{d}": res["error"][d - 1] for d in REPORT_D if d <= d_max}}
    out["trained_cnn"]["cnn_accuracy"] = digits.accuracy(trained)["accuracy"]
    out["trained_cnn"]["final_train_loss"] = float(fit["final_train_loss"])
    return out


def representation_row(*, seed: int, quick: bool, which: str) -> dict[str, float]:
    """One representation's kernel-analysis figures on this seed's probe images."""
    return dict(_measure(seed, quick)[which])


SETTINGS: dict[str, Any] = {"cnn": dict(CNN), "layer": LAYER, "steps": STEPS, "probe_images": N_PROBE, "d_max": D_MAX,
                            "kernel": "RBF, centred", "scales_x_median_distance": list(SCALES),
                            "loss": "leave-one-out classification error"}

REPRODUCTION = Claim(
    plugin="kernel-analysis", claim=CLAIM, task="digits_classify", seeds=(0, 1, 2, 3, 4), quick_seeds=(0,),
    rows=[Row(name, representation_row, {"which": name}) for name in ("trained_cnn", "pixels", "random_cnn")],
    checks=[Check("trained_cnn", "area", baseline=base, margin=AREA_MARGIN, higher=False)
            for base in ("pixels", "random_cnn")],
    settings=SETTINGS,
    task_options={"steps": STEPS},
    notes=f"margins fixed before the recorded run, from one pilot seed (areas: trained 0.15, pixels 0.24, untrained "
          f"0.44): the trained CNN's area (mean leave-one-out error over log d, d = 1..{D_MAX}) is lower than the raw "
          f"pixels' and than the untrained CNN's by >= {AREA_MARGIN} each (5 points of error averaged over the whole "
          "curve, about a fifth of the pixels' area: a clear shift of the curve, not a tie). The untrained CNN (same "
          "architecture, its own initialisation) is the control that separates learning from architecture; the raw "
          "pixels are the paper's input-space baseline. The trained CNN's test accuracy is reported with it. The "
          "kernel width is chosen per d by leave-one-out for every representation alike.",
)
