"""zoo hooks for function-vectors: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Function Vectors in Large Language Models", year=2024, arxiv="2310.15213",
              url="https://arxiv.org/abs/2310.15213", code="https://github.com/ericwtodd/function_vectors", catalog=3)
TASK = "icl_toy"

CLAIM = ("A few attention heads carry an in-context task: summing the task-mean outputs of the top-k heads by average "
         "indirect effect (causal mediation on shuffled-label prompts) gives a function vector that, added to the "
         "residual stream at an early-middle layer of zero-shot prompts, raises zero-shot accuracy far above no vector "
         "and above a vector of k random heads; the effect depends on the layer, and summed FVs partly compose tasks")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="function_vector", builder="zoo_function_vectors.model:function_vector", task=TASK, paper=PAPER,
                  description="function vectors on icl_toy's GPT: AIE scan of every head (mean clean output patched "
                              "into corrupted prompts), top-k heads' task means summed and added to the residual "
                              "stream at layer depth//3 of zero-shot prompts; CPU default k=4 of 16 heads, "
                              "preset='paper' for k=10, layer 9 (GPT-J)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="function-vectors", claim=CLAIM, reproduce="zoo_function_vectors.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
