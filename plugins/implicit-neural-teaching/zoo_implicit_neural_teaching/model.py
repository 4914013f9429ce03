"""Implicit Neural Teaching (INT): train an INR on the signal fragments a greedy teacher selects.

Zhang, Luo, Li, Wu, Wong, "Nonparametric Teaching of Implicit Neural Representations", ICML 2024
(arXiv 2405.10531), Sec. 4 and Algorithm 1. Training an overparameterised MLP by gradient descent
evolves the function it represents like functional gradient descent; the functional gradient of the
L2 loss at a coordinate is the residual ``f(x_i) - y_i``, so the greedy teacher picks the examples
with the largest residual norm and the learner takes a step on those only:

    every ``interval`` steps:  r_i = sum_c |f(x_i)_c - y_i,c|   (one forward pass, no gradient)
                               S   = the ratio * N coordinates with the largest r_i
    every step:                theta <- Adam step on  mean_{i in S} ||f(x_i) - y_i||^2

The paper's defaults (and its released scripts): the selected fraction starts at 0.2 and grows in
10 equal stages to 1.0 over the run ("step" schedule); the selection is redone every step during the
first quarter of the run and the first stage, then at intervals that grow in 5 increments up to
~50 steps ("incremental" strategy); Adam with a cosine learning-rate decay to 1e-6. ``select="random"``
draws the subset uniformly instead (the paper's random-sampling ablation).
"""
from __future__ import annotations

import logging
import math
from typing import Any

import torch
from torch import nn

from zoo.task import run_budget
from zoo_nn.inr import FourierFeatureMLP, Siren

log = logging.getLogger(__name__)

__all__ = ["ratio_at", "reselect_at", "select_examples", "Teacher", "teach", "IntSiren", "IntFourierMLP",
           "int_siren", "int_relu_ff"]

RATIO_SCHEDULES = ("constant", "linear", "step", "cosine", "reverse-cosine")
STRATEGIES = ("dense", "incremental")


def ratio_at(schedule: str, step: int, total: int, start: float = 0.2) -> float:
    """The fraction of coordinates the teacher selects at ``step`` of ``total`` (the paper's schedules).

    "step" (default): ``start`` for the first tenth of the run, then +(1 - start)/10 per tenth.

    >>> [round(ratio_at("step", s, 100), 2) for s in (0, 9, 10, 55, 99)]
    [0.2, 0.2, 0.28, 0.6, 0.92]
    """
    f = step / max(total, 1)
    if schedule == "constant":
        return start
    if schedule == "linear":
        return start + f * (1.0 - start)
    if schedule == "step":
        return min(start + math.floor(f * 10) * (1.0 - start) / 10, 1.0)
    if schedule == "cosine":
        return 1.0 - 0.5 * (1.0 - start) * (1.0 + math.cos(f * math.pi))
    if schedule == "reverse-cosine":
        return start - 0.5 * (start - 0.2) * (1.0 - math.cos(f * math.pi))
    raise ValueError(f"unknown ratio schedule {schedule!r}; choose from {', '.join(RATIO_SCHEDULES)}")


