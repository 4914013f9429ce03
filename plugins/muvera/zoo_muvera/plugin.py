"""zoo hooks for MUVERA: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="MUVERA: Multi-Vector Retrieval via Fixed Dimensional Encodings", year=2024,
              arxiv="2405.19504", code="https://github.com/google/graph-mining/tree/main/sketching/point_cloud",
              catalog=44)

CLAIM = ("FDE retrieval (MIPS on fixed dimensional encodings, then exact Chamfer rerank) reaches recall 0.9 of "
         "the exact Chamfer nearest neighbour with 2-5x fewer candidates than the single-vector heuristic "
         "(union of each query token's nearest doc tokens); retrieval multi-vector, real token vectors: 2000 "
         "Wikipedia leads and 1000 descriptions as all-MiniLM-L6-v2 tokens, d=384")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="muvera_fde", builder="zoo_muvera.model:muvera", task="retrieval", paper=PAPER,
                  description="asymmetric FDEs (R_reps=20 SimHash repetitions, k_sim=5, d_proj=16: 10240-d), faiss "
                              "IndexFlatIP over doc FDEs, exact MaxSim rerank of the top 100; parameter-free "
                              "(random matrices are buffers)"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="muvera", claim=CLAIM, reproduce="zoo_muvera.reproduce:REPRODUCTION", task="retrieval",
                      paper=PAPER)]
