"""zoo hooks for ReLU² Wins: the ReLU² and ReGLU GPTs and the sparsity claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="ReLU² Wins: Discovering Efficient Activation Functions for Sparse LLMs", year=2024,
              arxiv="2402.03804", catalog=93)

TASK = "char_lm"
CLAIM = ("ReLU² gives the highest activation sparsity at equal loss: among ReLU, SwiGLU, ReGLU and ReLU² FFNs in the "
         "same GPT trained the same way on char_lm, ReLU² has the highest PPL-1% sparsity (share of neurons whose "
         "output magnitude is under the CETT threshold, at the largest CETT keeping perplexity within 1% of dense); "
         "predictivity and hardware affinity are reported at that point")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="relu2_gpt", builder="zoo_relu2_sparsity.model:relu2_gpt", task=TASK, paper=PAPER,
                  description="char_lm reference GPT (RMSNorm) with a ReLU² FFN, down(relu(up(x))^2)"),
        ModelSpec(name="reglu_gpt", builder="zoo_relu2_sparsity.model:reglu_gpt", task=TASK, paper=PAPER,
                  description="char_lm reference GPT (RMSNorm) with a ReGLU FFN at 2/3 hidden width (equal "
                              "parameters); one of the paper's four compared activations"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="relu2-sparsity", claim=CLAIM, reproduce="zoo_relu2_sparsity.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER, budget_s=180.0)]
