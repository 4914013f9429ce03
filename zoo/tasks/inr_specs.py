"""Specs of the inr family's tasks (torch-free; each task's code is its own module in zoo/tasks/)."""
from ..specs import TaskSpec

TASKS: list = [
    TaskSpec(
        name="image_fit",
        contract="model(coords: (N, d) in [-1, 1], d=2 (y, x) or 3 (t, y, x)) -> values (N, C) in [0, 1]; "
                 "optional model.fit(signal, *, steps, budget_s, seed, progress) -> dict",
        evaluate="zoo.tasks.image_fit:evaluate",
        example_input="zoo.tasks.image_fit:example_input",
        check_output="zoo.tasks.image_fit:check_output",
        baselines=("siren", "relu-ff"),
        description="fit one bundled scikit-image image (64x64 camera by default; modes fit/inpaint, or a "
                    "16-frame video) with Adam on MSE under a step/time budget; PSNR/SSIM on the training grid, "
                    "PSNR on the 2x finer grid or held-out pixels, params, seconds per step",
    ),
]
