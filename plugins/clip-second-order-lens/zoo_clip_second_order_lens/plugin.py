"""zoo hooks for clip-second-order-lens: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Interpreting the Second-Order Effects of Neurons in CLIP", year=2024, arxiv="2406.04341",
              url="https://arxiv.org/abs/2406.04341", code="https://github.com/yossigandelsman/second_order_lens",
              catalog=94)

CLAIM = ("The second-order effects of CLIP neurons (their flow through later attention heads to the image embedding) "
         "are selective (significant for a small fraction of images) and each is close to one direction of the joint "
         "space, unlike the image embedding itself; mean-ablating the neurons of largest second-order effect harms "
         "zero-shot accuracy more than ablating random neurons or those of largest first-order (direct) effect. "
         "Measured on a tiny CLIP-like ViT trained contrastively in code on digits and digit-name captions")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="tiny_clip_digits", builder="zoo_clip_second_order_lens.model:tiny_clip_digits",
                      task="digits_classify", paper=PAPER,
                      description="tiny CLIP-like model: pre-norm ViT on 8x8 digits (2x2 patches, 4 blocks of width "
                                  "64, 128 hookable MLP neurons each) and a 2-block text tower over digit-name "
                                  "captions, InfoNCE; forward gives zero-shot logits over the 10 digit names; "
                                  "trained=True loads the contrastively trained, cached model; hooking 'lens' "
                                  "records every neuron's second-order effect (N, 3*128, 32)")]


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="second-order-lens", function="zoo_clip_second_order_lens.tool:lens_tool", paper=PAPER,
                     inputs="one or more layers of second-order effects, each (N >= 10 images, neurons, D) or (N, D) "
                            "for one neuron, D >= 2 the joint embedding size; texts= (K, D) text embeddings and "
                            "words= (K names) for descriptions; energy= (0.9), atoms= (5), describe= (5)",
                     outputs="layers: {name: {mean_norm, selectivity, explained, explained_significant (per neuron), "
                             "median_selectivity, mean_explained, top_neurons: [{neuron, mean_norm, selectivity, "
                             "explained, texts, coefficients, residual}]}}; a histogram PNG with out_dir",
                     description="Gandelsman et al.'s second-order lens statistics: selectivity of each neuron's effect "
                                 "over images, its single-direction approximation, and a sparse (OMP) decomposition "
                                 "of that direction over text embeddings")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="clip-second-order-lens", claim=CLAIM,
                      reproduce="zoo_clip_second_order_lens.reproduce:REPRODUCTION", task=None, paper=PAPER)]
