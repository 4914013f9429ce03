"""zoo hooks for MINO: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Mesh-Informed Neural Operator: A Transformer Generative Approach", year=2025, arxiv="2506.16656",
              catalog=20)

CLAIM = ("MINO generates functions independently of the discretisation: its flow-matching velocity (GNO encoder to "
         "latent tokens, attention, cross-attention decoder) trained on functions at uniform random points samples "
         "on skewed random points of another size with covariance error and energy distance close to its "
         "in-distribution figures, and better than a point-agnostic MLP velocity at matched parameters")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="mino", builder="zoo_mino.model:mino", task="function_generate", paper=PAPER,
                      description="MINO velocity (radius-graph GNO encoder to 16 latent tokens, 2 self-attention "
                                  "blocks, cross-attention decoder to any query points) trained by OFM's functional "
                                  "flow matching from a GP reference; CPU default width 32; preset='paper' 64 tokens, "
                                  "width 128, 4 blocks")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="mino", claim=CLAIM, reproduce="zoo_mino.reproduce:REPRODUCTION", task="function_generate",
                      paper=PAPER)]
