"""zoo hooks for Poincaré embeddings: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Poincaré Embeddings for Learning Hierarchical Representations", year=2017,
              arxiv="1705.08039", code="https://github.com/facebookresearch/poincare-embeddings", catalog=50)

CLAIM = ("On a hierarchy's transitive closure, Poincaré embeddings reconstruct the hierarchy better than "
         "Euclidean embeddings trained with the same loss at low dimension: lower mean rank and higher MAP "
         "at d = 2, 5 and 10 (graph_embed reconstruction protocol, WordNet mammal closure)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="poincare_embed", builder="zoo_poincare_embed.model:poincare_embed", task="graph_embed",
                  paper=PAPER, description="embeddings in the Poincaré ball trained by Riemannian SGD on the "
                                           "negative-sampling loss of Eq. (6); d=10 by default"),
        ModelSpec(name="euclidean_embed", builder="zoo_poincare_embed.model:euclidean_embed", task="graph_embed",
                  paper=PAPER, description="the paper's Euclidean baseline: same loss with squared Euclidean "
                                           "distance, plain SGD, same initialisation and schedule"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="poincare-embed", claim=CLAIM, reproduce="zoo_poincare_embed.reproduce:REPRODUCTION",
                      task="graph_embed", paper=PAPER)]
