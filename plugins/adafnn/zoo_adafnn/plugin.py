"""zoo hooks for AdaFNN: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Deep Learning for Functional Data Analysis with Adaptive Basis Layers", year=2021,
              arxiv="2106.10414", code="https://github.com/jwyyy/AdaFNN", catalog=11)

CLAIM = ("Learned, task-relevant bases beat pre-chosen ones: on operator_learn's scalar_on_function data (x(t) a sum "
         "of cosines with decaying variances, y driven by a low-variance high-frequency component) AdaFNN's test MSE "
         "is lower than FPCA top-K scores + MLP and than an MLP on the raw grid values, at matched parameters and "
         "equal steps")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="adafnn", builder="zoo_adafnn.model:adafnn", task="operator_learn", paper=PAPER,
                      description="AdaFNN (kind 'curve'): a Basis Layer of K micro networks b_k(t), scores "
                                  "int x b_k dt by the trapezoid rule on the observed grid, MLP head; sparsity and "
                                  "orthogonality penalties on the normalised bases; CPU default 4 bases of 2 x 32; "
                                  "preset='paper' for the authors' 3 x 64 bases and 3 x 128 head")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="adafnn", claim=CLAIM, reproduce="zoo_adafnn.reproduce:REPRODUCTION",
                      task="operator_learn", paper=PAPER)]
