"""zoo hooks for concept-geometry: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="The Geometry of Concepts: Sparse Autoencoder Feature Structure", year=2024, arxiv="2410.19750",
              url="https://arxiv.org/abs/2410.19750", catalog=54)

CLAIM = ("SAE-scale concept geometry in the icl_toy token GPT: (1) task-difference parallelograms "
         "h(T1,x):h(T2,x)::h(T1,y):h(T2,y) at the query token become clearly better parallelograms on held-out query "
         "words after LDA removes distractor directions than raw or after a random projection of the same dimension; "
         "(2) clusters of co-occurring SAE features agree with clusters of their decoder directions (AMI) more than "
         "with shuffled directions; (3) the SAE decoder cloud's eigenvalues follow a power law whose slope is "
         "reported per layer (the paper: steepest in middle layers)")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="concept-crystals", function="zoo_concept_geometry.tool:crystals_tool", paper=PAPER,
                     inputs="one or more layers, each (n >= 4, D) points; quads= (Q, 4) analogy indices a:b::c:d with "
                            "relations= (Q,) and fit= (Q,) booleans (LDA fitted on those, measured on the rest), or "
                            "none: quadruples discovered among the class means (labels) or rows; k= (8) LDA dims",
                     outputs="layers: {name: {parallelogram_raw, parallelogram_lda, trapezoid_raw, trapezoid_lda, "
                             "n_quads, held_out, k}}; a histogram PNG with out_dir",
                     description="§3 crystals: parallelogram (1 - |u - v| / (|u| + |v|)) and trapezoid (cos) quality "
                                 "of analogy quadruples before and after projecting out distractor directions with "
                                 "LDA (cloud covariance over within-relation edge covariance)"),
            ToolSpec(name="concept-lobes", function="zoo_concept_geometry.tool:lobes_tool", paper=PAPER,
                     inputs="an SAE decoder (F, D) per layer with cooccurrence= (F, F) (e.g. phi), or activations "
                            "(N >= 10, D) / (N, T, D) on which an SAE is trained (each input one window); "
                            "n_clusters= (8), n_features=, l1=, steps=",
                     outputs="layers: {name: {ami, ami_shuffled, ami_shuffled_std, n_features, cooc_labels, "
                             "geom_labels}}",
                     description="§4 spatial modularity: adjusted mutual information between spectral clusters of "
                                 "feature co-occurrence and of decoder cosine similarity, vs shuffled positions"),
            ToolSpec(name="concept-galaxy", function="zoo_concept_geometry.tool:galaxy_tool", paper=PAPER,
                     inputs="one or more layers, each a point cloud (n >= 7, D >= 3): SAE decoder rows, or "
                            "activations with sae=True (an SAE is trained on them); lo=, hi= fit ranks",
                     outputs="layers: {name: {slope, r2, fit_ranks, clustering_entropy, eigenvalues}}, "
                             "steepest_layer; a log-log spectrum PNG with out_dir",
                     description="§5 galaxy: power-law slope of the covariance eigenvalues (log-log least squares) "
                                 "and clustering entropy (Gaussian minus kNN entropy per dimension) per layer")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="concept-geometry", claim=CLAIM, reproduce="zoo_concept_geometry.reproduce:REPRODUCTION",
                      task=None, paper=PAPER)]
