"""zoo hooks for clustering-based token pooling: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="Reducing the Footprint of Multi-Vector Retrieval with Minimal Performance Impact via Token "
                    "Pooling", year=2024, arxiv="2409.14683", code="https://github.com/AnswerDotAI/RAGatouille",
              catalog=80)

CLAIM = ("Pooling each document's token vectors by hierarchical (Ward) clustering at pool factor 2 keeps nDCG@10 "
         "within a few percent of unpooled exact MaxSim while halving the vectors stored, and pool factors 3-4 "
         "lose < 5%; retrieval multi-vector, Wikipedia leads encoded by all-MiniLM-L6-v2 token vectors")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="token_pool_ward", builder="zoo_colbert_token_pool.model:token_pool", task="retrieval",
                  paper=PAPER, defaults={"pool_factor": 2},
                  description="index-time Ward clustering of each document's token vectors into n // pool_factor "
                              "mean-pooled, renormalised vectors (first token kept); exact MaxSim search"),
        ModelSpec(name="token_prune_random", builder="zoo_colbert_token_pool.model:token_prune", task="retrieval",
                  paper=PAPER, defaults={"pool_factor": 2},
                  description="the paper's comparison: keep a random n // pool_factor of each document's token "
                              "vectors (first token kept); exact MaxSim search"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="colbert-token-pool", claim=CLAIM, reproduce="zoo_colbert_token_pool.reproduce:REPRODUCTION",
                      task="retrieval", paper=PAPER)]
