"""STF: superpose task-specific features (Qiu, Wu, Li, Guo and Yao 2025, arXiv:2502.10698) for model merging.

Each linear layer ``y = W x`` of T models fine-tuned from one base ``W_0`` is merged by solving a linear system. The
task matrix of task t is ``M_t = W_t - W_0`` with singular value decomposition ``M_t = sum_i s_ti u_ti v_ti^T``: input
direction ``v_ti`` activates output feature ``u_ti`` with strength ``s_ti`` (the linear representation hypothesis: a
layer's output is a linear combination of feature vectors). The merged task matrix superposes those features,

    M = sum_{t,i} a_ti u_ti v_ti^T,

with coefficients chosen so that every task keeps each of its features: the merged layer, fed a task's input
direction, responds along that task's output feature as the task's own model does,

    u_ti^T M v_ti = s_ti   for every task t and kept feature i,

a square system ``G a = s`` with ``G[(t,i),(r,j)] = (u_ti . u_rj)(v_rj . v_ti)``, solved in the least-squares,
minimum-norm sense (``torch.linalg.lstsq``/pseudo-inverse with relative cutoff ``rcond``). The merged weight is
``W_0 + M``. Parameters that are not weight matrices of ``nn.Linear`` layers (biases, the suite's frozen heads) are
merged by averaging the fine-tuned models (``other="average"``) or by task arithmetic with a fixed ``other_lambda``.

Exact special cases (the tests check them): one task with all its features gives back its weights (``G`` is the
identity, ``a = s``); T identical models give back that model (the minimum-norm solution splits each feature's
strength evenly over the T copies); task matrices with mutually orthogonal row and column spaces give their plain
sum (task arithmetic at lambda 1), where interference is impossible.

Source of the method: the paper's abstract (and the catalog entry) only. The official code
(github.com/LARS-research/STF) and the paper's text could not be read here, so the choice of features (the singular
directions of each task matrix), of the constraint (the response along each feature's output direction) and of the
solver is this plugin's reading of "superposes task-specific features ... by formulating the merging process as a
linear system ... preserve task-specific features"; which features are kept (``rank``, ``energy``) is ours.
Deviations: CPU-sized MLP layers instead of the paper's ViT/T5 linear layers; convolutions are not merged by the
system (the suite has none: they would fall under ``other``).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import nn

__all__ = ["CPU", "PAPER", "STFMerge", "stf_merge", "stf_matrix", "merge", "linear_weight_names", "stf"]

# rank: features kept per task and layer (None: by ``energy``); energy: the fraction of each task matrix's squared
# singular values the kept features hold; rcond: relative cutoff of the least-squares solve
CPU: dict[str, Any] = {"rank": None, "energy": 1.0, "rcond": 1e-6, "other": "average", "other_lambda": 0.3}
PAPER: dict[str, Any] = dict(CPU)  # the paper's settings could not be read (see the module docstring)
PRESETS = {"cpu": CPU, "paper": PAPER}
OTHERS = ("average", "task_arithmetic")

State = dict[str, torch.Tensor]


def _features(m: torch.Tensor, rank: int | None, energy: float) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(U, s, V)`` of the task matrix ``m`` restricted to its kept features (nonzero singular values only)."""
    u, s, vh = torch.linalg.svd(m.double(), full_matrices=False)
    # numerical rank, as matrix_rank: singular values below max(shape) * eps(input dtype) * s_max are rounding noise
    tol = float(s.max()) * max(m.shape) * torch.finfo(m.dtype).eps if s.numel() else 0.0
    keep = int((s > tol).sum()) if s.numel() and float(s.max()) > 0 else 0
    if energy < 1.0 and keep:
        frac = torch.cumsum(s[:keep] ** 2, 0) / (s[:keep] ** 2).sum()
        keep = int(torch.searchsorted(frac, torch.tensor(energy, dtype=frac.dtype)).item()) + 1
    if rank is not None:
        keep = min(keep, int(rank))
    return u[:, :keep], s[:keep], vh[:keep].T


def stf_matrix(task_matrices: Sequence[torch.Tensor], *, rank: int | None = CPU["rank"], energy: float = CPU["energy"],
               rcond: float = CPU["rcond"]) -> torch.Tensor:
    """The merged task matrix ``M`` of one linear layer from the task matrices ``M_t`` (each (d_out, d_in)).

    >>> m = torch.randn(5, 3)
    >>> torch.allclose(stf_matrix([m]), m, atol=1e-5)            # one task: its own matrix
    True
    >>> torch.allclose(stf_matrix([m, m, m]), m, atol=1e-5)      # identical tasks: that matrix, not 3 m
    True
    """
    if not task_matrices:
        raise ValueError("stf_matrix needs at least one task matrix")
    shape = tuple(task_matrices[0].shape)
    if len(shape) != 2 or any(tuple(m.shape) != shape for m in task_matrices):
        raise ValueError(f"stf_matrix: task matrices must all be 2-D of one shape, got {[tuple(m.shape) for m in task_matrices]}")
    if not 0.0 < float(energy) <= 1.0:
        raise ValueError(f"stf_matrix: energy is a fraction in (0, 1], got {energy}")
    if rank is not None and int(rank) < 1:
        raise ValueError(f"stf_matrix: rank must be >= 1 or None, got {rank}")
    feats = [_features(m, rank, float(energy)) for m in task_matrices]
    u = torch.cat([f[0] for f in feats], 1)  # (d_out, N)
    s = torch.cat([f[1] for f in feats])     # (N,)
    v = torch.cat([f[2] for f in feats], 1)  # (d_in, N)
    if s.numel() == 0:
        return torch.zeros(shape, dtype=task_matrices[0].dtype)
    gram = (u.T @ u) * (v.T @ v)             # G[(t,i),(r,j)] = (u_ti . u_rj)(v_ti . v_rj), symmetric
    coef = torch.linalg.pinv(gram, rtol=float(rcond), hermitian=True) @ s
    return ((u * coef) @ v.T).to(task_matrices[0].dtype)


