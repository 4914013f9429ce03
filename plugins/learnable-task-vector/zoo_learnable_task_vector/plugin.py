"""zoo hooks for learnable-task-vector: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Learning Task Representations from In-Context Learning", year=2025, arxiv="2502.05390",
              url="https://arxiv.org/abs/2502.05390", catalog=71)
TASK = "icl_toy"

CLAIM = ("A task vector learned as a gradient-optimised weighted sum of mean attention-head outputs (one weight per "
         "head, one vector per layer) keeps task fidelity on in-context functional regression, where an FV-style mean "
         "of top heads fails, and triggers token tasks zero-shot; its effect comes with aligning the last hidden "
         "state of zero-shot prompts with that of in-context prompts")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="learnable_task_vector", builder="zoo_learnable_task_vector.model:learnable_task_vector",
                  task=TASK, paper=PAPER,
                  description="LTV on icl_toy's GPTs: per task, alpha (layers x heads, N(0,1) init) weights the mean "
                              "head outputs of clean prompts into one vector per layer, added to each layer's output "
                              "at the last position; alpha is fitted by Adam on the task loss of zero-shot and "
                              "corrupted prompts with the GPT frozen (n_tasks=4 for the regression GPT)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="learnable-task-vector", claim=CLAIM,
                      reproduce="zoo_learnable_task_vector.reproduce:REPRODUCTION", task=TASK, paper=PAPER)]
