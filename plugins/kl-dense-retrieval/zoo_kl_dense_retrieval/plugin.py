"""zoo hooks for multivariate (Gaussian, negative-KL) dense retrieval: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, WeightsSpec, hookimpl

PAPER = Paper(title="Multivariate Representation Learning for Information Retrieval", year=2023, arxiv="2304.14522",
              catalog=10)

CLAIM = ("Queries and documents as diagonal Gaussians scored by -KL(q || d), searched by maximum inner product over "
         "an exact rewrite of -KL, beat a dot-product bi-encoder with index vectors of the same size trained "
         "identically (wiki leads, MiniLM sentence vectors, learned heads; nDCG@10 over 3 seeds), and the "
         "rewrite's inner product equals -KL")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="kl_dense_retrieval", builder="zoo_kl_dense_retrieval.model:kl_dense_retrieval",
                  task="retrieval", paper=PAPER,
                  description="mean and softplus-variance heads (k=63) over 384-d sentence vectors; score -KL(q||d); "
                              "search: faiss inner product over 128-value index vectors (exact rewrite of -KL)",
                  weights={"wiki": WeightsSpec(
                      repo="zoo-models/kl-dense-retrieval",
                      snapshot="zoo_kl_dense_retrieval:weights/kl_dense_retrieval.wiki",
                      files={"config.json": "78a0e95622d3a9c8b9e87a3a611a4265aa7415593455534a700be566a20fe3c9",
                             "model.safetensors": "4de19093118a47cd898712a7bd351e4388341e74473cd1d9804d94ea19e50104"},
                      recipe="zoo_kl_dense_retrieval.train:wiki",
                      description="trained by zoo_kl_dense_retrieval.train:wiki on the MiniLM sentence vectors of "
                                  "Wikipedia leads 2000-3999 (in-batch contrastive, seed 0); the card lists its "
                                  "metrics on the task's wiki corpus (leads 0-1999)")}),
        ModelSpec(name="dot_dense_retrieval", builder="zoo_kl_dense_retrieval.model:dot_dense_retrieval",
                  task="retrieval", paper=PAPER,
                  description="the paper's baseline at equal index size: a 128-d linear dot-product head over "
                              "384-d sentence vectors, trained the same way"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="kl-dense-retrieval", claim=CLAIM, reproduce="zoo_kl_dense_retrieval.reproduce:REPRODUCTION",
                      task="retrieval", paper=PAPER)]
