"""zoo hooks for MrBERT: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="MrBERT: Modern Multilingual Encoders via Vocabulary, Domain, and Dimensional Adaptation",
              year=2026, arxiv="2602.21379", code="https://huggingface.co/BSC-LT/MrBERT", catalog=100)

CLAIM = ("Matryoshka training gives flexible vector sizes with little quality loss: a tiny ModernBERT trained on the "
         "embedding_quality wiki (description, lead) pairs with the MRL contrastive loss keeps much more of its "
         "description -> lead recall@1 when truncated to 8 or 16 of its 64 dimensions than the same encoder trained "
         "with the plain contrastive loss and truncated, and is no worse at full size (TF-IDF and the frozen MiniLM "
         "reported only)")

# the released checkpoints (Hugging Face, BSC-LT): ModernBertForMaskedLM safetensors + config.json + tokenizer.json
OFFICIAL_REPOS = ("BSC-LT/MrBERT", "BSC-LT/MrBERT-es", "BSC-LT/MrBERT-ca", "BSC-LT/MrBERT-legal", "BSC-LT/MrBERT-science")


def _weights() -> dict[str, WeightsSpec]:
    return {
        "wiki": WeightsSpec(
            repo="zoo-models/mrbert-wiki", recipe="zoo_mrbert.train:wiki",
            description="trained by zoo_mrbert.train:wiki (seed 0): CPU defaults (64 wide, 3 layers, nesting 8-64), "
                        "300 MRL contrastive steps on the (description, lead) pairs of the 8,878 training wiki "
                        "articles; not shipped in the package; `OMP_NUM_THREADS=1 zoo train mrbert.wiki --out DIR` "
                        "rebuilds it in about a minute of one core"),
        "official": WeightsSpec(
            repo="zoo-models/mrbert-308m", source="official", converter="zoo_mrbert.hub:from_official",
            description="converted from the authors' release (Hugging Face BSC-LT/MrBERT, 308M; also -es, -ca (150M), "
                        "-legal, -science): "
                        "`zoo convert mrbert.official DIR/model.safetensors --to OUT` with config.json beside it maps "
                        "the ModernBERT names onto this module (the MLM head is dropped); tested offline on "
                        "checkpoints written with the same names, not on a download"),
    }


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="mrbert", builder="zoo_mrbert.model:mrbert", task="embedding_quality", paper=PAPER,
                      weights=_weights(),
                      description="ModernBERT encoder (RoPE, GeGLU, bias-free pre-LayerNorm, local/global attention, "
                                  "final norm) with a Matryoshka mean-pooled embedding; CPU default 64 wide, 3 layers, "
                                  "nesting (8, 16, 32, 64); preset='paper' for the released 768-wide, 22-layer shape")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="mrbert", claim=CLAIM, reproduce="zoo_mrbert.reproduce:REPRODUCTION",
                      task="embedding_quality", paper=PAPER)]
