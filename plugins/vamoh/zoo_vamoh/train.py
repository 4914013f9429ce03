"""Recipe of the pretrained tag ``vamoh_ff.digits`` (run by ``zoo train vamoh_ff.digits``)."""
from __future__ import annotations

import torch

import zoo
from zoo_task_image_fit import signal_set as task

DIGITS_STEPS = 2000  # the reproduction's step count
N_TRAIN, N_TEST = 1024, 256


def digits(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``vamoh_ff`` (defaults) trained on 1024 8x8 digits (split seed ``seed``) for 2000 steps.

    Deterministic for a given seed on CPU. Returns the model (eval mode) and the metrics measured
    here on the 256 held-out digits: reconstruction MSE/PSNR with every pixel observed, and the
    in-painting MSE on the missing pixels with a fixed random half of each image observed.
    """
    sset = task.load_set("digits", 8, n_train=N_TRAIN, n_test=N_TEST, seed=seed)
    torch.manual_seed(seed)
    model = zoo.create("vamoh_ff")
    fig = model.fit(sset, steps=DIGITS_STEPS, seed=seed)
    x = sset.test
    order = torch.rand(len(x), 64, generator=torch.Generator().manual_seed(seed + 100)).argsort(1)
    observed = torch.zeros(len(x), 64, dtype=torch.bool).scatter_(1, order[:, :32], True).view(-1, 8, 8)
    inpaint = model.reconstruct(x, observed).clamp(0, 1)
    missing = ~observed.unsqueeze(-1)
    metrics = {**task.score(model, sset), "inpaint_mse_test": float(((inpaint - x) ** 2)[missing].mean()),
               "steps": float(fig["steps"])}
    return model.eval(), metrics