def reselect_at(strategy: str, step: int, total: int, max_interval: int = 50, increments: int = 5,
                startup: float = 0.25) -> bool:
    """Whether the teacher selects a new subset at ``step`` (else the learner reuses the last one).

    "incremental": every step during the first ``startup`` fraction of the run (and the first
    increment), then every k steps, k growing by ``max_interval // increments`` per increment.

    >>> [reselect_at("incremental", s, 1000) for s in (3, 251, 350, 355, 900)]
    [True, False, True, False, True]
    """
    if strategy == "dense":
        return True
    if strategy == "incremental":
        start = int(total * startup)
        size = max((total - start) // increments, 1)
        if step < start or step // size == 0:
            return True
        interval = max(max_interval // increments * (max(1, step - start) // size + 1), 1)
        return step % interval == 0
    raise ValueError(f"unknown teaching strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")


def select_examples(pred: torch.Tensor, target: torch.Tensor, n: int, *, select: str = "topk",
                    generator: torch.Generator | None = None) -> torch.Tensor:
    """Indices of the ``n`` examples the teacher gives the learner.

    "topk": the largest residuals ``sum_c |pred - target|`` (the functional-gradient greedy teacher);
    "random": ``n`` uniformly drawn indices (the random-sampling ablation).

    >>> select_examples(torch.tensor([[0.0], [0.5], [0.1]]), torch.zeros(3, 1), 2).tolist()
    [1, 2]
    """
    if select == "topk":
        return torch.topk((pred - target).abs().sum(-1), n, sorted=True).indices
    if select == "random":
        return torch.randperm(pred.shape[0], generator=generator)[:n]
    raise ValueError(f"unknown selection {select!r}; choose 'topk' (INT) or 'random'")


class Teacher:
    """One teaching run, step by step: ``step()`` selects (when due) and trains once on the selection.

    Stepping by hand lets a benchmark interleave several runs in one process.

    >>> m = Siren(hidden=16, layers=2)
    >>> t = Teacher(m, torch.rand(64, 2) * 2 - 1, torch.rand(64, 1), total=10)
    >>> round(t.step(), 3) >= 0 and t.n_selected == 12
    True
    """

    def __init__(self, model: nn.Module, coords: torch.Tensor, values: torch.Tensor, *, total: int,
                 ratio: float = 0.2, schedule: str = "step", strategy: str = "incremental", select: str = "topk",
                 lr: float = 1e-4, lr_schedule: str | None = "cosine", min_lr: float = 1e-6, seed: int = 0):
        if not 0.0 < ratio <= 1.0:
            raise ValueError(f"ratio must be in (0, 1], got {ratio}")
        ratio_at(schedule, 0, 1)
        reselect_at(strategy, 0, 1)
        self.model, self.x, self.y, self.total = model, coords, values, int(total)
        self.ratio, self.schedule, self.strategy, self.select = ratio, schedule, strategy, select
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        if lr_schedule == "cosine":
            self.sched = torch.optim.lr_scheduler.CosineAnnealingLR(self.opt, self.total, eta_min=min_lr)
        elif lr_schedule is None:
            self.sched = None
        else:
            raise ValueError(f"unknown lr_schedule {lr_schedule!r}; choose 'cosine' or None")
        self.gen = torch.Generator().manual_seed(seed)
        self.i, self.idx, self.n_selected, self.selections = 0, None, 0, 0

    def step(self) -> float:
        """Select (when the strategy says so) and take one Adam step on the selected examples."""
        n_all = self.x.shape[0]
        n = max(1, min(n_all, int(ratio_at(self.schedule, self.i, self.total, self.ratio) * n_all)))
        if n >= n_all:
            self.idx = None
        elif self.idx is None or reselect_at(self.strategy, self.i, self.total) or n != self.idx.numel():
            with torch.no_grad():
                pred = self.model(self.x) if self.select == "topk" else self.y
            self.idx = select_examples(pred, self.y, n, select=self.select, generator=self.gen)
            self.selections += 1
        xb, yb = (self.x, self.y) if self.idx is None else (self.x[self.idx], self.y[self.idx])
        self.n_selected = int(xb.shape[0])
        loss = torch.mean((self.model(xb) - yb) ** 2)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()
        if self.sched is not None:
            self.sched.step()
        self.i += 1
        return loss.item()


def teach(model: nn.Module, coords: torch.Tensor, values: torch.Tensor, steps: int, ratio: float = 0.2, *,
          schedule: str = "step", strategy: str = "incremental", select: str = "topk", lr: float = 1e-4,
          lr_schedule: str | None = "cosine", budget_s: float | None = None, seed: int = 0,
          progress: str | None = None) -> dict[str, Any]:
    """Fit ``model`` to (coords, values) with INT for ``steps`` steps; return the history.

    ``losses`` holds the MSE on each step's selected examples (before the update).

    >>> m = Siren(hidden=16, layers=2)
    >>> h = teach(m, torch.rand(64, 2) * 2 - 1, torch.rand(64, 1), steps=5)
    >>> h["steps"], len(h["losses"])
    (5, 5)
    """
    model.train()
    t = Teacher(model, coords, values, total=steps, ratio=ratio, schedule=schedule, strategy=strategy,
                select=select, lr=lr, lr_schedule=lr_schedule, seed=seed)
    losses: list[float] = []

    def step(_: int) -> float:
        losses.append(t.step())
        return losses[-1]

    out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    model.eval()
    return {**out, "losses": losses, "selections": t.selections}


class _Taught:
    """Mixin: ``image_fit`` trains the model by INT (``fit``) instead of full-batch Adam."""

    ratio: float
    schedule: str
    strategy: str
    default_lr: float

    def fit(self, signal, *, steps: int | None, budget_s: float | None = None, seed: int = 0,
            progress: str | None = None) -> dict[str, Any]:
        if steps is None:
            raise ValueError("INT needs steps= (its ratio and interval schedules are fractions of the run)")
        return teach(self, signal.coords, signal.values, steps, self.ratio, schedule=self.schedule,
                     strategy=self.strategy, lr=self.default_lr, budget_s=budget_s, seed=seed, progress=progress)


class IntSiren(_Taught, Siren):
    """A SIREN (``zoo_nn.inr.Siren``) that ``image_fit`` trains by Implicit Neural Teaching."""

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 64, layers: int = 3,
                 w0: float = 30.0, ratio: float = 0.2, schedule: str = "step", strategy: str = "incremental",
                 lr: float = 1e-4):
        super().__init__(in_features, out_features, hidden, layers, w0)
        self.ratio, self.schedule, self.strategy, self.default_lr = ratio, schedule, strategy, lr


class IntFourierMLP(_Taught, FourierFeatureMLP):
    """A ReLU MLP on Gaussian Fourier features that ``image_fit`` trains by Implicit Neural Teaching."""

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 16, layers: int = 3,
                 n_features: int = 256, sigma: float = 5.0, ratio: float = 0.2, schedule: str = "step",
                 strategy: str = "incremental", lr: float = 1e-3):
        super().__init__(in_features, out_features, hidden, layers, n_features, sigma, seed=0)
        self.ratio, self.schedule, self.strategy, self.default_lr = ratio, schedule, strategy, lr


def int_siren(in_features: int = 2, out_features: int = 1, hidden: int = 64, layers: int = 3, w0: float = 30.0,
              ratio: float = 0.2, schedule: str = "step", strategy: str = "incremental",
              lr: float = 1e-4) -> IntSiren:
    """SIREN trained by INT (paper defaults: start ratio 0.2, "step" schedule, "incremental" reselection).

    >>> int_siren(hidden=8)(torch.zeros(3, 2)).shape
    torch.Size([3, 1])
    """
    return IntSiren(in_features, out_features, hidden, layers, w0, ratio, schedule, strategy, lr)


def int_relu_ff(in_features: int = 2, out_features: int = 1, hidden: int = 16, layers: int = 3,
                n_features: int = 256, sigma: float = 5.0, ratio: float = 0.2, schedule: str = "step",
                strategy: str = "incremental", lr: float = 1e-3) -> IntFourierMLP:
    """ReLU + Fourier-features MLP trained by INT.

    >>> int_relu_ff(hidden=8, n_features=16)(torch.zeros(3, 2)).shape
    torch.Size([3, 1])
    """
    return IntFourierMLP(in_features, out_features, hidden, layers, n_features, sigma, ratio, schedule, strategy, lr)
