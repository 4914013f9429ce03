"""zoo hooks for LIMIT (theoretical limits of single-vector retrieval): specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="On the Theoretical Limitations of Embedding-Based Retrieval", year=2025, arxiv="2508.21038", catalog=33)

CLAIM = ("The number of top-k subsets d-dimensional single vectors can return is bounded by d: with free query/doc "
         "embeddings optimised directly on the qrel matrix of all k=2 subsets of n docs, the critical n where 100% "
         "top-2 accuracy fails grows with d (the paper fits a cubic), and on a LIMIT-style set (queries 'who likes "
         "X?', every pair of 46 docs relevant to some query) single vectors of dimension d below the critical one "
         "fail where multi-vector MaxSim with token vectors of the same d does not")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [ModelSpec(name="limit_single_vector", builder="zoo_limit_embed_bound.model:single_vector",
                      task="retrieval", paper=PAPER, defaults={"in_dim": 64, "dim": 8},
                      description="a single-vector encoder of dimension `dim`: mean of the token vectors, a linear map "
                                  "to `dim`, L2-normalised (the kind of model LIMIT stress-tests); the free-embedding "
                                  "bound and the LIMIT-style generator live in zoo_limit_embed_bound.model/.data")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="limit-embed-bound", claim=CLAIM, reproduce="zoo_limit_embed_bound.reproduce:REPRODUCTION",
                      task="retrieval", paper=PAPER)]
