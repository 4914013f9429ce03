"""zoo hooks for diffumatch: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="DiffuMatch: Category-Agnostic Spectral Diffusion Priors for Robust Non-rigid Shape Matching",
              year=2025, arxiv="2507.23715", code="https://github.com/daidedou/diffumatch/", catalog=25)

CLAIM = ("A score-based prior over functional maps, trained on ground-truth maps of some shape categories and "
         "distilled into the map regulariser, gives lower zero-shot matching error on held-out categories than the "
         "axiomatic regulariser (Laplacian commutativity + orthogonality, weights tuned on the training categories)")

_TASK = "shape_match"


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="diffumatch_prior", builder="zoo_diffumatch.model:diffumatch_prior", task=_TASK, paper=PAPER,
                  description="DiT denoiser over |C| (k=30) trained by denoising score matching (VP loss); its score "
                              "distillation (SDS) term is the functional-map regulariser"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="diffumatch", claim=CLAIM, reproduce="zoo_diffumatch.reproduce:REPRODUCTION",
                      task=_TASK, paper=PAPER)]
