"""zoo hooks for sae-neural-operator: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Sparse Autoencoder Neural Operators: Model Recovery in Function Spaces", year=2025,
              arxiv="2509.03738", catalog=45)

CLAIM = ("On functions that are sparse sums of planted smooth concepts at random positions, an SAE neural operator "
         "(Fourier integral operators as encoder and decoder) recovers the concepts better than a standard SAE of "
         "matched parameters in the same steps, a lifted SAE recovers them faster than the standard SAE, and the "
         "SAE-NO's codes at 2x resolution match its codes at the training resolution (the vector SAEs cannot run at 2x)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    # no task: the evaluation (planted-concept recovery) is bespoke, in zoo_sae_neural_operator.concepts
    return [
        ModelSpec(name="sae_vector", builder="zoo_sae_neural_operator.model:sae", task=None, paper=PAPER,
                  description="standard SAE on a function sampled at 64 points: linear encoder, ReLU or top-k codes "
                              "(B, K), linear decoder; (B, C, N) -> (codes, recon) at the training resolution only"),
        ModelSpec(name="sae_lifted", builder="zoo_sae_neural_operator.model:lifted_sae", task=None, paper=PAPER,
                  description="lifted SAE: pointwise linear lifting to 2 channels, the SAE on the lifted grid, "
                              "pointwise projection; (B, C, N) -> (codes (B, K), recon)"),
        ModelSpec(name="sae_no", builder="zoo_sae_neural_operator.model:sae_no", task=None, paper=PAPER,
                  description="SAE neural operator: lifting, a Fourier integral operator encoder to ReLU code "
                              "functions (B, K, N), a Fourier integral operator decoder, projection; any resolution"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="sae-neural-operator", claim=CLAIM, reproduce="zoo_sae_neural_operator.reproduce:REPRODUCTION",
                      task=None, paper=PAPER, budget_s=360.0)]
