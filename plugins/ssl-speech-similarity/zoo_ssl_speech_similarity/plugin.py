"""zoo hooks for ssl-speech-similarity: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

# El Kheir, Ali, Chowdhury (ICASSP 2024 workshop XAISA); identified from the abstract, arXiv id checked
PAPER = Paper(title="Speech Representation Analysis based on Inter- and Intra-Model Similarities", year=2024,
              arxiv="2406.16099", code="https://github.com/QCRIVoice/XSSL_speech", catalog=98)

CLAIM = ("Models trained alike from different seeds converge to similar representation subspaces (high layer-level "
         "CKA between matched layers) but not to similar neuron-localised concepts (neuron-wise max correlation "
         "clearly lower); a network and its random-init twin are not similar at the layer level")

INPUTS = ("{model: ActivationSet}, one ActivationSet with other= a second, or one set whose layers are named "
          "'model/layer'; a single plain set compares its own layers (intra-model); the same N >= 3 inputs "
          "everywhere, finite; layers= filters names, pairs='matched'|'all'")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [
        ToolSpec(name="neuron_alignment", function="zoo_ssl_speech_similarity.tool:neuron_alignment", paper=PAPER,
                 inputs=INPUTS + "; threshold= (0.9) for a 'matched' neuron",
                 outputs="pairs: {'ma:la|mb:lb': {maxcorr, maxcorr_xy, maxcorr_yx, median_xy, matched_xy, matched_yx, "
                         "dead_x, dead_y}}, maxcorr (mean), matched; a bar PNG with out_dir",
                 description="neuron-level similarity: for each neuron the largest |Pearson r| with any neuron of the "
                             "other layer, averaged (both directions)"),
        ToolSpec(name="layer_similarity", function="zoo_ssl_speech_similarity.tool:layer_similarity", paper=PAPER,
                 inputs=INPUTS + "; method= linear_cka | debiased_cka | rbf_cka | cca | svcca (k=) | rsa",
                 outputs="matrices: {'ma|mb': {rows, cols, matrix (layers x layers), diagonal}}, diagonal_mean; a "
                         "heatmap PNG per model pair with out_dir",
                 description="layer-level similarity: a CKA/CCA/RSA matrix of every layer against every layer"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="ssl-speech-similarity", claim=CLAIM,
                      reproduce="zoo_ssl_speech_similarity.reproduce:REPRODUCTION", task="rep_metrics", paper=PAPER)]
