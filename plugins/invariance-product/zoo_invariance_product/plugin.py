"""zoo hooks for invariance-product: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="From Bricks to Bridges: Product of Invariances to Enhance Latent Space Communication", year=2024,
              arxiv="2310.01211", catalog=102)
TASK = "task_merge"

CLAIM = ("Without knowing which transformation links two latent spaces, the product of relative projections under "
         "cosine, Euclidean, L1 and L-inf similarities stitches encoders zero-shot at least as well as the best single "
         "invariance in every setting, and clearly better than cosine-only relative representations where cosine is "
         "not the right invariance (latent spaces shifted by a translation or an isometry); its A/B latent similarity "
         "is reported next to cosine's")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="invariance_product", builder="zoo_invariance_product.model:invariance_product", task=TASK,
                  paper=PAPER,
                  description="relative projections of latents onto anchors under cosine, Euclidean, L1 and L-inf "
                              "similarities, each standardised per sample, concatenated into the product space: "
                              "project(latents (N, D), anchors (k, D)) -> (N, 4k); task_merge mode 'stitching'; "
                              "similarities=('cosine',) is the single-invariance relative representation"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="invariance-product", claim=CLAIM, reproduce="zoo_invariance_product.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
