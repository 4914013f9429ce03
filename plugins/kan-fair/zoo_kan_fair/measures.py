"""KANbeFair's two measures beside accuracy: FLOPs per example, and forgetting in class-incremental learning.

FLOPs per example follow the paper's accounting (Yu et al. 2024, Sec. 3 and the authors' README):
a linear layer costs ``2 * d_in * d_out``; an activation ``FLOPS_PER_ACTIVATION[name]`` per neuron;
a B-spline of order ``k`` on ``G`` intervals ``9k(G + 1.5k) + 2G - 2.5k - 1`` per evaluation (De Boor),
so a KAN layer costs ``d_in * d_out * (9k(G + 1.5k) + 2G - 2.5k + 1)`` plus its shortcut
(``act * d_in + 2 * d_in * d_out``), and a B-spline activation layer ``d_out * (9k(G + 1.5k) + 2G - 2.5k - 1)``.
"""
from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from zoo_nn.kan import BSplineKANLayer
from zoo_task_digits import task as digits

from .model import BSplineActivation

__all__ = ["FLOPS_PER_ACTIVATION", "flops", "class_incremental", "TASKS_SPLIT"]

FLOPS_PER_ACTIVATION = {"Identity": 0, "ReLU": 1, "Sigmoid": 4, "SiLU": 5, "Tanh": 6, "GELU": 14}


def _spline_eval(grid_size: int, k: int) -> float:
    return 9 * k * (grid_size + 1.5 * k) + 2 * grid_size - 2.5 * k - 1


def flops(model: nn.Module) -> float:
    """Forward FLOPs per example of a vector network (each module applied once per example).

    Counts ``nn.Linear``, activations in ``FLOPS_PER_ACTIVATION``, ``BSplineKANLayer`` and
    ``BSplineActivation``; raises on anything else that has parameters (conv, attention, norms).

    >>> flops(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU()))
    28.0
    """
    total, prev_out, skip = 0.0, None, set()
    for m in model.modules():  # pre-order: the order of the forward pass for these stacks
        if id(m) in skip:
            continue
        if isinstance(m, nn.Linear):
            total += 2 * m.in_features * m.out_features
            prev_out = m.out_features
        elif isinstance(m, BSplineKANLayer):
            n_in, n_out = m.in_features, m.out_features
            act = FLOPS_PER_ACTIVATION[type(m.base_activation).__name__]
            total += n_in * n_out * (_spline_eval(m.grid_size, m.spline_order) + 2) + act * n_in + 2 * n_in * n_out
            skip.add(id(m.base_activation))
            prev_out = n_out
        elif isinstance(m, BSplineActivation):
            total += m.num_features * _spline_eval(m.grid_size, m.spline_order)
        elif type(m).__name__ in FLOPS_PER_ACTIVATION:
            total += FLOPS_PER_ACTIVATION[type(m).__name__] * (prev_out or 0)
        elif any(True for _ in m.parameters(recurse=False)):
            raise TypeError(f"flops() does not know how to count {type(m).__name__}")
    return float(total)


# Class-incremental digits: 5 tasks of two classes each, one 10-way head, one Adam optimizer kept
# across tasks (the authors' continual-learning script); metrics as theirs: average accuracy over
# tasks after the last one, and backward transfer BWT = mean_i (acc_i after the last task - acc_i
# right after task i). Forgetting is -BWT.
TASKS_SPLIT: tuple[tuple[int, ...], ...] = ((0, 1), (2, 3), (4, 5), (6, 7), (8, 9))


@torch.no_grad()
def _accuracy(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> float:
    model.eval()
    return float((model(x).argmax(-1) == y).float().mean())


def class_incremental(model: nn.Module, *, tasks: Sequence[Sequence[int]] = TASKS_SPLIT, steps_per_task: int = 150,
                      lr: float = 1e-3, batch_size: int = 64, seed: int = 0) -> dict[str, float]:
    """Train ``model`` (a digits_classify model) on ``tasks`` in sequence; return its accuracy matrix summary.

    Returns ``average_accuracy``, ``bwt`` (backward transfer), ``forgetting`` (= -bwt) and
    ``acc_after_own_task`` (mean accuracy of each task right after learning it).
    """
    x_tr, y_tr, x_te, y_te = digits.load_split()
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    acc: dict[tuple[int, int], float] = {}
    test_sets = [(x_te[torch.isin(y_te, torch.tensor(t))], y_te[torch.isin(y_te, torch.tensor(t))]) for t in tasks]
    for i, classes in enumerate(tasks):
        idx = torch.nonzero(torch.isin(y_tr, torch.tensor(classes))).squeeze(1)
        model.train()
        for _ in range(steps_per_task):
            b = idx[torch.randint(len(idx), (batch_size,), generator=g)]
            loss = nn.functional.cross_entropy(model(x_tr[b]), y_tr[b])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        for j in range(i + 1):
            acc[(i, j)] = _accuracy(model, *test_sets[j])
    last = len(tasks) - 1
    final = [acc[(last, j)] for j in range(len(tasks))]
    bwt = sum(acc[(last, j)] - acc[(j, j)] for j in range(len(tasks))) / len(tasks)
    return {"average_accuracy": sum(final) / len(final), "bwt": bwt, "forgetting": -bwt,
            "acc_after_own_task": sum(acc[(j, j)] for j in range(len(tasks))) / len(tasks)}

