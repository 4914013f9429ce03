"""zoo hooks for FLOPs-regularised sparse embeddings: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Minimizing FLOPs to Learn Efficient Sparse Representations", year=2020, arxiv="2004.05665",
              code="https://github.com/biswajitsc/sparse-embed", catalog=22)

CLAIM = ("High-dimensional sparse embeddings trained with the FLOPs regulariser give a similar or better "
         "speed-vs-accuracy trade-off than L1-regularised sparse embeddings and dense low-dimensional (PCA) "
         "embeddings: on the task's wiki corpus no FLOPs-regularised operating point is beaten in nDCG@10 by more "
         "than 0.01 by a baseline point that costs no more multiplications per query (inverted index, measured)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="flops_sparse_embed", builder="zoo_flops_sparse_embed.model:flops_sparse_embed",
                  task="retrieval", paper=PAPER,
                  description="384-d sentence vectors -> Linear(1024) -> ReLU -> L2 norm, trained with in-batch "
                              "contrastive loss + FLOPs regulariser sum_j (mean_i |a_ij|)^2; inverted-index search",
                  weights={"wiki": WeightsSpec(
                      repo="zoo-models/flops-sparse-embed", recipe="zoo_flops_sparse_embed.train:wiki",
                      description="trained by zoo_flops_sparse_embed.train:wiki on the MiniLM sentence vectors of "
                                  "Wikipedia leads 2000-3999 (seed 0); the card lists nDCG@10 and measured FLOPs "
                                  "per query on the task's wiki corpus (leads 0-1999)")}),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="flops-sparse-embed", claim=CLAIM, reproduce="zoo_flops_sparse_embed.reproduce:REPRODUCTION",
                      task="retrieval", paper=PAPER)]
