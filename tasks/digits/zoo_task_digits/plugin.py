"""zoo plugin of the task distribution: the specs of digits_classify (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="digits_classify",
        contract="model(x: (B, 1, 8, 8) in [0, 1]) -> logits (B, 10) | {'logits': (B, 10) | {m: (B, 10)}}",
        evaluate="zoo_task_digits.task:evaluate",
        example_input="zoo_task_digits.task:example_input",
        check_output="zoo_task_digits.task:check_output",
        describe="zoo_task_digits.task:describe",
        probe_data="zoo_task_digits.task:probe_data",
        baselines=("mlp-ln-relu", "cnn-ln-relu", "vit-ln-gelu"),
        description="scikit-learn digits (fixed stratified 75/25 split) or Fashion-MNIST at 8x8 (dataset=), AdamW "
                    "under a step/time budget, baselines at the model's parameter count; accuracy",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
