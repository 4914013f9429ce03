"""zoo hooks for FUNCATTN: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Functional Attention: attention as functional correspondence between adaptive bases for "
                    "operator learning", year=2025, url="https://github.com/xjffff/FUNCATTN",
              code="https://github.com/xjffff/FUNCATTN", catalog=7)

CLAIM = ("Functional attention matches the state of the art on PDE operator learning and is robust to the "
         "discretisation: on operator_learn's 1D Burgers trained at s=64, its relative L2 at s=64, 128 and 256 is "
         "within a fixed margin of the FNO's at matched parameters and equal steps, and its error at 256 is within a "
         "fixed margin of its error at 64")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="funcattn", builder="zoo_funcattn.model:funcattn", task="operator_learn", paper=PAPER,
                      description="FUNCATTN (kind 'points'): pointwise lifting, blocks of K adaptive softmax bases "
                                  "over the point set, quadrature-weighted projection onto them, a K x K "
                                  "functional map per head (regularised least squares) in place of softmax "
                                  "affinities, reconstruction at the points; CPU default 3 blocks, width 32, 4 "
                                  "heads, K=16; preset='paper' for 8 blocks, width 256, 8 heads, K=32")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="funcattn", claim=CLAIM, reproduce="zoo_funcattn.reproduce:REPRODUCTION",
                      task="operator_learn", paper=PAPER)]
