"""zoo hooks for the scale-vector study: the strategy GPT and the claim (specs only, no torch)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Negligible in Size, Significant in Effect: On Scale Vectors in Large Language Models", year=2026,
              arxiv="2605.26895", catalog=79)

TASK = "char_lm"
CLAIM = ("In a small pre-norm char_lm GPT: removing scale vectors degrades validation loss; weight decay "
         "helps Input-Norm scales and hurts Output-Norm (QK-norm) scales; the unified strategy (branch-specific "
         "scales, scales on both sides of each branch's linear map, magnitude-direction reparameterisation, decay on "
         "Input-Norm scales only) reaches a lower loss than the best standard baseline")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="svn_gpt", builder="zoo_scale_vector_norm.model:svn_gpt", task=TASK, paper=PAPER,
                  description="char_lm reference GPT (RMSNorm, SwiGLU, QK-norm) with a scale-vector strategy: "
                              "'unified' (default), 'standard', 'none', 'standard_wd_in', 'standard_wd_out', 'branch'"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="scale-vector-norm", claim=CLAIM, reproduce="zoo_scale_vector_norm.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER, budget_s=180.0)]
