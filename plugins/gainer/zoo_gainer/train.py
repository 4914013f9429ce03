"""Recipe of the pretrained tag ``gainer.camera`` (run by ``zoo train gainer.camera``)."""
from __future__ import annotations

import torch

import zoo
from zoo.tasks import image_fit as task

CAMERA_STEPS = 2000


def camera(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``gainer`` (default size) fitted to 64x64 camera by its own rule (2000 full-batch Adam steps), baked.

    Returns the fitted model (eval mode, hash grid folded into the Gaussian embeddings, ready for
    ``edit``) and the metrics measured here: PSNR/SSIM on the 64x64 training grid, PSNR on the 2x grid.
    """
    torch.manual_seed(seed)
    model = zoo.create("gainer")
    signal = task.make_signal("camera", 64)
    fig = task.fit(model, signal, steps=CAMERA_STEPS, seed=seed)
    scores = task.score(model, signal)
    metrics = {"psnr_train": scores["psnr_train"], "psnr_test_2x": scores["psnr_test"],
               "ssim_train": scores["ssim_train"], "steps": float(fig["steps"])}
    return model.eval(), metrics
