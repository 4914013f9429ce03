"""Task-vector similarity across specifications (numpy only): group means of per-prompt last-token states by (task,
specification), their cosine matrix, and how much more similar same-task vectors given in different ways are than
vectors of different tasks (the paper's "conceptually similar tasks map to similar task vectors regardless of how they
are specified")."""
from __future__ import annotations

from typing import Any

import numpy as np


def group_means(x: np.ndarray, task: np.ndarray, spec: np.ndarray | None = None
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Means of the rows of ``x`` (N, D) per (task, spec) group (spec all 0 when None): (means (K, D), group task
    (K,), group spec (K,)), groups in sorted order."""
    x = np.asarray(x, np.float64)
    task = np.asarray(task)
    spec = np.zeros(len(task), np.int64) if spec is None else np.asarray(spec)
    if x.ndim != 2 or task.shape != (len(x),) or spec.shape != (len(x),):
        raise ValueError(f"need x (N, D) with one task and one spec label per row; got x {x.shape}, task "
                         f"{task.shape}, spec {spec.shape}")
    keys = sorted({(a, b) for a, b in zip(task.tolist(), spec.tolist(), strict=True)})
    means = np.stack([x[(task == a) & (spec == b)].mean(0) for a, b in keys])
    return means, np.array([k[0] for k in keys]), np.array([k[1] for k in keys])


def cosine_matrix(vectors: np.ndarray, center: bool = True) -> np.ndarray:
    """Pairwise cosines of the rows of ``vectors`` (K >= 2, D), after subtracting their mean when ``center``
    (symmetric, ones on the diagonal)."""
    v = np.asarray(vectors, np.float64)
    if v.ndim != 2 or len(v) < 2:
        raise ValueError(f"cosine_matrix needs (K >= 2, D) vectors, got shape {v.shape}")
    if center:
        v = v - v.mean(0)
    n = np.linalg.norm(v, axis=1, keepdims=True)
    if (n < 1e-12).any():
        raise ValueError("a vector is zero (after centering): its cosine is undefined; pass center=False or more groups")
    u = v / n
    c = np.clip(u @ u.T, -1.0, 1.0)
    c = (c + c.T) / 2
    np.fill_diagonal(c, 1.0)
    return c


def spec_similarity(x: np.ndarray, task: np.ndarray, spec: np.ndarray | None = None, center: bool = True
                    ) -> dict[str, Any]:
    """Cosines of the (task, spec) group means of ``x`` and their summary.

    ``same_task``: mean cosine of pairs with the same task and different specs (None without specs or when no task
    has two); ``different_task``: mean cosine of pairs with different tasks; ``gap`` their difference;
    ``nearest_same_task``: share of groups whose most similar other group has the same task.
    """
    means, gt, gs = group_means(x, task, spec)
    if len(means) < 2:
        raise ValueError("need at least two (task, spec) groups to compare")
    c = cosine_matrix(means, center=center)
    iu = np.triu_indices(len(c), 1)
    same = (gt[iu[0]] == gt[iu[1]]) & (gs[iu[0]] != gs[iu[1]])
    diff = gt[iu[0]] != gt[iu[1]]
    same_v = float(c[iu][same].mean()) if same.any() else None
    diff_v = float(c[iu][diff].mean()) if diff.any() else None
    masked = c - 3 * np.eye(len(c))
    nearest = masked.argmax(1)
    has_same = np.array([((gt == gt[i]) & (np.arange(len(gt)) != i)).any() for i in range(len(gt))])
    near = float((gt[nearest] == gt)[has_same].mean()) if has_same.any() else None
    return {"groups": [f"{a}|{b}" for a, b in zip(gt.tolist(), gs.tolist(), strict=True)], "cosine": c,
            "same_task": same_v, "different_task": diff_v,
            "gap": None if same_v is None or diff_v is None else same_v - diff_v, "nearest_same_task": near,
            "center": bool(center)}
