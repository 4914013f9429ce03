"""zoo hooks for task-vector-bases: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Task Vector Bases: A Unified and Scalable Framework for Compressed Task Arithmetic", year=2025,
              arxiv="2502.01015", code="https://github.com/uiuctml/TaskVectorBasis", catalog=107)
TASK = "task_merge"

CLAIM = ("Compressing the T = 8 task vectors of the digits merging suite into M = 2 or 4 basis atoms (the paper's "
         "softmax-encoder Gram autoencoder) keeps task arithmetic: merged accuracy close to full task arithmetic at "
         "M/T of its storage, above heuristic bases of the same size (PCA, M randomly kept task vectors), and task "
         "negation that still drops the target task while keeping the control")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="task_vector_bases", builder="zoo_task_vector_bases.model:task_vector_bases", task=TASK,
                  paper=PAPER,
                  description="task vector basis: M atoms, each a softmax-weighted (convex) combination of the T task "
                              "vectors, with linear coefficients, learned by an autoencoder on the task vectors' Gram "
                              "matrix; merge = base + lambda * sum of atoms, negate = base - lambda * reconstruction; "
                              "method='pca' / 'random_sample' for heuristic bases; M=2 by default"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="task-vector-bases", claim=CLAIM, reproduce="zoo_task_vector_bases.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
