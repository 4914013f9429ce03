"""zoo hooks for FAME: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="FAME: Adaptive Functional Attention with Expert Routing for Function-on-Function Regression",
              year=2025, arxiv="2510.00621", catalog=8)

CLAIM = ("FAME (a bidirectional neural CDE with mixture-of-experts vector fields, its two hidden paths fused by "
         "multi-head cross-attention) regresses a function on an irregularly sampled function more accurately than "
         "an MLP on the curve interpolated to a fixed grid at matched parameters, and its error grows less when the "
         "test curves are sampled with a different (skewed) distribution of times than in training")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="fame", builder="zoo_fame.model:fame", task="operator_learn", paper=PAPER,
                  description="samples model for function-on-function regression: linear control path through the "
                              "irregular samples [t, x(t)], forward and backward neural CDEs (fixed-step RK4) with "
                              "soft-gated MoE vector fields, cross-attention between the two hidden paths, MLP "
                              "readout at the query times; CPU default H=32, 4 experts, 16 steps"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="fame", claim=CLAIM, reproduce="zoo_fame.reproduce:REPRODUCTION", task="operator_learn",
                      paper=PAPER)]
