"""zoo hooks for pvr-influence: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Learning to Reason with Neural Networks: Generalization, Unseen Data and Boolean Measures",
              year=2022, arxiv="2205.13647", url="https://arxiv.org/abs/2205.13647", catalog=18)

CLAIM = ("Under canonical holdout (a feature frozen to +1 in training, tested on -1) the generalization error of GD "
         "is characterised by the Boolean influence of that feature: exactly for a linear model, and in rank for an MLP "
         "and a tiny Transformer across Boolean targets (dictators, parities, majorities, AND, a PVR function), where "
         "the error tracks 4 Inf_k, the error of the minimum-degree interpolator")

_XY = ("layers x: (N, n) inputs in {-1, +1} (or any values with binarize=True: sign about each feature's median) and "
       "y: (N,) or (N, m) outputs (unit= picks a column); names set by x=, y=")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="boolean-influence", function="zoo_pvr_influence.tool:influence_tool", paper=PAPER,
                     inputs=_XY,
                     outputs="influence: (n,) Inf_i per input bit; method: 'exact' (the whole cube), 'pairs' (rows "
                             "whose bit-i flip is present) or 'fourier' (least-squares Fourier fit up to degree=, "
                             "the low-degree influence); a bar chart PNG with out_dir",
                     description="Boolean influence of each input bit on an output (exact on the cube, else estimated)"),
            ToolSpec(name="noise-stability", function="zoo_pvr_influence.tool:stability_tool", paper=PAPER,
                     inputs=_XY + "; rho= (one value or a list)",
                     outputs="stability: {rho: Stab_rho}; degree_weights: Fourier weight per degree; method",
                     description="noise stability sum_S rho^|S| fhat(S)^2 from the Fourier weights of y over x"),
            ToolSpec(name="canonical-holdout", function="zoo_pvr_influence.tool:holdout_tool", paper=PAPER,
                     inputs=_XY.replace("(or any values with binarize=True: sign about each feature's median) ", "")
                     + " covering the whole cube; k= the frozen bit, model= linear | mlp | transformer",
                     outputs="test_mse (unseen half x_k = -1), train_mse, influence, prediction (4 Inf_k), "
                             "linear_prediction",
                     description="train a model on x_k = +1, test on x_k = -1, next to the Boolean-influence prediction")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="pvr-influence", claim=CLAIM, reproduce="zoo_pvr_influence.reproduce:REPRODUCTION",
                      task=None, paper=PAPER)]