def linear_weight_names(module: nn.Module) -> list[str]:
    """State-dict names of the weight matrices of every ``nn.Linear`` in ``module`` (what STF merges)."""
    return [f"{name}.weight" if name else "weight" for name, m in module.named_modules() if isinstance(m, nn.Linear)]


def stf_merge(base: State, finetuned: Sequence[State], linear: Iterable[str], *, rank: int | None = CPU["rank"],
              energy: float = CPU["energy"], rcond: float = CPU["rcond"], other: str = CPU["other"],
              other_lambda: float = CPU["other_lambda"]) -> State:
    """Merge fine-tuned state dicts of one architecture: STF for the weight matrices named in ``linear``, ``other``
    ("average" or "task_arithmetic" at ``other_lambda``) for every other entry."""
    if not finetuned:
        raise ValueError("stf_merge needs at least one fine-tuned state")
    if other not in OTHERS:
        raise ValueError(f"stf_merge: other must be one of {list(OTHERS)}, got {other!r}")
    linear = set(linear)
    missing = sorted(k for k in linear if k not in base)
    if missing:
        raise ValueError(f"stf_merge: linear weights {missing} are not in the base state")
    out: State = {}
    for k, w0 in base.items():
        deltas = [s[k].to(w0.dtype) - w0 for s in finetuned]
        if k in linear:
            out[k] = w0 + stf_matrix(deltas, rank=rank, energy=energy, rcond=rcond)
        elif other == "average":
            out[k] = w0 + torch.stack(deltas).mean(0)
        else:
            out[k] = w0 + other_lambda * torch.stack(deltas).sum(0)
    return out


def merge(base: nn.Module, finetuned: Sequence[nn.Module], **kw: Any) -> nn.Module:
    """The catalog's form: a copy of ``base`` holding the STF merge of the ``finetuned`` modules (every ``nn.Linear``).

    >>> base = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    >>> merged = merge(base, [base, base])     # nothing fine-tuned: the base comes back
    >>> all(torch.equal(a, b) for a, b in zip(merged.state_dict().values(), base.state_dict().values()))
    True
    """
    import copy

    state = stf_merge(base.state_dict(), [m.state_dict() for m in finetuned], linear_weight_names(base), **kw)
    out = copy.deepcopy(base)
    out.load_state_dict(state)
    return out


class STFMerge(nn.Module):
    """STF as a ``task_merge`` merger: ``merge(suite) -> state_dict`` (see the module docstring for the method).

    It has no parameters: the merge is a closed-form solve, done again for each suite.
    """

    def __init__(self, rank: int | None = CPU["rank"], energy: float = CPU["energy"], rcond: float = CPU["rcond"],
                 other: str = CPU["other"], other_lambda: float = CPU["other_lambda"]) -> None:
        super().__init__()
        if other not in OTHERS:
            raise ValueError(f"stf: other must be one of {list(OTHERS)}, got {other!r}")
        if not 0.0 < float(energy) <= 1.0 or (rank is not None and int(rank) < 1) or float(rcond) < 0:
            raise ValueError(f"stf: need 0 < energy <= 1, rank >= 1 or None, rcond >= 0; got {energy}, {rank}, {rcond}")
        self.rank, self.energy, self.rcond = rank, float(energy), float(rcond)
        self.other, self.other_lambda = other, float(other_lambda)

    def merge(self, suite: Any, *, tasks: Sequence[str] | None = None, few_shot: Any = None) -> State:
        from zoo.task import torch_threads

        idx = list(range(len(suite.tasks))) if tasks is None else [suite.tasks.index(t) for t in tasks]
        with torch_threads(1):  # small dense solves: more threads only oversubscribe a busy CPU (minutes, measured)
            return stf_merge(suite.base_state, [suite.task_states[i] for i in idx],
                             linear_weight_names(suite.architecture()), rank=self.rank, energy=self.energy,
                             rcond=self.rcond, other=self.other, other_lambda=self.other_lambda)

    def stored_floats(self, suite: Any) -> int:
        """One merged network."""
        return sum(v.numel() for v in suite.base_state.values())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise TypeError("STFMerge is a merging method: call .merge(suite) and load the state into suite.architecture()")


def stf(preset: str = "cpu", rank: int | None = None, energy: float | None = None, rcond: float | None = None,
        other: str | None = None, other_lambda: float | None = None) -> STFMerge:
    """The zoo builder: ``preset`` ("cpu" or "paper"), then any argument given (None keeps the preset's value; the
    presets keep every feature: ``rank=None``)."""
    if preset not in PRESETS:
        raise ValueError(f"stf: unknown preset {preset!r}; choose from {list(PRESETS)}")
    given = {"rank": rank, "energy": energy, "rcond": rcond, "other": other, "other_lambda": other_lambda}
    return STFMerge(**{**PRESETS[preset], **{k: v for k, v in given.items() if v is not None}})
