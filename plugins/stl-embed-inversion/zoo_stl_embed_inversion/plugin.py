"""zoo hooks for stl-embed-inversion: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Bridging Logic and Learning: Decoding Temporal Logic Embeddings via Transformers", year=2025,
              arxiv="2507.07808", catalog=112)

CLAIM = ("A decoder-only Transformer conditioned on STL kernel embeddings writes syntactically valid formulae after one "
         "epoch, decodes held-out embeddings into formulae semantically closer to the gold ones (STL kernel) than "
         "retrieving the nearest training formula, and its decoded formulae are on average no longer than the gold")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="stl_embed_inversion", builder="zoo_stl_embed_inversion.model:stl_embed_inversion",
                      task="stl_logic", paper=PAPER,
                      description="decoder-only Transformer with the kernel embedding (128 anchors) as a prefix, "
                                  "trained to write the formula's prefix tokens; greedy, unconstrained decoding; CPU "
                                  "default 2 layers, width 64; preset='paper' for a larger decoder")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="stl-embed-inversion", claim=CLAIM, reproduce="zoo_stl_embed_inversion.reproduce:REPRODUCTION",
                      task="stl_logic", paper=PAPER)]
