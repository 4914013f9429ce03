"""Recipe of the pretrained tag ``poly_inr.camera`` (run by ``zoo train poly_inr.camera``)."""
from __future__ import annotations

import torch

import zoo
from zoo.tasks import image_fit as task

CAMERA_STEPS = 2000  # the catalog's image_fit budget for Poly-INR


def camera(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``poly_inr`` (default size) fitted to 64x64 camera: full-batch Adam, lr 1e-3, 2000 steps.

    Deterministic for a given seed on CPU. Returns the fitted model (eval mode) and the metrics
    measured here: PSNR/SSIM on the 64x64 training grid, PSNR on the 2x finer grid, steps.
    """
    torch.manual_seed(seed)
    model = zoo.create("poly_inr")
    signal = task.make_signal("camera", 64)
    fig = task.fit(model, signal, steps=CAMERA_STEPS, lr=model.default_lr, seed=seed)
    scores = task.score(model, signal)
    metrics = {"psnr_train": scores["psnr_train"], "psnr_test_2x": scores["psnr_test"],
               "ssim_train": scores["ssim_train"], "steps": float(fig["steps"])}
    return model.eval(), metrics
