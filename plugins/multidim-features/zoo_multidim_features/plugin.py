"""zoo hooks for multidim-features: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Not All Language Model Features Are One-Dimensionally Linear", year=2024, arxiv="2405.14860",
              url="https://arxiv.org/abs/2405.14860", catalog=60)

CLAIM = ("Circular day/month features exist and are the unit of computation for modular arithmetic: in the icl_toy "
         "token GPT (trained on weekday +1/+2 mod 7 and month +1/+2 mod 12) the class means of the hidden state at the "
         "answer position lie on an ordered circle in their top-2 PCA plane (circularity above the permuted-label "
         "null), and rotating that state by one class step in the circle plane moves the prediction one day (month) "
         "on, far more often than the same rotation in a random plane")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="circle-fit", function="zoo_multidim_features.tool:circle_tool", paper=PAPER,
                     inputs="one or more layers, each (N, D), with integer cyclic labels 0..P-1 (weekday, month, ...; "
                            "every class present); period= (default max label + 1), layers= chooses",
                     outputs="layers: {name: {period, plane_variance, point_variance, aspect, circularity, winding, sign, "
                             "phase, step, radius_cv, angle_rmse, shuffled_circularity, angles}}; a PNG of the "
                             "top-2 plane with out_dir",
                     description="2-D PCA circle fit of the class means: variance in the plane and how well their "
                                 "angles follow k * 2 pi / P (best winding), against a permuted-label null"),
            ToolSpec(name="irreducibility", function="zoo_multidim_features.tool:irreducibility_tool", paper=PAPER,
                     inputs="one or more layers, each (N >= 10, D >= 2); labels optional (the plane is the top-2 PCA "
                            "plane of the class means with labels, of the points without); eps= (0.1), bins= (10)",
                     outputs="layers: {name: {separability, mixture, eps, plane_variance}}",
                     description="Engels et al. §3's separability index (min over rotations of the mutual information "
                                 "of the two coordinates) and epsilon-mixture index (largest share of points within "
                                 "eps of a line) of the layer's top-2 PCA projection"),
            ToolSpec(name="decoder-clusters", function="zoo_multidim_features.tool:clusters_tool", paper=PAPER,
                     inputs="one or more layers, each (N >= 2, D): N dictionary directions (an SAE decoder's rows); "
                            "n_clusters= (required), seed=",
                     outputs="layers: {name: {labels (N,), sizes, effective_dims (participation ratio per cluster)}}",
                     description="§4's discovery step: spectral clustering of dictionary directions by |cosine| "
                                 "similarity, candidates for multi-dimensional features")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="multidim-features", claim=CLAIM, reproduce="zoo_multidim_features.reproduce:REPRODUCTION",
                      task=None, paper=PAPER)]
