"""zoo hooks for atlas: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Knowledge Composition using Task Vectors with Learned Anisotropic Scaling", year=2024,
              arxiv="2407.02880", url="https://arxiv.org/abs/2407.02880", catalog=15)
TASK = "task_merge"

CLAIM = ("Learned anisotropic scaling (one coefficient per task and parameter block, T x B = 8 x 5 = 40 numbers on the "
         "suite) interferes less than isotropic task arithmetic and works with scarce labels: on task_merge's 8-task digits "
         "suite, aTLAS trained on 10 labelled examples per class and task reaches a higher multi-task average "
         "accuracy than task arithmetic with one global lambda chosen on the full validation split")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="atlas", builder="zoo_atlas.model:atlas", task=TASK, paper=PAPER,
                  description="aTLAS merger: theta_0 + sum_t sum_b lambda_tb tau_t^(b) with one learned coefficient "
                              "per task and state-dict tensor, trained through torch.func.functional_call on few-shot "
                              "cross-entropy (objective='ce', evaluate with shots=K) or prediction entropy on "
                              "unlabelled data (objective='entropy')"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="atlas", claim=CLAIM, reproduce="zoo_atlas.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER)]
