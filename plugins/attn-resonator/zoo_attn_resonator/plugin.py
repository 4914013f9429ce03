"""zoo hooks for attn-resonator: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Self-Attention Based Semantic Decomposition in Vector Symbolic Architectures", year=2024,
              arxiv="2403.13218", catalog=81)

CLAIM = ("The attention update x_f <- X_f softmax(beta X_f^T (s * prod_{g != f} x_g) / D) factorises bound bipolar "
         "composites (D=1024, F=3 codebooks of M in {16, 32, 64, 128}) with substantially higher accuracy than the "
         "classic resonator where the classic one starts to fail (M=32, 64) and converges in fewer sweeps where both "
         "solve the problems (M=16)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="attn_resonator", builder="zoo_attn_resonator.model:attn_resonator", task="vsa_bench",
                  paper=PAPER,
                  description="resonator network with softmax-attention (log-sum-exp Hopfield) cleanup of each factor; "
                              "no weights; beta=500 on dot/D scores (preset 'paper' = 'cpu'); preset 'normalized' "
                              "rescales states to the codeword norm (beta=10)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="attn-resonator", claim=CLAIM, reproduce="zoo_attn_resonator.reproduce:REPRODUCTION",
                      task="vsa_bench", paper=PAPER)]
