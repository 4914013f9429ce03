"""Recipe of the pretrained tag ``gainer.camera`` (run by ``zoo train gainer.camera``)."""
from __future__ import annotations

import torch

from zoo_task_image_fit.image_fit import fit_recipe

CAMERA_STEPS = 2000


def camera(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``gainer`` (default size) fitted to 64x64 camera by its own rule (2000 full-batch Adam steps).

    The model comes back in eval mode, hash grid folded into the Gaussian embeddings, ready for ``edit``.
    """
    return fit_recipe("gainer", steps=CAMERA_STEPS, seed=seed)
