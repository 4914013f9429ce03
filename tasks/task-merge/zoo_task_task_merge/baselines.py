"""The merging baselines of ``task_merge``, as plain functions on a ``Suite`` and as merger modules.

Plain functions (each returns a state dict the suite's architecture loads):

- ``weight_averaging(suite)``: the mean of the fine-tuned models (Wortsman et al. 2022's uniform soup);
- ``task_arithmetic(suite, lam)``: ``theta_0 + lam * sum_t tau_t`` (Ilharco et al. 2023, Sec. 2);
- ``ties(suite, lam, k=0.2)``: TIES-merging (Yadav et al. 2023, Sec. 3 / Algorithm 1): trim each task vector to
  its top-``k`` fraction of entries by magnitude, elect each entry's sign as the sign of the summed trimmed values,
  take the disjoint mean over the tasks that agree with it, and add ``lam`` times the result;
- ``negation(suite, target, lam)``: ``theta_0 - lam * tau_target`` (Ilharco et al. 2023, Sec. 3);
- ``select_lambda(suite, merge_at, grid)`` / ``select_negation(suite, target)``: the coefficient chosen on the
  validation split, as in Ilharco et al. (highest mean validation accuracy; for negation the lowest target
  accuracy whose control accuracy stays >= 95% of the base's).

Merger modules (``build_baseline``): parameter-free ``nn.Module``s with ``merge(suite, *, tasks=None,
few_shot=None) -> state_dict``, the model contract of mode ``merge``; ``base`` returns the pretrained state and
``individual`` gives each task its own fine-tuned model (``per_task_states``): the two reference rows.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from .suite import CONTROL, Suite

State = dict[str, torch.Tensor]

LAMBDA_GRID = tuple(round(0.05 * i, 2) for i in range(21))  # 0, 0.05, ..., 1.0: Ilharco et al.'s grid
TIES_GRID = tuple(round(0.1 * i, 1) for i in range(31))  # 0, 0.1, ..., 3.0: the disjoint mean is not a sum
TIES_K = 0.2  # keep the top 20% of each task vector (Yadav et al.'s default)
NEG_CONTROL = 0.95  # negation keeps the control accuracy >= 95% of the base's


def _indices(suite: Suite, tasks: Sequence[str | int] | None) -> list[int]:
    if tasks is None:
        return list(range(len(suite.tasks)))
    idx = [suite.tasks.index(suite._name(t)) for t in tasks]
    if not idx:
        raise ValueError("task_merge: tasks must name at least one task")
    return idx


def weight_averaging(suite: Suite, tasks: Sequence[str | int] | None = None) -> State:
    """The elementwise mean of the fine-tuned states of ``tasks`` (all by default)."""
    idx = _indices(suite, tasks)
    return {k: torch.stack([suite.task_states[i][k] for i in idx]).mean(0) for k in suite.base_state}


def task_arithmetic(suite: Suite, lam: float, tasks: Sequence[str | int] | None = None) -> State:
    """``theta_0 + lam * sum_t tau_t`` over ``tasks`` (all by default)."""
    idx = _indices(suite, tasks)
    return {k: v + lam * sum(suite.task_vectors[i][k] for i in idx) for k, v in suite.base_state.items()}


def ties_vector(suite: Suite, k: float = TIES_K, tasks: Sequence[str | int] | None = None) -> State:
    """TIES's merged task vector (trim, elect sign, disjoint mean), before scaling; trimming keeps the top ``k`` of
    each task vector's entries over the whole network, as in the paper."""
    if not 0.0 < float(k) <= 1.0:
        raise ValueError(f"ties: k is the kept fraction of each task vector, in (0, 1]; got {k}")
    idx = _indices(suite, tasks)
    names = list(suite.base_state)
    flat = torch.stack([torch.cat([suite.task_vectors[i][n].flatten() for n in names]) for i in idx])  # (T, P)
    keep = max(1, int(round(float(k) * flat.shape[1])))
    thresh = flat.abs().kthvalue(flat.shape[1] - keep + 1, dim=1, keepdim=True).values
    trimmed = torch.where(flat.abs() >= thresh, flat, torch.zeros_like(flat))
    sign = torch.sign(trimmed.sum(0))  # the elected sign: that of the larger total mass
    agree = (torch.sign(trimmed) == sign) & (trimmed != 0)
    merged = (trimmed * agree).sum(0) / agree.sum(0).clamp(min=1)
    out, start = {}, 0
    for n in names:
        size = suite.base_state[n].numel()
        out[n] = merged[start:start + size].view_as(suite.base_state[n])
        start += size
    return out


def ties(suite: Suite, lam: float, k: float = TIES_K, tasks: Sequence[str | int] | None = None) -> State:
    """TIES-merging: ``theta_0 + lam * ties_vector(suite, k)``."""
    tau = ties_vector(suite, k, tasks)
    return {n: v + lam * tau[n] for n, v in suite.base_state.items()}


def negation(suite: Suite, target: str | int, lam: float) -> State:
    """``theta_0 - lam * tau_target``: forgetting one task by subtracting its task vector."""
    i = _indices(suite, [target])[0]
    return {k: v - lam * suite.task_vectors[i][k] for k, v in suite.base_state.items()}


def mean_accuracy(suite: Suite, state: State, tasks: Sequence[str | int] | None = None, split: str = "val") -> float:
    idx = _indices(suite, tasks)
    return sum(suite.accuracy(state, i, split) for i in idx) / len(idx)


