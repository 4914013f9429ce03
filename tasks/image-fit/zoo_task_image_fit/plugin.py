"""zoo plugin of the task distribution: the specs of image_fit and signal_set_fit (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS: list = [
    TaskSpec(
        name="image_fit",
        contract="model(coords: (N, d) in [-1, 1], d=2 (y, x) or 3 (t, y, x)) -> values (N, C) in [0, 1]; "
                 "optional model.fit(signal, *, steps, budget_s, seed, progress) -> dict",
        evaluate="zoo_task_image_fit.image_fit:evaluate",
        example_input="zoo_task_image_fit.image_fit:example_input",
        check_output="zoo_task_image_fit.image_fit:check_output",
        describe="zoo_task_image_fit.image_fit:describe",
        baselines=("siren", "relu-ff"),
        description="fit one bundled scikit-image image (64x64 camera by default, gray= for colour ones; "
                    "modes fit, inpaint, superres (fit at half resolution, score at full) and 1d (one image row), or a "
                    "16-frame video) with Adam on MSE under a step/time budget; PSNR/SSIM on the training grid, "
                    "PSNR on the 2x finer grid or held-out pixels, params, seconds per step; mode dataset (digits "
                    "or lfw faces) runs signal_set_fit's protocol on a set of images (evaluate delegates to it)",
    ),
    TaskSpec(
        name="signal_set_fit",
        contract="model(images: (B, H, W, C) in [0, 1]) -> reconstructions (B, H, W, C) (encode then decode); "
                 "for evaluate: model.fit(signal_set, *, steps, seed, progress) -> dict and "
                 "model.reconstruct(images) -> images; optional model.sample(n)",
        evaluate="zoo_task_image_fit.signal_set:evaluate",
        example_input="zoo_task_image_fit.signal_set:example_input",
        check_output="zoo_task_image_fit.signal_set:check_output",
        describe="zoo_task_image_fit.signal_set:describe",
        baselines=("ae", "ae-2x"),
        description="learn a space of small real images (sklearn digits resized to 16x16, or the 100 "
                    "lfw_subset faces), fixed seeded train/held-out split; reconstruction MSE/PSNR on the "
                    "training and held-out members next to MLP autoencoders with 1x and 2x the parameters",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
