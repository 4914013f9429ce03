"""Circles in the ``icl_toy`` token GPT and the angle-rotation intervention (Engels et al. 2024 §5, adapted).

Prompts of ``weekday_plus1`` (``month_plus1``) with 8 demonstrations end ``... x_q ->``; the answer is read at the
last position (the arrow). ``states`` records the residual stream entering each block there, labelled by the query's
day (month) index; ``circle_fit`` finds the circle plane per layer (1..depth: entering block 0 the arrow holds
only its own embedding); the layer with the highest circularity (chosen on
the fit prompts alone, never on intervention outcomes) is intervened on: the arrow's residual is rotated by one class
step (``step``: s m 2 pi / P) about the circle centre inside the circle plane, and the prediction should move from
f(x) to f(x + 1). The control rotates by the same angle about the same centre in a random plane.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .circle import circle_fit, random_plane, rotation_matrix, shuffled_circularity

TASKS = {"weekday": ("weekday_plus1", "day", 7), "month": ("month_plus1", "month", 12)}
SHOTS = 8


def prompts(kind: str, n: int, *, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` prompts of ``kind`` ("weekday" or "month"): ids (n, T), answers (n,), query class indices (n,)."""
    from zoo_task_icl_toy import data as D

    if kind not in TASKS:
        raise ValueError(f"unknown kind {kind!r}; choose from {', '.join(TASKS)}")
    task, domain, _ = TASKS[kind]
    ids, ans = D.token_prompts(D.TASK_NAMES.index(task), n, SHOTS, rng=np.random.default_rng(seed))
    return ids, ans, ids[:, -2] - int(D.VOCAB.domain(domain)[0])


@torch.no_grad()
def states(gpt: Any, ids: np.ndarray, position: int = -1) -> np.ndarray:
    """Residual stream at ``position`` entering every block and the final norm: (N, depth + 1, dim), float64."""
    from zoo_task_icl_toy.gpt import residual_states

    return residual_states(gpt, torch.from_numpy(ids), position).double().numpy()


@torch.no_grad()
def predict_rotated(gpt: Any, ids: np.ndarray, layer: int, basis: np.ndarray, center: np.ndarray,
                    angle: float, position: int = -1) -> np.ndarray:
    """Argmax predictions at the last position with the residual entering block ``layer`` at ``position`` rotated by
    ``angle`` about ``center`` in the plane of ``basis`` (angle 0: the clean predictions)."""
    a = torch.tensor(rotation_matrix(basis, angle) - np.eye(len(center)), dtype=torch.float32)
    c = torch.tensor(center, dtype=torch.float32)

    def hook(_m: Any, _i: Any, out: torch.Tensor) -> torch.Tensor:
        out = out.clone()
        out[:, position] = out[:, position] + (out[:, position] - c) @ a.T
        return out

    handle = gpt.resid[layer].register_forward_hook(hook)
    try:
        logits = gpt(torch.from_numpy(ids))
    finally:
        handle.remove()
    return logits[:, -1].argmax(-1).numpy()


def circle_experiment(gpt: Any, kind: str, *, seed: int, n_fit: int = 700, n_test: int = 300) -> dict[str, float]:
    """Fit circles per layer on ``n_fit`` prompts (seed), pick the most circular layer, rotate on ``n_test`` fresh
    prompts by one class step in the circle plane and in a random plane. Returns plain numbers."""
    from zoo_task_icl_toy import data as D

    from .circle import mixture_index, separability_index

    _, domain, p = TASKS[kind]
    ids, _, lab = prompts(kind, n_fit, seed=2 * seed)
    h = states(gpt, ids)
    # resid[0] at the arrow is its embedding alone (the same for every prompt): layers 1..depth
    fits = {layer: circle_fit(h[:, layer], lab, p) for layer in range(1, h.shape[1])}
    layer = max(fits, key=lambda i: fits[i]["circularity"])
    fit = fits[layer]
    z = (h[:, layer] - fit["center"]) @ fit["basis"]
    tids, tans, _ = prompts(kind, n_test, seed=2 * seed + 1)
    d0 = int(D.VOCAB.domain(domain)[0])
    target = (tans - d0 + 1) % p + d0  # f(x + 1) = f(x) + 1 for the +k tasks
    clean = predict_rotated(gpt, tids, layer, fit["basis"], fit["center"], 0.0)
    rot = predict_rotated(gpt, tids, layer, fit["basis"], fit["center"], fit["step"])
    ctrl_plane = random_plane(h.shape[2], seed=1000 + seed)
    ctrl = predict_rotated(gpt, tids, layer, ctrl_plane, fit["center"], fit["step"])
    return {"layer": float(layer), "circularity": fit["circularity"], "winding": fit["winding"],
            "plane_variance": fit["plane_variance"], "point_variance": fit["point_variance"],
            "radius_cv": fit["radius_cv"], "angle_rmse": fit["angle_rmse"],
            "shuffled_circularity": shuffled_circularity(h[:, layer], lab, p, seed=seed),
            "separability": separability_index(z), "mixture": mixture_index(z),
            "clean_accuracy": float((clean == tans).mean()),
            "rotation_shift": float((rot == target).mean()), "rotation_keep": float((rot == tans).mean()),
            "control_shift": float((ctrl == target).mean()), "control_keep": float((ctrl == tans).mean())}
