"""zoo plugin of the task distribution: the spec of tabular_ctr (torch-free; the code is in this package)."""
from __future__ import annotations

from zoo.hookspecs import hookimpl
from zoo.specs import TaskSpec

TASKS = [
    TaskSpec(
        name="tabular_ctr",
        contract="mode 'matrix': forward(model_ids (B,) long, question_feats (B, F)) -> logit (B,) that the model "
                 "answers the question; optional route(question_feats (Q, F)) -> (Q,), model_embeddings() -> (M, d), "
                 "fit(y (M, Q), x (Q, F)) (zoo_task_tabular_ctr.baselines.CorrectnessModel)",
        evaluate="zoo_task_tabular_ctr.task:evaluate",
        example_input="zoo_task_tabular_ctr.task:example_input",
        check_output="zoo_task_tabular_ctr.task:check_output",
        describe="zoo_task_tabular_ctr.task:describe",
        baselines=("best_single", "knn_router", "per_model_logreg", "matrix_factorization"),
        description="matrix mode: seeded synthetic correctness of 30 models (latent skills, 15 planted coding "
                    "specialists) on 2,000 questions (requirements, difficulty; features a noisy projection), split "
                    "over questions: held-out accuracy/AUC, routing accuracy vs best single model and oracle, probe "
                    "of the planted trait from model embeddings (table/CTR modes: issue 17)",
    ),
]


@hookimpl
def zoo_tasks() -> list[TaskSpec]:
    return list(TASKS)
