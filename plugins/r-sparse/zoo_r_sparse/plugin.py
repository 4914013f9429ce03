"""zoo hooks for R-Sparse: the R-Sparse GPT and the 50%-sparsity claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="R-Sparse: Rank-Aware Activation Sparsity for Efficient LLM Inference", year=2025,
              arxiv="2504.19449", code="https://github.com/VITA-Group/R-Sparse", catalog=61)

TASK = "char_lm"
CLAIM = ("Training-free R-Sparse keeps performance at 50% sparsity: with every block linear layer of a trained "
         "LLaMA-like char_lm GPT at 50% sparsity, validation bits/char is at most 2% above dense and not above "
         "magnitude-only input sparsity at the same budget; CPU single-token speed of the sparse path is reported")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="rsparse_gpt", builder="zoo_r_sparse.model:rsparse_gpt", task=TASK, paper=PAPER,
                  description="char_lm reference GPT (RMSNorm, SwiGLU) whose q/k/v/out/gate/up/down layers are "
                              "R-Sparse linears: exact top channels by |x_j|*||W[:,j]|| + rank-r SVD for the rest "
                              "(sparsity 0.5, alpha 0.5); dense-equivalent until calibrate() sets the thresholds"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="r-sparse", claim=CLAIM, reproduce="zoo_r_sparse.reproduce:REPRODUCTION", task=TASK,
                      paper=PAPER, budget_s=180.0)]
