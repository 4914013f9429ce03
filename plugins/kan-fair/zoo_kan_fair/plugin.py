"""zoo hooks for KANbeFair: the B-spline MLP, the KAN and MLP it is compared with, and the claim."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="KAN or MLP: A Fairer Comparison", year=2024, arxiv="2407.16674",
              code="https://github.com/yu-rp/KANbeFair", catalog=103)

CLAIM = ("At equal parameter count, MLP >= KAN except on symbolic formulas, where KAN's edge comes from its "
         "B-splines, and KAN forgets more in class-incremental learning. Measured (3 seeds): on digits_classify "
         "the MLP's mean test accuracy >= the KAN's; on formula_regress the KAN's geometric-mean relative RMSE "
         "< the MLP's, and the B-spline MLP's <= 1.1x the KAN's (matches or beats it); on class-incremental "
         "digits (5 two-class tasks) the KAN's forgetting (-backward transfer) > the MLP's")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="bspline_mlp", builder="zoo_kan_fair.model:bspline_mlp", task="formula_regress", paper=PAPER,
                  description="MLP whose activations are learnable B-splines, one per neuron (KANbeFair Sec. 5): "
                              "[Linear -> B-spline(G=5, k=3)] x 2 -> Linear(., 1)"),
        ModelSpec(name="bspline_mlp_digits", builder="zoo_kan_fair.model:bspline_mlp_digits", task="digits_classify",
                  paper=PAPER, description="B-spline MLP on flattened 8x8 digits: [Linear -> B-spline] x 2 -> Linear(., 10)"),
        ModelSpec(name="kan_digits", builder="zoo_kan_fair.model:kan_digits", task="digits_classify", paper=PAPER,
                  description="KAN([64, 10, 10]) with B-spline edges (G=5, k=3, SiLU shortcut) on flattened digits"),
        ModelSpec(name="gelu_mlp_digits", builder="zoo_kan_fair.model:mlp_digits", task="digits_classify", paper=PAPER,
                  description="the reference DigitsMLP without norm, with GELU (KANbeFair's MLP)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="kan-fair", claim=CLAIM, reproduce="zoo_kan_fair.reproduce:REPRODUCTION",
                      task="formula_regress", paper=PAPER, budget_s=180.0)]
