"""Recipe of the pretrained tag ``poly_inr.camera`` (run by ``zoo train poly_inr.camera``)."""
from __future__ import annotations

import torch

from zoo_task_image_fit.image_fit import fit_recipe

CAMERA_STEPS = 2000  # the catalog's image_fit budget for Poly-INR


def camera(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``poly_inr`` (default size) fitted to 64x64 camera: full-batch Adam, lr 1e-3, 2000 steps (deterministic)."""
    return fit_recipe("poly_inr", steps=CAMERA_STEPS, seed=seed)
