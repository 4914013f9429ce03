"""zoo hooks for lambda-orthogonality regularisation: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, ModelSpec, Paper, hookimpl

PAPER = Paper(title="lambda-Orthogonality Regularization for Compatible Representation Learning", year=2025,
              arxiv="2509.16664", code="https://github.com/miccunifi/lambda_orthogonality", catalog=51)

CLAIM = ("An affine adapter from a new model's embedding space to an old one's, trained with lambda-orthogonality "
         "regularisation on a downstream distribution, makes new queries compatible with the old gallery (mAP) at "
         "least as well as a strictly orthogonal adapter while keeping the new model's own kNN retrieval within 1 point of "
         "its unadapted accuracy (digits: old = MLP, new = CNN; adapter fitted on classes 0-4)")


@hookimpl
def zoo_models() -> list[ModelSpec]:
    return [
        ModelSpec(name="lambda_orthogonal_adapter", builder="zoo_lambda_orthogonality.model:lambda_orthogonal_adapter",
                  task="retrieval", paper=PAPER,
                  description="T(x) = A x + b (64 -> 64, A initialised orthogonal), trained with an alignment "
                              "loss + lam * ||A^T A - I||_F^2 (lam = 1); queries: T(new embedding), "
                              "gallery: old embeddings as they are. mode='orthogonal' / lam=0 give the strict "
                              "orthogonal and free affine baselines"),
    ]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="lambda-orthogonality", claim=CLAIM,
                      reproduce="zoo_lambda_orthogonality.reproduce:REPRODUCTION", task="retrieval", paper=PAPER)]
