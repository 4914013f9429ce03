"""zoo hooks for FLOPs-regularised sparse embeddings: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Minimizing FLOPs to Learn Efficient Sparse Representations", year=2020, arxiv="2004.05665",
              code="https://github.com/biswajitsc/sparse-embed", catalog=22)

CLAIM = ("High-dimensional sparse embeddings trained with the FLOPs regulariser give a better speed-vs-accuracy "
         "trade-off than L1-regularised sparse embeddings, and one no worse than dense low-dimensional (PCA) "
         "embeddings: on the task's wiki corpus the FLOPs points lie above the L1 curve (nDCG@10 at equal "
         "multiplications per query, mean over the FLOPs weights), and no FLOPs point is beaten in nDCG@10 by more "
         "than 0.01 by a baseline point that costs no more multiplications per query (inverted index, measured)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="flops_sparse_embed", builder="zoo_flops_sparse_embed.model:flops_sparse_embed",
                  task="retrieval", paper=PAPER,
                  description="384-d sentence vectors -> Linear(1024) -> ReLU -> L2 norm, trained with in-batch "
                              "contrastive loss + FLOPs regulariser sum_j (mean_i |a_ij|)^2; inverted-index search",
                  weights={"wiki": WeightsSpec(
                      repo="zoo-models/flops-sparse-embed",
                      snapshot="zoo_flops_sparse_embed:weights/flops_sparse_embed.wiki",
                      files={"config.json": "fd8ef442b6a25b1c2969d0755f24bfe3871cac0f0158cdd73fba639f7d24362a",
                             "model.safetensors": "3412cba36dc5d551ed942cae273b0d39873f58d37d8dc1a38baa929081b7a550"},
                      recipe="zoo_flops_sparse_embed.train:wiki",
                      description="trained by zoo_flops_sparse_embed.train:wiki on the MiniLM sentence vectors of "
                                  "Wikipedia leads 2000-3999 (seed 0); the card lists nDCG@10 and measured FLOPs "
                                  "per query on the task's wiki corpus (leads 0-1999)")}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="flops-sparse-embed", claim=CLAIM, reproduce="zoo_flops_sparse_embed.reproduce:REPRODUCTION",
                      task="retrieval", paper=PAPER)]
