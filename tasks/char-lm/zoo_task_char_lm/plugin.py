"""zoo plugin of the task distribution: the specs of char_lm (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS: list = [
    TaskSpec(
        name="char_lm",
        contract="model(ids: (B, T) long in [0, 97), T <= block_size) -> next-character logits (B, T, 97); "
                 "GPT-like models expose mlps() whose mlp.hidden hook gives the MLP activations",
        evaluate="zoo_task_char_lm.task:evaluate",
        example_input="zoo_task_char_lm.task:example_input",
        check_output="zoo_task_char_lm.task:check_output",
        describe="zoo_task_char_lm.task:describe",
        baselines=("gpt-ln-relu", "gpt-ln-gelu", "gpt-ln-swiglu", "gpt-rms-relu", "gpt-rms-gelu", "gpt-rms-swiglu"),
        description="character-level LM on a fixed list of CPython 3.11 stdlib source files (sha256 recorded), "
                    "every 10th 10k-char chunk held out; AdamW with warm-up + cosine for a step budget; "
                    "validation bits/char, per-layer MLP activation sparsity, seconds per step, next to the "
                    "reference GPT with LayerNorm/RMSNorm and ReLU/GELU/SwiGLU at equal parameters",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
