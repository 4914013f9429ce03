"""Recipe of the pretrained tag ``sbpe_triangle.camera`` (run by ``zoo train sbpe_triangle.camera``)."""
from __future__ import annotations

import torch

from zoo_task_image_fit.image_fit import fit_recipe

CAMERA_STEPS = 500  # the reproduction's 2-D step count


def camera(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``sbpe_triangle`` (sigma 0.06) fitted to 64x64 camera: full-batch Adam, lr 1e-3, 500 steps (deterministic)."""
    return fit_recipe("sbpe_triangle", steps=CAMERA_STEPS, seed=seed)
