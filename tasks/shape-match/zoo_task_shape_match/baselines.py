"""The model contract of ``shape_match`` and its baselines: axiomatic functional-map regularisers.

A model is a regulariser of functional maps: ``regularizer(C (B, k, k), evals_x (B, k), evals_y (B, k)) -> (B,)``,
differentiable in ``C`` (the spectra are there for regularisers that use them; a learned prior may ignore them), and
``forward`` is the same call. A trainable model also provides ``training_loss(C (B, k, k)) -> scalar`` (the task
trains it on ground-truth maps of the training categories); a diffusion prior may add ``score(C, sigma)``.

Baselines (their weights are tuned by the task on training-category pairs, like every model's):

- ``lap_ortho``: Laplacian commutativity ``||C L_X - L_Y C||^2`` (eigenvalues scaled by the larger largest one) times
  ``lap`` plus orthogonality ``||C^T C - I||^2``: the axiomatic regulariser of Ovsjanikov et al. 2012.
- ``ortho``: orthogonality only.
- ``none``: no regulariser (the descriptor term alone, from the ridge start).

>>> import torch
>>> C, ev = torch.eye(4)[None], torch.tensor([[0.0, 1.0, 2.0, 3.0]])
>>> float(LapOrtho()(C, ev, ev))  # the identity between identical spectra: nothing to penalise
0.0
"""
from __future__ import annotations

import torch
from torch import nn

from .fmaps import commutativity, orthogonality

BASELINES = ("lap_ortho", "ortho", "none")


class MapRegularizer(nn.Module):
    """Base class of the contract: subclasses implement :meth:`regularizer`; ``forward`` calls it."""

    def regularizer(self, C: torch.Tensor, evals_x: torch.Tensor, evals_y: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, C: torch.Tensor, evals_x: torch.Tensor, evals_y: torch.Tensor) -> torch.Tensor:
        return self.regularizer(C, evals_x, evals_y)


class LapOrtho(MapRegularizer):
    """``lap * ||C diag(l_X) - diag(l_Y) C||^2 + ||C^T C - I||^2`` per map."""

    def __init__(self, lap: float = 10.0) -> None:
        super().__init__()
        self.lap = float(lap)

    def regularizer(self, C: torch.Tensor, evals_x: torch.Tensor, evals_y: torch.Tensor) -> torch.Tensor:
        return self.lap * commutativity(C, evals_x, evals_y) + orthogonality(C)


class Ortho(MapRegularizer):
    """``||C^T C - I||^2`` per map."""

    def regularizer(self, C: torch.Tensor, evals_x: torch.Tensor, evals_y: torch.Tensor) -> torch.Tensor:
        return orthogonality(C)


class NoRegularizer(MapRegularizer):
    """Zero: the descriptor term alone decides the map."""

    def regularizer(self, C: torch.Tensor, evals_x: torch.Tensor, evals_y: torch.Tensor) -> torch.Tensor:
        return C.sum((1, 2)) * 0.0


def build_baseline(name: str, *, params: int | None = None, data: object = None, seed: int = 0,
                   **options: float) -> MapRegularizer:
    """Baseline ``name`` (``lap_ortho`` takes ``lap=``); ``params``/``data``/``seed`` are unused (nothing to size,
    nothing random)."""
    del params, data, seed
    if name == "lap_ortho":
        return LapOrtho(**options)
    if name in ("ortho", "none"):
        if options:
            raise ValueError(f"shape_match: baseline {name!r} takes no options, got {sorted(options)}")
        return Ortho() if name == "ortho" else NoRegularizer()
    raise ValueError(f"shape_match: unknown baseline {name!r}; choose from {BASELINES}")
