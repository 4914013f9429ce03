"""Recipe of the pretrained tag ``fresh_siren.camera`` (run by ``zoo train fresh_siren.camera``)."""
from __future__ import annotations

import torch

from zoo_task_image_fit.image_fit import fit_recipe

CAMERA_STEPS = 250  # the reproduction's step count per run


def camera(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``fresh_siren`` on 64x64 camera: FreSh picks omega_0, then full-batch Adam 1e-4 for 250 steps (deterministic).

    The metrics add the picked first-layer ``omega_0`` (kept in the weights as the ``w0_first`` buffer).
    """
    model, metrics = fit_recipe("fresh_siren", steps=CAMERA_STEPS, seed=seed)
    return model, {**metrics, "omega_0": float(model.w0_first)}
