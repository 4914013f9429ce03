"""zoo hooks for transformer-no: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Continuum Attention for Neural Operators", year=2024, arxiv="2406.06486", catalog=19)

TASK = "operator_learn"

CLAIM = ("A transformer neural operator (attention as the quadrature of an integral operator, pointwise lifting and "
         "projection) learns the Burgers operator with error competitive with an FNO of matched parameters under "
         "the same step budget, and its error is consistent across resolutions (trained at 64 points, tested "
         "zero-shot at 128)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="transformer_no_1d", builder="zoo_transformer_no.model:transformer_no_1d", task=TASK,
                  paper=PAPER,
                  description="transformer neural operator on points (kind 'points'): pointwise lifting of values "
                              "and coordinates, pre-norm blocks of quadrature-weighted attention (log cell-length "
                              "weights added to the logits) and pointwise MLPs, pointwise projection; CPU default "
                              "width 32, 4 heads, 2 blocks; preset='paper' for a larger setting"),
        ModelSpec(name="transformer_no_2d", builder="zoo_transformer_no.model:transformer_no_2d", task=TASK,
                  paper=PAPER,
                  description="patched transformer neural operator on 2D grids (kind 'grid'): 4x4 patch functions, "
                              "attention scores as L2 inner products over the patch, values as patch functions, "
                              "a spectral convolution on each patch; any grid divisible by the patch count"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="transformer-no", claim=CLAIM, reproduce="zoo_transformer_no.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER, budget_s=360.0)]
