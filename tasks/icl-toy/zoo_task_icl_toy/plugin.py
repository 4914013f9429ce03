"""zoo plugin of the task distribution: the spec of icl_toy (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="icl_toy",
        contract="an intervention on a frozen GPT: model.fit(gpt, data: ICLData) -> dict, then "
                 "model(gpt, inputs (B, T) ids or (B, T, 6) vectors, task (B,) indices) -> the GPT's output (B, T, vocab) "
                 "or (B, T, 1) with the intervention applied (zoo_task_icl_toy.interventions.TaskVectorModel)",
        evaluate="zoo_task_icl_toy.task:evaluate",
        example_input="zoo_task_icl_toy.task:example_input",
        check_output="zoo_task_icl_toy.task:check_output",
        describe="zoo_task_icl_toy.task:describe",
        baselines=("none", "random_heads", "mean_heads"),
        description="tiny GPTs trained in code and cached: one on eight token tasks (three word bijections, a word "
                    "shift, weekday +1/+2, month +1/+2) shown as x -> y demonstrations, one on in-context linear "
                    "regression (Garg et al. 2022, d=4, 20 shots), with per-head and residual hook points; an "
                    "intervention is fitted on clean/corrupted/zero-shot prompts and scored on zero-shot prompts "
                    "(accuracy or MSE, per task); baselines no vector, random heads and a mean of top heads; the "
                    "GPT's own k-shot accuracy and per-layer logit-lens decodability are reported",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
