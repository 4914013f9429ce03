"""zoo hooks for HDFE: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Decodable and Sample Invariant Continuous Object Encoder", year=2024, arxiv="2311.00187",
              code="https://github.com/dhyuan99/sample-invariant-point-cloud-encoder", catalog=4)

CLAIM = ("HDFE's encoding of a function does not depend on how the function is sampled and can be decoded: the codes "
         "of the same random 1D function sampled at 50 vs 500 points, and uniformly vs with a skewed density, have "
         "cosine similarity close to 1, clearly closer than the plain (unweighted) superposition of the same sample "
         "codes on skewed samples, and decoding recovers the function; an MLP on HDFE codes learns the "
         "antiderivative operator and keeps its error when the test sampling differs from training")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="hdfe", builder="zoo_hdfe.model:hdfe", task="vsa_bench", paper=PAPER,
                  description="training-free function encoder: fractional power codes of inputs and values bound "
                              "elementwise, superposed with the paper's sample-invariant weights (equal similarity "
                              "to every sample), decoded by unbinding a query position and matching a value "
                              "codebook; CPU default D=2048, preset='paper' D=4096"),
        ModelSpec(name="hdfe_operator", builder="zoo_hdfe.model:hdfe_operator", task="operator_learn", paper=PAPER,
                  description="points operator: an MLP maps the input function's HDFE code to the output "
                              "function's code, decoded (softly) at the query points; any number and placement "
                              "of samples; CPU default D=1024, MLP width 256"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="hdfe", claim=CLAIM, reproduce="zoo_hdfe.reproduce:REPRODUCTION", task="vsa_bench",
                      paper=PAPER)]
