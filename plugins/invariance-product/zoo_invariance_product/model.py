"""Product of invariances for latent-space communication (Cannistraci, Moschella, Fumero, Maiorca and Rodolà,
"From Bricks to Bridges: Product of Invariances to Enhance Latent Space Communication", ICLR 2024, arXiv:2310.01211).

A relative projection (Moschella et al. 2023) represents a latent ``x`` by its similarities to a fixed set of anchors
``a_1..a_k`` encoded by the same network, ``T_d(x) = [d(x, a_1), ..., d(x, a_k)]``; the similarity ``d`` decides which
transformations of the latent space ``T_d`` ignores. Section 3 of the paper builds the product space
``M_1 x ... x M_N`` of the relative spaces induced by several similarities at once, so that a downstream module
trained on it need not know in advance which invariance links two latent spaces:

- ``cosine``: invariant to rotations, reflections and rescaling (angle-preserving maps);
- ``euclidean``: invariant to isometries (rotations, reflections, translations);
- ``l1`` and ``linf``: invariant to translations, coordinate permutations and per-axis sign flips.

Each subspace is normalised on its own before the aggregation (``norm``), so that no similarity dominates by its
scale; ``standardize`` (the default) centres and scales every sample's vector of anchor similarities, i.e. a LayerNorm
without its learnable gain and bias, which also makes the distance-based subspaces invariant to a global rescaling of
the latents. Aggregation (``aggregation``): ``concat`` (the default: the product space itself, ``(N, k * n_sims)``,
the catalog's contract) or ``sum`` (the normalised subspaces added, ``(N, k)``).

Which parts come from where: the similarity set (cosine, Euclidean, L1, L-inf) and the product of their relative
spaces come from the abstract, the authors' project page and the zoo catalog; the per-subspace LayerNorm followed by a
sum is what the authors' library ``latentis`` (``methods/bricks_to_bridges.py``: ``LinearSumAggregation``; a
LayerNorm -> Linear -> Tanh per subspace in ``NonLinearSumAggregation``) implements, read, not copied. The paper's
full text was not readable here. Deviations: the LayerNorm's gain and bias, the per-subspace Linear+Tanh and the
paper's self-attention aggregation are learned parts of the downstream module, which the ``task_merge`` stitching
protocol trains as its head, so the projection itself is parameter-free; distances enter negated (larger = closer;
``latentis`` keeps them positive: the sign changes nothing after standardisation but the orientation).

>>> import torch
>>> proj = InvarianceProduct()
>>> z, anchors = torch.randn(5, 8), torch.randn(3, 8)
>>> proj(z, anchors).shape  # 3 anchors x 4 similarities
torch.Size([5, 12])
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["AGGREGATIONS", "CPU", "NORMS", "PAPER", "SIMILARITIES", "InvarianceProduct", "invariance_product",
           "relative_projection"]

SIMILARITIES = ("cosine", "euclidean", "l1", "linf")
NORMS = ("standardize", "l2", "none")
AGGREGATIONS = ("concat", "sum")
# paper: all four similarities in the product; the number of anchors is the protocol's (the stitching mode's
# n_anchors), not the projection's, so both presets are the same projection
PAPER: dict[str, Any] = {"similarities": SIMILARITIES, "norm": "standardize", "aggregation": "concat"}
CPU: dict[str, Any] = dict(PAPER)
PRESETS = {"cpu": CPU, "paper": PAPER}
EPS = 1e-8


def relative_projection(latents: torch.Tensor, anchors: torch.Tensor, similarity: str) -> torch.Tensor:
    """``(N, D), (k, D) -> (N, k)``: each latent's similarity to each anchor under ``similarity``.

    Distances are returned negated, so that for every similarity a larger value means "closer".

    >>> z = torch.tensor([[1.0, 0.0], [0.0, 2.0]])
    >>> relative_projection(z, z, "cosine").tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    >>> relative_projection(z, z, "l1").tolist()
    [[-0.0, -3.0], [-3.0, -0.0]]
    """
    if similarity not in SIMILARITIES:
        raise ValueError(f"unknown similarity {similarity!r}; choose from {list(SIMILARITIES)}")
    if latents.dim() != 2 or anchors.dim() != 2 or latents.shape[1] != anchors.shape[1]:
        raise ValueError(f"relative_projection expects latents (N, D) and anchors (k, D) of the same D, got "
                         f"{tuple(latents.shape)} and {tuple(anchors.shape)}")
    if similarity == "cosine":
        return F.normalize(latents, dim=1, eps=EPS) @ F.normalize(anchors, dim=1, eps=EPS).T
    p = {"euclidean": 2.0, "l1": 1.0, "linf": float("inf")}[similarity]
    # no matrix-product shortcut for the Euclidean distance: it loses the exact translation invariance to rounding
    return -torch.cdist(latents, anchors, p=p, compute_mode="donot_use_mm_for_euclid_dist")


def _normalize(rel: torch.Tensor, norm: str) -> torch.Tensor:
    if norm == "standardize":  # per sample, across anchors: removes each subspace's offset and scale
        rel = rel - rel.mean(dim=1, keepdim=True)
        return rel / rel.pow(2).mean(dim=1, keepdim=True).add(EPS).sqrt()
    if norm == "l2":
        return F.normalize(rel, dim=1, eps=EPS)
    return rel


class InvarianceProduct(nn.Module):
    """Relative projections of latents onto anchors under several similarities, each normalised, then aggregated.

    Args:
        similarities: the subspaces of the product, a non-empty subset of ``SIMILARITIES`` (one similarity gives a
            single-invariance relative representation: ``("cosine",)`` is Moschella et al.'s, normalised).
        norm: per-subspace normalisation before aggregation, one of ``NORMS``.
        aggregation: ``"concat"`` (``(N, k * len(similarities))``) or ``"sum"`` (``(N, k)``).

    ``forward(latents (N, D), anchors (k, D)) -> (N, k * n_sims)``; ``project`` is the same call (the ``task_merge``
    stitching mode's contract). No parameters: the projection is fixed, only the head trained on it learns.
    """

    def __init__(self, similarities: Sequence[str] = CPU["similarities"], norm: str = CPU["norm"],
                 aggregation: str = CPU["aggregation"]) -> None:
        super().__init__()
        sims = tuple(similarities)
        bad = [s for s in sims if s not in SIMILARITIES]
        if not sims or bad or len(set(sims)) != len(sims):
            raise ValueError(f"similarities must be distinct names from {list(SIMILARITIES)}, got {list(sims)}")
        if norm not in NORMS:
            raise ValueError(f"unknown norm {norm!r}; choose from {list(NORMS)}")
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"unknown aggregation {aggregation!r}; choose from {list(AGGREGATIONS)}")
        self.similarities, self.norm, self.aggregation = sims, norm, aggregation

    def subspaces(self, latents: torch.Tensor, anchors: torch.Tensor) -> list[torch.Tensor]:
        """The normalised relative spaces, one ``(N, k)`` tensor per similarity."""
        return [_normalize(relative_projection(latents, anchors, s), self.norm) for s in self.similarities]

    def forward(self, latents: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
        parts = self.subspaces(latents, anchors)
        return torch.cat(parts, dim=1) if self.aggregation == "concat" else torch.stack(parts).sum(0)

    def project(self, latents: torch.Tensor, anchors: torch.Tensor) -> torch.Tensor:
        """``(N, D), (k, D) -> (N, d')``: the latents in the shared (relative, product) space."""
        return self(latents, anchors)

    def out_dim(self, n_anchors: int) -> int:
        return n_anchors * (len(self.similarities) if self.aggregation == "concat" else 1)

    def extra_repr(self) -> str:
        return f"similarities={self.similarities}, norm={self.norm!r}, aggregation={self.aggregation!r}"


def invariance_product(preset: str = "cpu", similarities: Sequence[str] | str | None = None, norm: str | None = None,
                       aggregation: str | None = None) -> InvarianceProduct:
    """The product-of-invariances projection; ``preset="paper"`` or ``"cpu"`` (the same: the projection has no
    size); the other arguments, when given, override the preset (``similarities`` may be one name)."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; choose from {list(PRESETS)}")
    given = {"similarities": similarities, "norm": norm, "aggregation": aggregation}
    args = {**PRESETS[preset], **{k: v for k, v in given.items() if v is not None}}
    if isinstance(args["similarities"], str):
        args["similarities"] = (args["similarities"],)
    return InvarianceProduct(**args)
