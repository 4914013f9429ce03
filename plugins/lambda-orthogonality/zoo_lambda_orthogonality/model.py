"""An affine adapter from a new model's embedding space to an old one's, with lambda-orthogonality.

Ricci, Biondi, Pernici, Patras, Del Bimbo, "lambda-Orthogonality Regularization for Compatible
Representation Learning" (arXiv 2509.16664, 2025). After a model update, the new model's
embeddings are mapped into the old model's space by T(x) = A x + b, so new queries can search the
old gallery without re-indexing it (backward compatibility). A free affine T adapts best to the
data it is fitted on but can distort the new representation; an orthogonal A preserves it (an
isometry keeps every distance and kNN ranking) but adapts little. lambda-orthogonality relaxes the
orthogonality constraint while learning T:

    L = L_align(T(phi_new(x)), phi_old(x)) + lam * || A^T A - I ||_F^2

with lam trading adaptation (lam = 0: free affine) against preservation (lam -> inf: orthogonal).
The paper's full text could not be read here: this form of the regulariser is the one in
``papers/CATALOG.md`` (entry 51). The other reading of the name, lam as a *tolerance* (A is
"lambda-orthogonal" when ||A^T A - I||_F <= lam), is ``mode="tolerance"``: the hinge
``hinge_weight * max(0, ||A^T A - I||_F - lam)^2``, free inside the tolerance ball. ``loss`` is
the retrieval task's in-batch contrastive loss between T(new embeddings) and old embeddings
(cosine / 0.05; the caller's ``target``/``ignore`` say which old embedding is each one's
positive); the reproduction's default alignment is instead a cosine regression of T(new(x)) on
old(x) (``reproduce.fit_adapter``). A starts orthogonal (``nn.init.orthogonal_``) and b at 0 (our
choices).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F
from torch.nn.utils import parametrizations

__all__ = ["orthogonality_gap", "AffineAdapter", "lambda_orthogonal_adapter", "MODES"]

MODES = ("lambda", "tolerance", "orthogonal")


def orthogonality_gap(a: torch.Tensor) -> torch.Tensor:
    """|| A^T A - I ||_F^2 of a (D_old, D_new) matrix: 0 exactly when A's columns are orthonormal.

    >>> orthogonality_gap(torch.eye(3)).item(), orthogonality_gap(2 * torch.eye(2)).item()
    (0.0, 18.0)
    """
    gram = a.T @ a
    return (gram - torch.eye(gram.shape[0], dtype=a.dtype)).pow(2).sum()


class AffineAdapter(nn.Module):
    """T(x) = A x + b from a new embedding space (``in_dim``) to an old one (``out_dim``).

    Args:
        in_dim: size of the new model's embeddings.
        out_dim: size of the old model's embeddings (``out_dim >= in_dim`` for A to be orthogonal).
        lam: weight of the lambda-orthogonality term ``lam * ||A^T A - I||_F^2`` (``mode="lambda"``;
            0 gives the free affine map), or the tolerance on ``||A^T A - I||_F`` (``mode="tolerance"``).
        mode: "lambda" (the method; lam = 0: free affine), "tolerance" (the hinge form) or
            "orthogonal" (A kept exactly orthogonal by ``torch.nn.utils.parametrizations.orthogonal``:
            the strict baseline).
        temperature: of the contrastive alignment loss.
        hinge_weight: weight of the hinge ``max(0, ||A^T A - I||_F - lam)^2`` (``mode="tolerance"``).

    As a retrieval model (``zoo_task_retrieval.task``): ``encode_queries`` maps new-model embeddings
    into the old space, ``encode_docs`` leaves the old gallery as it is (no backfilling); both are
    L2-normalised (cosine search). ``model(x)`` returns T(x); a (B, L, d) set is mean-pooled first.
    """

    kind = "single"

    def __init__(self, in_dim: int = 64, out_dim: int = 64, lam: float = 1.0, mode: str = "lambda",
                 temperature: float = 0.05, hinge_weight: float = 10.0) -> None:
        super().__init__()
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if mode == "orthogonal" and out_dim < in_dim:
            raise ValueError(f"an orthogonal map needs out_dim >= in_dim, got {out_dim} < {in_dim}")
        self.lam, self.mode, self.temperature, self.hinge_weight = lam, mode, temperature, hinge_weight
        self.linear = nn.Linear(in_dim, out_dim)
        nn.init.orthogonal_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)
        if mode == "orthogonal":
            parametrizations.orthogonal(self.linear)

    @property
    def weight(self) -> torch.Tensor:
        """A, (out_dim, in_dim)."""
        return self.linear.weight

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if x.ndim == 3:
            m = (mask if mask is not None else torch.ones(x.shape[:2], dtype=torch.bool)).unsqueeze(-1).to(x.dtype)
            x = (x * m).sum(1) / m.sum(1).clamp_min(1)
        return self.linear(x.float())

    def encode_queries(self, x: torch.Tensor) -> torch.Tensor:
        """New-model embeddings mapped into the old space, normalised."""
        return F.normalize(self(x), dim=-1)

    def encode_docs(self, x: torch.Tensor) -> torch.Tensor:
        """Old-model gallery embeddings, untouched but normalised."""
        return F.normalize(x.float(), dim=-1)

    def regularizer(self) -> torch.Tensor:
        """lam * ||A^T A - I||_F^2; in the tolerance form hinge_weight * max(0, ||A^T A - I||_F - lam)^2; 0 for
        the strictly orthogonal baseline."""
        if self.mode == "tolerance":
            # clamp before the square root: its gradient is infinite at an exactly orthogonal A (the initialisation)
            gap = orthogonality_gap(self.weight).clamp_min(1e-12).sqrt()
            return self.hinge_weight * F.relu(gap - self.lam).pow(2)
        if self.mode == "orthogonal" or self.lam == 0:
            return self.weight.new_zeros(())
        return self.lam * orthogonality_gap(self.weight)

    def loss(self, q: torch.Tensor, d: torch.Tensor, target: torch.Tensor, ignore: torch.Tensor) -> torch.Tensor:
        """Contrastive alignment of T(new) with old embeddings (in-batch negatives) + the regulariser."""
        s = (q @ d.T / self.temperature).masked_fill(ignore, float("-inf"))
        return F.cross_entropy(s, target) + self.regularizer()


def lambda_orthogonal_adapter(in_dim: int = 64, out_dim: int = 64, lam: float = 1.0, mode: str = "lambda",
                              temperature: float = 0.05, hinge_weight: float = 10.0) -> AffineAdapter:
    """Builder of ``lambda_orthogonal_adapter``: T(x) = A x + b, 64 -> 64, lam = 1."""
    return AffineAdapter(in_dim, out_dim, lam, mode, temperature, hinge_weight)
