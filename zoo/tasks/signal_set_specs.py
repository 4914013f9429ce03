"""Specs of the signal_set tasks (torch-free; each task's code is its own module in zoo/tasks/)."""
from ..specs import TaskSpec

TASKS: list = [
    TaskSpec(
        name="signal_set_fit",
        contract="model(images: (B, H, W, C) in [0, 1]) -> reconstructions (B, H, W, C) (encode then decode); "
                 "for evaluate: model.fit(signal_set, *, steps, seed, progress) -> dict and "
                 "model.reconstruct(images) -> images; optional model.sample(n)",
        evaluate="zoo.tasks.signal_set:evaluate",
        example_input="zoo.tasks.signal_set:example_input",
        check_output="zoo.tasks.signal_set:check_output",
        baselines=("ae", "ae-2x"),
        description="learn a space of small real images (sklearn digits resized to 16x16, or the 100 "
                    "lfw_subset faces), fixed seeded train/held-out split; reconstruction MSE/PSNR on the "
                    "training and held-out members next to MLP autoencoders with 1x and 2x the parameters",
    ),
]
