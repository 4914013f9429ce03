"""The functional-map pipeline of ``shape_match`` (Ovsjanikov et al. 2012), the same for every regulariser.

A map ``C`` (k x k) takes spectral coefficients on the source ``X`` to those on the target ``Y``. With descriptor
coefficients ``A = Phi_X^T M_X F_X`` and ``B = Phi_Y^T M_Y F_Y`` (k x d) the map solves

    min_C  ||C A - B||_F^2 / ||B||_F^2  +  w * R(C)

by Adam from the ridge least-squares map (the same start, steps and learning rate for every ``R``). It becomes a
pointwise map by nearest neighbours in the spectral embedding: target vertex ``y`` goes to the source vertex whose
row of ``Phi_X`` is closest to row ``y`` of ``Phi_Y C``. The ground truth maps vertex ``i`` to vertex ``i``, so its
functional map is ``C_gt = Phi_Y^T M_Y Phi_X``.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .data import ShapeSet

SOLVER = {"steps": 300, "lr": 0.01, "ridge": 1e-3}

Regularizer = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


def _t(a: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.asarray(a, dtype=np.float32))


def coefficients(s: ShapeSet) -> torch.Tensor:
    """Descriptor coefficients ``Phi^T M F`` of every instance, (N, k, d)."""
    return torch.einsum("snk,snd->skd", _t(s.evecs), _t(s.mass)[..., None] * _t(s.desc))


def gt_maps(s: ShapeSet, pairs: np.ndarray) -> torch.Tensor:
    """Ground-truth functional maps of ``pairs`` (P, 2: source, target) under the identity correspondence, (P, k, k)."""
    phi, mass = _t(s.evecs), _t(s.mass)
    src, tgt = torch.as_tensor(pairs[:, 0]), torch.as_tensor(pairs[:, 1])
    return torch.einsum("pnk,pnj->pkj", phi[tgt] * mass[tgt][..., None], phi[src])


def commutativity(C: torch.Tensor, evals_x: torch.Tensor, evals_y: torch.Tensor) -> torch.Tensor:
    """``||C diag(l_X) - diag(l_Y) C||_F^2`` per map, the eigenvalues divided by the larger of the two shapes' largest
    (unit-area shapes: both near 350 for k = 30), (B,)."""
    scale = torch.maximum(evals_x[:, -1], evals_y[:, -1])[:, None]
    lx, ly = evals_x / scale, evals_y / scale
    return (C * lx[:, None, :] - ly[:, :, None] * C).pow(2).sum((1, 2))


def orthogonality(C: torch.Tensor) -> torch.Tensor:
    """``||C^T C - I||_F^2`` per map (area-preserving maps are orthogonal), (B,)."""
    eye = torch.eye(C.shape[-1], dtype=C.dtype, device=C.device)
    return (C.transpose(1, 2) @ C - eye).pow(2).sum((1, 2))


def ridge_init(A: torch.Tensor, B: torch.Tensor, ridge: float = SOLVER["ridge"]) -> torch.Tensor:
    """``B A^T (A A^T + mu I)^-1`` with ``mu = ridge * tr(A A^T) / k``: every solve starts here."""
    aat = A @ A.transpose(1, 2)
    k = aat.shape[-1]
    mu = ridge * aat.diagonal(dim1=1, dim2=2).sum(-1) / k
    eye = torch.eye(k, dtype=A.dtype, device=A.device)
    return torch.linalg.solve(aat + mu[:, None, None] * eye, (B @ A.transpose(1, 2)).transpose(1, 2)).transpose(1, 2)


def solve(A: torch.Tensor, B: torch.Tensor, evals_x: torch.Tensor, evals_y: torch.Tensor,
          regularizer: Regularizer | None, weight: float, steps: int = SOLVER["steps"], lr: float = SOLVER["lr"],
          device: torch.device | str | None = None) -> torch.Tensor:
    """The maps minimising the descriptor term plus ``weight * regularizer(C, evals_x, evals_y)`` (module docstring),
    ``(P, k, k)`` on the CPU. The regulariser may be stochastic (a score-distillation term): seed torch first."""
    device = torch.device("cpu") if device is None else torch.device(device)
    A, B, evals_x, evals_y = (t.to(device) for t in (A, B, evals_x, evals_y))
    C = ridge_init(A, B).clone().requires_grad_(True)
    norm = B.pow(2).sum((1, 2))
    opt = torch.optim.Adam([C], lr=lr)
    for _ in range(steps):
        loss = ((C @ A - B).pow(2).sum((1, 2)) / norm).sum()
        if regularizer is not None and weight > 0:
            loss = loss + weight * regularizer(C, evals_x, evals_y).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return C.detach().cpu()


def pointwise(C: torch.Tensor, evecs_x: torch.Tensor, evecs_y: torch.Tensor) -> torch.Tensor:
    """For each pair, the source vertex of every target vertex: nearest row of ``Phi_X`` to each row of ``Phi_Y C``,
    (P, n_Y) long."""
    return torch.cdist(evecs_y @ C, evecs_x).argmin(-1)


def match_errors(s: ShapeSet, pairs: np.ndarray, C: torch.Tensor) -> np.ndarray:
    """Mean over target vertices of the geodesic distance on the source between the matched and the true vertex,
    divided by the source's diameter, per pair (P,)."""
    if s.geodesic is None:
        raise ValueError("shape_match: this shape set has no geodesics; load it with geodesic=True")
    phi = _t(s.evecs)
    p2p = pointwise(C, phi[pairs[:, 0]], phi[pairs[:, 1]]).numpy()
    truth = np.arange(p2p.shape[1])
    return np.array([s.geodesic[src][p2p[i], truth].astype(np.float64).mean() for i, src in enumerate(pairs[:, 0])])
