"""Recipe of the pretrained tag ``finr_tt.video`` (run by ``zoo train finr_tt.video``)."""
from __future__ import annotations

import torch

from zoo_task_image_fit.image_fit import fit_recipe, make_video_signal

VIDEO_STEPS = 3000  # finr_tt's step count in the reproduction before the claims harness (300 ticks x 10)


def video(seed: int = 0) -> tuple[torch.nn.Module, dict[str, float]]:
    """``finr_tt`` (3 axes, RGB, built for 16 x 32 x 32) fitted to the 16-frame 32x32 video in grid mode.

    Full-batch Adam 1e-3 decaying to 1e-4, 3000 steps, the lowest-loss parameters kept.
    """
    signal = make_video_signal()
    return fit_recipe("finr_tt", signal, steps=VIDEO_STEPS, seed=seed, in_features=3, out_features=3,
                      resolution=signal.shape[:3])
