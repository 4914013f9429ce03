"""zoo hooks for CRISP (clustering inside multi-vector training): specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="CRISP: Clustering Multi-Vector Representations for Denoising and Pruning", year=2025,
              arxiv="2505.11471", catalog=88)

CLAIM = ("Training a multi-vector retriever with k-means clustering of its document token vectors inside the "
         "contrastive loss (CRISP) beats post-hoc k-means of a normally trained model at the same number of stored "
         "vectors (nDCG@10, at every size), and can beat the unpruned model with several times fewer vectors; "
         "retrieval multi-vector, Wikipedia leads as all-MiniLM-L6-v2 token vectors, a trained head over them")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="crisp_colbert", builder="zoo_crisp.model:crisp", task="retrieval", paper=PAPER,
                  defaults={"doc_clusters": 8, "query_clusters": 0},
                  description="tiny ColBERT-style encoder trained with per-document k-means (doc_clusters: a count, "
                              "or a fraction in (0, 1)) inside the MaxSim contrastive loss; the index stores centroids"),
        ModelSpec(name="colbert_posthoc_kmeans", builder="zoo_crisp.model:posthoc", task="retrieval", paper=PAPER,
                  defaults={"doc_clusters": 8, "query_clusters": 0},
                  description="the comparison: the same encoder trained on full token vectors, its document vectors "
                              "k-means clustered only at index time (doc_clusters=0: the unpruned model)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="crisp", claim=CLAIM, reproduce="zoo_crisp.reproduce:REPRODUCTION", task="retrieval",
                      paper=PAPER)]
