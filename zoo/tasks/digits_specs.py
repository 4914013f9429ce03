"""Spec of the ``digits_classify`` task (torch-free; the task itself is ``zoo.tasks.digits``)."""
from ..specs import TaskSpec

TASKS = [
    TaskSpec(
        name="digits_classify",
        contract="model(x: (B, 1, 8, 8) in [0, 1]) -> logits (B, 10) | {'logits': (B, 10) | {m: (B, 10)}}",
        evaluate="zoo.tasks.digits:evaluate",
        example_input="zoo.tasks.digits:example_input",
        check_output="zoo.tasks.digits:check_output",
        baselines=("mlp-ln-relu", "cnn-ln-relu", "vit-ln-gelu"),
        description="scikit-learn digits, fixed stratified 75/25 split, AdamW under a step/time budget; accuracy",
    ),
]
