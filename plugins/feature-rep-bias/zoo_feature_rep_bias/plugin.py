"""zoo hooks for feature-rep-bias: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Learned feature representations are biased by complexity, learning order, position, and more",
              year=2024, arxiv="2405.05847", url="https://arxiv.org/abs/2405.05847", catalog=89)

CLAIM = ("An MLP trained to output a linear feature and a 4-bit XOR feature of random binary inputs, both to about "
         "100% accuracy, devotes a much larger share of its last hidden layer's variance to the linear feature; with "
         "two equally simple features there is no such gap")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="feature_variance_explained", function="zoo_feature_rep_bias.variance:feature_variance_explained",
                     paper=PAPER,
                     inputs="(N, D) activations per layer (N >= 3) and features: concepts (N,) or (N, k) (features= "
                            "chooses), or labels (one-hot classes) when there are none",
                     outputs="per layer: share[feature] (R^2 of regressing all units on the feature: its share of the "
                             "layer's variance) and pca (top components' variance share and each feature's R^2); "
                             "a bar chart with out_dir",
                     description="share of representation variance explained by each feature, per layer (regression "
                                 "R^2 and the PCA view)")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="feature-rep-bias", claim=CLAIM, reproduce="zoo_feature_rep_bias.reproduce:REPRODUCTION",
                      paper=PAPER)]