def select_lambda(suite: Suite, merge_at: Callable[[float], State], grid: Sequence[float] = LAMBDA_GRID,
                  tasks: Sequence[str | int] | None = None) -> tuple[float, State]:
    """The ``lam`` of ``grid`` whose ``merge_at(lam)`` has the highest mean validation accuracy over ``tasks``
    (ties go to the smaller ``lam``), and that merged state."""
    best: tuple[float, float, State] | None = None
    for lam in grid:
        state = merge_at(float(lam))
        acc = mean_accuracy(suite, state, tasks)
        if best is None or acc > best[0]:
            best = (acc, float(lam), state)
    if best is None:
        raise ValueError("select_lambda: empty grid")
    return best[1], best[2]


def select_negation(suite: Suite, target: str | int, vector: State | None = None,
                    grid: Sequence[float] = LAMBDA_GRID, control: str = CONTROL,
                    min_control: float = NEG_CONTROL) -> tuple[float, State]:
    """Ilharco et al.'s negation protocol: among ``theta_0 - lam * vector`` (``vector`` defaults to the target's task
    vector) with control validation accuracy >= ``min_control`` times the base's, the one with the lowest target
    validation accuracy (``lam = 0``, the base, always qualifies)."""
    i = _indices(suite, [target])[0]
    tau = suite.task_vectors[i] if vector is None else vector
    floor = min_control * suite.accuracy(suite.base_state, control, "val")
    best: tuple[float, float, State] | None = None
    for lam in sorted(set([0.0, *map(float, grid)])):
        state = {k: v - lam * tau[k] for k, v in suite.base_state.items()}
        if suite.accuracy(state, control, "val") < floor:
            continue
        acc = suite.accuracy(state, i, "val")
        if best is None or acc < best[0]:
            best = (acc, lam, state)
    assert best is not None  # lam = 0 always qualifies
    return best[1], best[2]


class Merger(nn.Module):
    """A parameter-free merging baseline (the model contract of mode ``merge``)."""

    chosen: dict[str, Any]

    def __init__(self) -> None:
        super().__init__()
        self.chosen = {}

    def merge(self, suite: Suite, *, tasks: Sequence[str] | None = None, few_shot: Any = None) -> State:
        raise NotImplementedError

    def stored_floats(self, suite: Suite) -> int:
        """Floats kept to serve every task: one merged network."""
        return suite.n_params()

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # mergers are used through merge()
        raise TypeError(f"{type(self).__name__} is a merging method: call .merge(suite), then load the state into "
                        "suite.architecture()")


class WeightAveraging(Merger):
    def merge(self, suite: Suite, *, tasks: Sequence[str] | None = None, few_shot: Any = None) -> State:
        return weight_averaging(suite, tasks)


class TaskArithmetic(Merger):
    """Task arithmetic with one global ``lam`` chosen on validation from ``grid``; also negates (``negate``)."""

    def __init__(self, grid: Sequence[float] = LAMBDA_GRID) -> None:
        super().__init__()
        self.grid = tuple(float(g) for g in grid)

    def merge(self, suite: Suite, *, tasks: Sequence[str] | None = None, few_shot: Any = None) -> State:
        lam, state = select_lambda(suite, lambda lam: task_arithmetic(suite, lam, tasks), self.grid, tasks)
        self.chosen = {"lambda": lam}
        return state

    def negate(self, suite: Suite, target: str | int, *, control: str = CONTROL) -> State:
        lam, state = select_negation(suite, target, grid=self.grid, control=control)
        self.chosen = {"neg_lambda": lam}
        return state


class Ties(Merger):
    """TIES-merging with the top-``k`` fraction kept and ``lam`` chosen on validation from ``grid``."""

    def __init__(self, k: float = TIES_K, grid: Sequence[float] = TIES_GRID) -> None:
        super().__init__()
        self.k, self.grid = float(k), tuple(float(g) for g in grid)

    def merge(self, suite: Suite, *, tasks: Sequence[str] | None = None, few_shot: Any = None) -> State:
        tau = ties_vector(suite, self.k, tasks)
        lam, state = select_lambda(suite, lambda lam: {n: v + lam * tau[n] for n, v in suite.base_state.items()},
                                   self.grid, tasks)
        self.chosen = {"lambda": lam}
        return state


class Base(Merger):
    """Reference row: the pretrained network, unchanged."""

    def merge(self, suite: Suite, *, tasks: Sequence[str] | None = None, few_shot: Any = None) -> State:
        return {k: v.clone() for k, v in suite.base_state.items()}


class Individual(Merger):
    """Reference row: each task scored with its own fine-tuned network (T networks kept: the upper reference)."""

    def per_task_states(self, suite: Suite, tasks: Sequence[str] | None = None) -> list[State]:
        return [suite.task_states[i] for i in _indices(suite, tasks)]

    def stored_floats(self, suite: Suite) -> int:
        return suite.n_params() * len(suite.tasks)


BASELINES: dict[str, type[Merger]] = {"weight_averaging": WeightAveraging, "task_arithmetic": TaskArithmetic,
                                      "ties": Ties, "base": Base, "individual": Individual}


def build(name: str, **options: Any) -> Merger:
    """The merger module of baseline ``name``; unknown names raise ``ValueError`` listing the valid ones."""
    if name not in BASELINES:
        raise ValueError(f"task_merge: unknown baseline {name!r}; choose from {list(BASELINES)}")
    return BASELINES[name](**options)
