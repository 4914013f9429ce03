"""Kernel distillation of STL semantics into a Transformer encoder (Candussio, Sarti, Saveri, Bortolussi 2026,
"Distilling Formal Logic into Neural Spaces: A Kernel Alignment Approach for Signal Temporal Logic",
arXiv:2603.05198).

Teacher: the STL kernel of Bortolussi et al. (normalised inner product of robustness vectors over trajectories of
the base measure; ``zoo_task_stl_logic.semantics.kernel``). Student: a Transformer encoder over prefix formula tokens
(``zoo_task_stl_logic.baselines.TokenEncoder``, mean-pooled, projected to ``dim``). Training is teacher-student on
pairs: for a batch of formulae with robustness vectors ``rho_i`` the teacher's similarity is ``k_ij = cos(rho_i,
rho_j)`` and the student's ``s_ij = cos(z_i, z_j)``; the kernel-weighted geometric alignment loss is

    L = sum_{i != j} w_ij (s_ij - k_ij)^2 / sum_{i != j} w_ij,   w_ij = 1 + lam * (1 - k_ij) / 2,

a continuous target for every pair (no positives/negatives as in contrastive losses), each error weighted by the
teacher's semantic discrepancy (1 - k_ij) / 2 in [0, 1].

What comes from where: teacher-student distillation of the robustness kernel into a Transformer encoder and "a
continuous, kernel-weighted geometric alignment objective that penalizes errors in proportion to their semantic
discrepancies" are the paper's (abstract and the authors' project page); the exact form of the weight, the encoder's
size, pooling, optimiser and schedule are not in the text we could read, so the loss above is our reading of that
sentence and the sizes are ours. Deviations: a 2-layer, 64-wide encoder and 600 steps of 64 formulae on 2,000
training formulae and 500 trajectories (the papers use far more of each); ``preset="paper"`` is a larger encoder
(4 layers, width 256), not a configuration the paper states.

>>> import torch
>>> from zoo_task_stl_logic import task
>>> d = task.dataset(0, n_train=64, n_test=16, n_traj=50, n_readout=20, n_anchors=8)
>>> model = stl_kernel_embed(dim=16, d_model=32, layers=1)
>>> fig = model.fit(d.ids_train, d.rho_train, steps=3, seed=0)
>>> model.encode(d.ids_test).shape
torch.Size([16, 16])
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from zoo_task_stl_logic.baselines import TokenEncoder

CPU: dict[str, Any] = {"dim": 64, "d_model": 64, "layers": 2, "heads": 4, "mlp_ratio": 2.0, "lr": 3e-3,
                       "weight_decay": 0.01, "batch_size": 64, "discrepancy_weight": 1.0}
PAPER: dict[str, Any] = {**CPU, "dim": 256, "d_model": 256, "layers": 4, "heads": 8, "mlp_ratio": 4.0, "lr": 3e-4}
PRESETS = {"cpu": CPU, "paper": PAPER}


def alignment_loss(z: torch.Tensor, k: torch.Tensor, discrepancy_weight: float = 1.0) -> torch.Tensor:
    """The kernel-weighted geometric alignment loss of student embeddings ``z (B, D)`` to teacher kernel ``k (B, B)``.

    >>> z = torch.eye(3)
    >>> float(alignment_loss(z, torch.eye(3)))   # orthogonal embeddings of orthogonal formulae: perfect
    0.0
    """
    s = F.normalize(z, dim=1) @ F.normalize(z, dim=1).T
    off = ~torch.eye(len(z), dtype=torch.bool, device=z.device)
    w = 1.0 + discrepancy_weight * (1.0 - k) / 2
    return (w * (s - k) ** 2)[off].sum() / w[off].sum()


def teacher_kernel(rho: torch.Tensor) -> torch.Tensor:
    """The normalised STL kernel of a batch of robustness vectors ``rho (B, M)``: the cosine of the vectors."""
    r = F.normalize(rho, dim=1)
    return (r @ r.T).clamp(-1.0, 1.0)


class KernelDistilledEncoder(TokenEncoder):
    """A ``TokenEncoder`` with the paper's training rule: ``fit`` distils the STL kernel (see the module docstring)."""

    def __init__(self, dim: int = CPU["dim"], d_model: int = CPU["d_model"], layers: int = CPU["layers"],
                 heads: int = CPU["heads"], mlp_ratio: float = CPU["mlp_ratio"], lr: float = CPU["lr"],
                 weight_decay: float = CPU["weight_decay"], batch_size: int = CPU["batch_size"],
                 discrepancy_weight: float = CPU["discrepancy_weight"]) -> None:
        super().__init__(dim=dim, d_model=d_model, layers=layers, heads=heads, mlp_ratio=mlp_ratio)
        self.lr, self.weight_decay, self.batch_size = lr, weight_decay, batch_size
        self.discrepancy_weight = discrepancy_weight

    def fit(self, ids: torch.Tensor, robustness: np.ndarray | torch.Tensor, *, steps: int, seed: int = 0) -> dict[str, float]:
        """Distil the kernel of ``robustness (N, M)`` (each formula's robustness on M trajectories) into the encoder:
        ``steps`` AdamW steps on random batches of ``batch_size`` formulae, cosine learning-rate decay."""
        dev = self.pos.device
        ids = ids.to(dev)
        rho = torch.as_tensor(np.asarray(robustness), dtype=torch.float32, device=dev)
        g = torch.Generator().manual_seed(seed)
        opt = torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(steps, 1))
        lengths = (ids != 0).sum(1)
        self.train()
        t0, losses = time.perf_counter(), []
        for _ in range(steps):
            idx = torch.randperm(len(ids), generator=g)[:self.batch_size].to(dev)
            batch = ids[idx, :int(lengths[idx].max())]
            loss = alignment_loss(self.encode(batch), teacher_kernel(rho[idx]), self.discrepancy_weight)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        self.eval()
        tail = losses[-max(1, len(losses) // 10):] if losses else [float("nan")]
        return {"train_loss": float(np.mean(tail)), "fit_seconds": time.perf_counter() - t0}


def stl_kernel_embed(preset: str = "cpu", **overrides: Any) -> KernelDistilledEncoder:
    """The kernel-distilled STL encoder; ``preset`` "cpu" (default) or "paper" (larger; see the module docstring)."""
    if preset not in PRESETS:
        raise ValueError(f"preset={preset!r}; choose from {sorted(PRESETS)}")
    return KernelDistilledEncoder(**{**PRESETS[preset], **overrides})
