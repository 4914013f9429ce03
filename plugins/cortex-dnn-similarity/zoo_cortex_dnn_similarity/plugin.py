"""zoo hooks for cortex-dnn-similarity: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Comparison Against Task Driven Artificial Neural Networks Reveals Functional Properties in "
                    "Mouse Visual Cortex", year=2019, arxiv="1911.07986", url="https://arxiv.org/abs/1911.07986",
              catalog=83)

CLAIM = ("The similarity of similarity matrices between recordings and a network's layers, bootstrapped over "
         "stimulus and unit subsampling, recovers the layer that synthetic 'neurons' (noisy linear readouts of one "
         "layer of a trained digits CNN) read out, while pure-noise recordings show no preferred layer")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="similarity_of_similarity", function="zoo_cortex_dnn_similarity.tool:similarity_of_similarity",
                     paper=PAPER,
                     inputs="responses (N_stim, N_units): the set's layer named by responses= (default 'responses') or "
                            "an array; the layers to compare (N_stim, D_l), input side first; >= 4 stimuli per draw",
                     outputs="ssm per layer (all data), bootstrap mean and 95% interval, frequency of each layer being "
                             "best, best_layer, pseudo_depth (relative depth of the best layer) with its interval; a "
                             "PNG with out_dir",
                     description="RSA (similarity of similarity matrices) between recorded responses and each layer, "
                                 "bootstrapped over stimulus and unit subsampling, and the pseudo-depth")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="cortex-dnn-similarity", claim=CLAIM,
                      reproduce="zoo_cortex_dnn_similarity.reproduce:REPRODUCTION", task="digits_classify", paper=PAPER)]
