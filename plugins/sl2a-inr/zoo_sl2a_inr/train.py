"""Recipe of the pretrained tag ``sl2a_inr.camera`` (run by ``zoo train sl2a_inr.camera``)."""
from __future__ import annotations

import torch

from zoo_task_image_fit.image_fit import fit_recipe

CAMERA_STEPS = 500  # the reproduction's step count (the paper's image-fitting run length)


def camera(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``sl2a_inr`` (defaults) fitted to 64x64 camera: full-batch Adam 1e-3 decayed to 1e-4 over 500 steps.

    The same rule as ``zoo reproduce sl2a-inr`` and ``zoo.evaluate`` (``default_lr_decay``).
    """
    return fit_recipe("sl2a_inr", steps=CAMERA_STEPS, seed=seed)
