"""zoo hooks for ssm-vs-transformer-propagation: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="A Comparative Analysis of Contextual Representation Flow in State-Space and Transformer "
                    "Architectures", year=2025, arxiv="2510.06640",
              url="https://arxiv.org/abs/2510.06640", catalog=64)

CLAIM = ("Transformers homogenize token representations early (and regain diversity late) while SSMs keep tokens "
         "distinct early and homogenize deeper; transformer oversmoothing is architectural (present at random init), "
         "SSM oversmoothing comes from training: a GPT and an S4D diagonal-SSM char-LM of equal shape (dim 64, depth "
         "6, parameters within 2%), at init and after the same 600 steps on char_lm, mean pairwise token cosine per block")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="token-homogenization", function="zoo_ssm_vs_transformer_propagation.tool:homogenization_tool",
                     paper=PAPER,
                     inputs="one or more layers with tokens kept, each (N >= 1, T >= 2, D), in depth order; layers= "
                            "chooses",
                     outputs="layers: {name: {homogenization}}, order; profile {hom_mean, hom_early, hom_deep, "
                             "hom_last, peak_depth, regain} with >= 2 layers; a PNG of the profile with out_dir",
                     description="mean pairwise cosine between distinct tokens of each sequence, averaged over "
                                 "sequences (1: all tokens alike), per layer: the oversmoothing profile over depth"),
            ToolSpec(name="layerwise-cka", function="zoo_ssm_vs_transformer_propagation.tool:cka_tool", paper=PAPER,
                     inputs="two or more layers of the same N inputs, each (N, D) or (N, T, D) (tokens are samples); "
                            "several models' layers under distinct names give the across-model block; max_rows= "
                            "(2000), seed=",
                     outputs="names, cka (L x L), adjacent (CKA of consecutive layers); a heatmap PNG with out_dir",
                     description="linear CKA (rep_metrics' linear_cka) between every pair of layers, within and "
                                 "across models")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="ssm-vs-transformer-propagation", claim=CLAIM,
                      reproduce="zoo_ssm_vs_transformer_propagation.reproduce:REPRODUCTION", task=None, paper=PAPER)]
