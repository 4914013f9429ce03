"""zoo hooks for iterative-feature-merging: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Going Beyond Neural Network Feature Similarity: The Network Feature Complexity and Its "
                    "Interpretation Using Category Theory", year=2023, arxiv="2310.06756",
              url="https://arxiv.org/abs/2310.06756", catalog=109)

CLAIM = ("Functionally equivalent features are widespread and Iterative Feature Merging prunes data-agnostically "
         "without hurting performance: on trained digits MLPs, at the largest tolerance costing under 1 point of "
         "accuracy a substantial fraction (>= 10%) of hidden ReLU neurons merge, and the merged network is no worse "
         "than magnitude pruning at the same per-layer neuron counts")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="feature-merging", function="zoo_iterative_feature_merging.tool:feature_merging_tool",
                     paper=PAPER,
                     inputs="one or more layers, each (N, D) with the D FEATURES AS COLUMNS: a model's activations "
                            "over N inputs (features equivalent on the data), or a transposed weight matrix "
                            "[W_in | b_in].T of shape (d_in + 1, h) (data-agnostic: neuron j's incoming vector is "
                            "column j); tols= the tolerance grid, tol= the one reported in detail",
                     outputs="layers: {name: {features, zero, complexity {tol: features left}, tol, left, "
                             "merged_fraction, groups (kept feature -> merged features)}}; a complexity-vs-tolerance "
                             "PNG with out_dir",
                     description="Iterative Feature Merging: greedily merge features that are positive multiples of "
                                 "each other within tol (unit-direction distance); the feature complexity is the "
                                 "number left. Pruning a model: zoo_iterative_feature_merging.ifm.ifm_prune")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="iterative-feature-merging", claim=CLAIM,
                      reproduce="zoo_iterative_feature_merging.reproduce:REPRODUCTION", task=None, paper=PAPER)]
