"""zoo hooks for stf-merge: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Superpose Task-specific Features for Model Merging", year=2025, arxiv="2502.10698", url="https://arxiv.org/abs/2502.10698",
              code="https://github.com/LARS-research/STF", catalog=46)
TASK = "task_merge"

CLAIM = ("Merging each linear layer of T fine-tuned models by solving a linear system that keeps every task's "
         "features (the singular directions of its task matrix) keeps multi-task capability better than existing "
         "merging methods: on task_merge's 8-task digits suite, STF's average accuracy is above task arithmetic's and "
         "TIES-merging's (both with their coefficient chosen on validation)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="stf", builder="zoo_stf_merge.model:stf", task=TASK, paper=PAPER,
                  description="STF merger: per nn.Linear, SVD of each task matrix M_t = W_t - W_0, merged "
                              "M = sum a_ti u_ti v_ti^T with a from the linear system u_ti^T M v_ti = s_ti (minimum-"
                              "norm least squares); other parameters averaged; training-free, parameter-free"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="stf-merge", claim=CLAIM, reproduce="zoo_stf_merge.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER)]
