"""zoo hooks for ideal-words: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Linear Spaces of Meanings: Compositional Structures in Vision-Language Models", year=2023,
              arxiv="2302.14383", url="https://arxiv.org/abs/2302.14383", catalog=38)

CLAIM = ("Simple linear algebra on embedding vectors gives compositional, interpretable control of classification, "
         "debiasing and retrieval: on the fc embedding of ShapesCNN encoders trained on synthetic colour x shape "
         "images, the centred-mean ideal words u0 + u_colour + u_shape rebuild the pair table far better than for a "
         "cell-shuffled table, predict a left-out pair's embedding (classifying its images) better than averaging "
         "its neighbours, and projecting out the colour words removes linear colour decoding while keeping shape")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="ideal-words", function="zoo_ideal_words.tool:ideal_words_tool", paper=PAPER,
                     inputs="an embedding table (|A|, |O|, D) as a 3-D layer without labels, or samples (N >= 8, D) "
                            "with labels (N, 2) = (attribute, object), a concept array (N, k >= 2), factors= naming "
                            "two concepts, or single labels with n_objects= (pair = label // n_objects, label % "
                            "n_objects); every pair needs samples; normalize= (True: unit vectors, as for CLIP)",
                     outputs="layers: {name: {r2, residual, mean_cosine, attribute_share, object_share, "
                             "interaction_share, principal_angles, min_angle, mean_cos2; from samples also pair_acc, "
                             "iw_acc, unseen_iw_acc, unseen_neighbour_acc, unseen_iw_cos, debias_attribute_before/"
                             "after_iw/after_random, debias_object_*, retrieval_iw_top1/image_top1/words_top1}}; a "
                             "PNG of cos(u, u0+ua+uo) per pair with out_dir",
                     description="Trager et al.'s ideal words (centred means u0 + u_a + u_o): reconstruction of the "
                                 "pair table, orthogonality of the attribute and object words, and their uses "
                                 "(composed-pair and left-out-pair classification, attribute removal, "
                                 "attribute-edit retrieval)")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="ideal-words", claim=CLAIM, reproduce="zoo_ideal_words.reproduce:REPRODUCTION",
                      task=None, paper=PAPER)]
