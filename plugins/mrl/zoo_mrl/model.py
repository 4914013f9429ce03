"""Matryoshka Representation Learning (MRL): one embedding whose prefixes are embeddings too.

    >>> import zoo
    >>> model = zoo.create("mrl_digits_cnn")          # doctest: +SKIP
    >>> out = model(x)                                # doctest: +SKIP
    >>> z8 = model.embed(x, dim=8)                    # doctest: +SKIP

``out`` is ``{"embedding": (B, 64), "logits": {2: (B, 10), ..., 64: (B, 10)}}``; ``z8`` the first 8
dimensions, usable on their own.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["MRLHead", "MatryoshkaNet", "truncate", "default_nesting", "mrl_resnet18", "mrl_digits_cnn",
           "fixed_feature", "fixed_feature_digits_cnn"]


def default_nesting(dim: int, smallest: int = 8) -> tuple[int, ...]:
    """Doubling granularities ``smallest, 2*smallest, ...`` up to ``dim`` (always ending at ``dim``).

    >>> default_nesting(512)
    (8, 16, 32, 64, 128, 256, 512)
    >>> default_nesting(64, smallest=2)
    (2, 4, 8, 16, 32, 64)
    """
    if dim < 1 or smallest < 1:
        raise ValueError(f"dim and smallest must be positive, got dim={dim}, smallest={smallest}")
    out, m = [], smallest
    while m < dim:
        out.append(m)
        m *= 2
    return (*out, dim)


def _check_nesting(nesting: Sequence[int], dim: int) -> tuple[int, ...]:
    ms = tuple(int(m) for m in nesting)
    if not ms or any(m < 1 or m > dim for m in ms) or list(ms) != sorted(set(ms)):
        raise ValueError(f"nesting must be increasing sizes in [1, {dim}] (the embedding dim), got {list(nesting)}")
    return ms


def truncate(z: torch.Tensor, m: int) -> torch.Tensor:
    """The Matryoshka representation of size ``m``: the first ``m`` coordinates of ``z`` (..., D)."""
    if not 1 <= m <= z.shape[-1]:
        raise ValueError(f"cannot truncate a {z.shape[-1]}-dim embedding to {m} dims; pick 1 <= m <= {z.shape[-1]}")
    return z[..., :m]


# Kusupati et al., "Matryoshka Representation Learning", NeurIPS 2022 (arXiv 2205.13147), Section 3:
# for nesting sizes M, a linear classifier W^(m) in R^{L x m} per m in M reads the first m coordinates
# z[:m] of the backbone's embedding z in R^d, and training minimises
#     sum_{m in M} c_m * CE(W^(m) z[:m], y)      with relative importances c_m = 1.
# MRL-E (efficient) ties the classifiers: W^(m) = W[:, :m] for a single W in R^{L x d}.
class MRLHead(nn.Module):
    """The nested classifiers: ``forward(z) -> {m: logits of z[:, :m]}`` for every ``m`` in ``nesting``.

    Args:
        dim: embedding size ``d`` (the largest granularity).
        num_classes: ``L``.
        nesting: the sizes ``M``; default doubling from 8 up to ``dim``.
        efficient: MRL-E, one weight matrix ``W`` (num_classes x dim) whose first ``m`` columns are
            the ``m``-head (and one bias shared by every head, as in the authors' release).
        bias: give the classifiers a bias.
    """

    def __init__(self, dim: int, num_classes: int, nesting: Sequence[int] | None = None, efficient: bool = False,
                 bias: bool = True):
        super().__init__()
        self.dim = dim
        self.nesting = _check_nesting(nesting if nesting is not None else default_nesting(dim), dim)
        self.efficient = efficient
        if efficient:
            self.classifier = nn.Linear(dim, num_classes, bias=bias)
        else:
            self.classifiers = nn.ModuleList(nn.Linear(m, num_classes, bias=bias) for m in self.nesting)

    def head(self, m: int) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The ``m``-head's ``(weight (L, m), bias)``; under MRL-E a view of the shared ``W``."""
        if m not in self.nesting:
            raise KeyError(f"no head of size {m}; this head has sizes {list(self.nesting)}")
        lin = self.classifier if self.efficient else self.classifiers[self.nesting.index(m)]
        return lin.weight[:, :m], lin.bias

    def forward(self, z: torch.Tensor) -> dict[int, torch.Tensor]:
        if z.shape[-1] != self.dim:
            raise ValueError(f"MRLHead expects embeddings of size {self.dim}, got {tuple(z.shape)}")
        return {m: F.linear(z[:, :m], *self.head(m)) for m in self.nesting}


class MatryoshkaNet(nn.Module):
    """A backbone with Matryoshka heads: ``forward(x) -> {"embedding": (B, D), "logits": {m: (B, L)}}``.

    Args:
        backbone: any module mapping an input batch to embeddings of shape (B, dim).
        dim: the backbone's embedding size ``D``.
        num_classes: number of classes ``L``.
        nesting: the granularities ``M`` (default doubling from 8 up to ``dim``).
        efficient: MRL-E (weight-tied heads, see ``MRLHead``).
        relative_importance: the loss weights ``c_m``, one per granularity; None means all 1 (the paper's default).
    """

    def __init__(self, backbone: nn.Module, dim: int, num_classes: int, nesting: Sequence[int] | None = None,
                 efficient: bool = False, relative_importance: Sequence[float] | None = None):
        super().__init__()
        self.backbone = backbone
        self.head = MRLHead(dim, num_classes, nesting, efficient)
        self.nesting = self.head.nesting
        if relative_importance is None:
            relative_importance = [1.0] * len(self.nesting)
        if len(relative_importance) != len(self.nesting):
            raise ValueError(f"relative_importance has {len(relative_importance)} weights for "
                             f"{len(self.nesting)} granularities {list(self.nesting)}")
        self.relative_importance = tuple(float(c) for c in relative_importance)
        if hasattr(backbone, "reference_backbone"):  # the task's matching baseline (zoo_task_digits.task.evaluate)
            self.reference_backbone = backbone.reference_backbone

    def forward(self, x: torch.Tensor) -> dict:
        z = self.backbone(x)
        return {"embedding": z, "logits": self.head(z)}

    def loss(self, output: dict, target: torch.Tensor) -> torch.Tensor:
        """``sum_m c_m * CE(logits_m, target)`` over every granularity."""
        logits = output["logits"]
        return sum(c * F.cross_entropy(logits[m], target) for m, c in zip(self.nesting, self.relative_importance, strict=True))

    def embed(self, x: torch.Tensor, dim: int | None = None) -> torch.Tensor:
        """The embedding of ``x``, truncated to its first ``dim`` coordinates (all of them if None)."""
        z = self.backbone(x)
        return z if dim is None else truncate(z, dim)


def _digits_backbone(dim: int):
    from zoo_nn.backbones import DigitsCNN

    cnn = DigitsCNN(embed_dim=dim)  # conv stages -> pool -> Linear(64, dim): forward_features is the embedding
    cnn.head = nn.Identity()  # so cnn(x) == cnn.forward_features(x); the MRL heads replace it
    return cnn


def mrl_resnet18(num_classes: int = 1000, nesting: Sequence[int] | None = None, efficient: bool = False,
                 relative_importance: Sequence[float] | None = None, pretrained_backbone: bool = False) -> MatryoshkaNet:
    """timm's ResNet-18 (pooled 512-d features) with Matryoshka heads at 8, 16, ..., 512.

    ``pretrained_backbone=True`` asks timm for its ImageNet weights (network or timm's cache).
    """
    import timm

    backbone = timm.create_model("resnet18", pretrained=pretrained_backbone, num_classes=0)
    return MatryoshkaNet(backbone, backbone.num_features, num_classes, nesting, efficient, relative_importance)


def mrl_digits_cnn(num_classes: int = 10, dim: int = 64, nesting: Sequence[int] | None = None, efficient: bool = False,
                   relative_importance: Sequence[float] | None = None) -> MatryoshkaNet:
    """``zoo_nn.backbones.DigitsCNN`` with a ``dim``-d embedding and heads at ``nesting``.

    ``nesting`` defaults to doubling from 2 up to ``dim``: (2, 4, 8, 16, 32, 64) for ``dim=64``.
    """
    if nesting is None:
        nesting = default_nesting(dim, smallest=2)
    return MatryoshkaNet(_digits_backbone(dim), dim, num_classes, nesting, efficient, relative_importance)


def fixed_feature(backbone: nn.Module, dim: int, num_classes: int) -> MatryoshkaNet:
    """The paper's fixed-feature (FF) baseline: the same backbone trained for one embedding size alone.

    It is a ``MatryoshkaNet`` with the single granularity ``dim``, so its output and metrics
    (``accuracy@dim``) line up with an MRL model's.
    """
    return MatryoshkaNet(backbone, dim, num_classes, nesting=(dim,))


def fixed_feature_digits_cnn(num_classes: int = 10, dim: int = 8) -> MatryoshkaNet:
    """FF baseline on digits: ``DigitsCNN`` whose embedding has ``dim`` dimensions, one classifier."""
    return fixed_feature(_digits_backbone(dim), dim, num_classes)
