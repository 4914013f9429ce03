"""Recipe of the pretrained tag ``int_siren.camera`` (run by ``zoo train int_siren.camera``)."""
from __future__ import annotations

import torch

from zoo_task_image_fit.image_fit import fit_recipe

CAMERA_STEPS = 1000  # the reproduction's step count


def camera(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``int_siren`` fitted to 64x64 camera by INT (its own ``fit``: top-residual pixels, Adam 1e-4 + cosine), 1000 steps."""
    return fit_recipe("int_siren", steps=CAMERA_STEPS, seed=seed)
