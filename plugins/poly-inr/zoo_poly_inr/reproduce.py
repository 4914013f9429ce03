"""``zoo reproduce poly-inr``: PE-free Poly-INR vs a ReLU MLP with Fourier-feature PE at equal parameters.

Poly-INR and the task's ``relu-ff`` and ``siren`` at its parameter count, fitted to 64x64 camera by
``image_fit.fit`` for the same full-batch Adam steps at their own ``default_lr``; a ReLU MLP without
any encoding, same size (Adam 1e-3), is the reference Poly-INR's multiplications should improve on.
"""
from __future__ import annotations

import torch
from torch import nn

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params, match_params
from zoo_task_image_fit import image_fit as task

from .plugin import CLAIM, TASK

IMAGE, SIZE, QUICK_SIZE, RELU_MLP_LR = "camera", 64, 16, 1e-3


def relu_mlp(hidden: int, layers: int = 3) -> nn.Sequential:
    """Reference row: coordinates straight into ``layers`` ReLU layers (no encoding, no multiplications)."""
    dims = [2] + [hidden] * layers
    body = [m for a, b in zip(dims[:-1], dims[1:], strict=True) for m in (nn.Linear(a, b), nn.ReLU())]
    return nn.Sequential(*body, nn.Linear(hidden, 1))


def row(*, seed: int, quick: bool, steps: int, model: str) -> dict[str, float]:
    """``model`` ("poly_inr", a task baseline, or "relu-mlp") at Poly-INR's parameter count, fitted and scored."""
    signal = task.make_signal(IMAGE, QUICK_SIZE if quick else SIZE)
    torch.manual_seed(seed)
    net = zoo.create("poly_inr")
    if model == "relu-mlp":
        torch.manual_seed(seed)
        net = match_params(relu_mlp, count_params(net))
    elif model != "poly_inr":
        net = task.build_baseline(model, params=count_params(net), data=signal, seed=seed)
    fig = task.fit(net, signal, steps=steps, lr=getattr(net, "default_lr", RELU_MLP_LR), seed=seed)
    return {"params": float(count_params(net)), **task.score(net, signal), "seconds_per_step": fig["seconds_per_step"],
            "steps_to_25db": task.steps_to_psnr(fig["losses"], 25.0, never=steps + 1)}


REPRODUCTION = Claim(
    plugin="poly-inr", claim=CLAIM, task=TASK, steps=1000, quick_steps=20, seeds=(0, 1, 2),
    rows=[Row("poly_inr (no PE)", row, {"model": "poly_inr"}), Row("relu-ff", row, {"model": "relu-ff"}),
          Row("siren", row, {"model": "siren"}), Row("relu-mlp (no PE)", row, {"model": "relu-mlp"})],
    checks=[Check("poly_inr (no PE)", "psnr_train", baseline="relu-ff")],
    settings={"relu_mlp_lr": RELU_MLP_LR},
    notes="margin 0: the claim is 'at least as well' (training PSNR >= ReLU+FF's); SIREN and the PE-free ReLU MLP are "
          "reported only; steps_to_25db is steps + 1 when 25 dB is never reached",
)
