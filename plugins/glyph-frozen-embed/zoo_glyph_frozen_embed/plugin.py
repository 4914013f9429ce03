"""zoo hooks for glyph-frozen-embed: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Emergent Semantics Beyond Token Embeddings: Transformer LMs with Frozen Visual Unicode "
                    "Representations", year=2025, arxiv="2507.04886", code="https://github.com/AVBochkov/Embeddings",
              catalog=104)

TASK = "char_lm"
CLAIM = ("A Transformer LM whose token embeddings are frozen, non-semantic vectors computed from rendered Unicode "
         "glyphs trains as well as the architecturally identical model with trainable embeddings: on char_lm (CPython "
         "stdlib source), a char GPT on frozen glyph embeddings reaches a validation bits/char no worse than the same "
         "GPT with a trainable table by more than the task's measured seed spread, at equal architecture, steps and "
         "batches (frozen Gaussian embeddings of the same norm reported as the no-glyph control)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(
        name="glyph_gpt", builder="zoo_glyph_frozen_embed.model:glyph_gpt", task=TASK, paper=PAPER,
        weights={"stdlib": WeightsSpec(
            repo="zoo-models/glyph-gpt-stdlib", recipe="zoo_glyph_frozen_embed.train:stdlib",
            snapshot="zoo_glyph_frozen_embed:weights/glyph_gpt.stdlib",
            files={"config.json": "967b9a33c02a72fd38d509e5ed705956ff2c2b7b204a51c62b8c7aeef01c0224",
                   "model.safetensors": "38decdfd90cbe829d833d971e07918f63359a180064967179bf6c18a6180cf7a"},
            description="trained by zoo_glyph_frozen_embed.train:stdlib (seed 0): glyph_gpt (CPU preset: dim 64, depth "
                        "2, frozen 16x16 glyph table) for 1,200 AdamW steps (lr 1e-2) on char_lm's training split; "
                        "shipped in the package (float32 safetensors); `zoo train glyph_gpt.stdlib --out DIR` "
                        "rebuilds it in a few minutes")},
        description="char GPT (zoo_nn.gpt blocks) whose 97-symbol token table is frozen: Pillow bitmap-font glyphs "
                    "(16x16) -> PCA to d_model -> unit rows, requires_grad=False; embedding='random' for frozen "
                    "Gaussian rows, 'trainable' for the GPT's own table; CPU default dim 64, depth 2; preset='paper' "
                    "for d_model 1024, 16 layers, 32 heads")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="glyph-frozen-embed", claim=CLAIM, reproduce="zoo_glyph_frozen_embed.reproduce:REPRODUCTION",
                      task=TASK, paper=PAPER)]
