"""GFUCB, Generalized Functional Upper Confidence Bound (Lu, Zhao, Du and Huang, NeurIPS 2022, arXiv:2205.15701).

M contextual bandits are played concurrently. Every task's reward is linear in one representation shared by all
tasks, ``f_i(x) = w_i . phi(x)``, with ``phi`` from a general class (here a ReLU MLP): the paper's *multihead*
function class. At every round GFUCB (i) fits the multihead class to all tasks' data at once (the least-squares ERM
``min_{phi, w_1..w_M} sum_i sum_s (w_i . phi(x_s^i) - r_s^i)^2``), (ii) keeps a confidence set of multihead functions
whose predictions on the data stay within ``beta`` of the ERM's, and (iii) pulls in every task the arm of the most
optimistic function in that set (Section 4, Algorithm 1: "GFUCB").

What runs here, and where it departs from the paper's text (read through the abstract and secondary summaries only;
the paper's appendix and experimental hyperparameters were not available):

* the ERM over the multihead class is Adam on the joint squared loss, refitted every ``update_every`` rounds for
  ``train_steps`` minibatches of ``batch_size`` rounds (all M tasks' observations of those rounds), warm-started;
* the confidence set is restricted to the heads with ``phi`` frozen at its ERM ``phi_hat``: with a ridge term it is the
  ellipsoid ``sum_i ||w_i - w_hat_i||^2_{V_i} <= beta``, ``V_i = ridge I + sum_s phi_hat(x_s^i) phi_hat(x_s^i)^T``;
  its optimistic value is bounded per task by ``w_hat_i . phi_hat(x) + alpha ||phi_hat(x)||_{V_i^{-1}}`` (the
  block-wise relaxation), with ``w_hat_i`` the ridge solution on ``phi_hat``. This is the neural-linear ridge bonus the
  catalog flags: the paper's set also varies ``phi``, whose width (an eluder-dimension term) is not computed;
* ``alpha`` (``sqrt(beta)``) is a constant, not the theorem's ``beta_t``.

CPU defaults (``CPU``): ``phi`` = 2 ReLU layers of 64 units, ridge 1, alpha 1, refit every 20 rounds for 40 Adam steps
(lr 3e-3) on 64 rounds. The task's single-task ``neural_ucb`` is the same learner with one network per task.
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_control_toy.baselines import RidgeUCB
from zoo_task_control_toy.data import BANDIT

__all__ = ["CPU", "GFUCB", "gfucb"]

CPU: dict[str, Any] = {"hidden": 64, "alpha": 1.0, "ridge": 1.0, "update_every": 20, "train_steps": 40,
                       "batch_size": 64, "lr": 3e-3}


class GFUCB(nn.Module):
    """Multitask UCB on a shared learned representation ``phi`` with per-task linear heads (the multihead class).

    Args:
        n_tasks: M, the concurrent bandits (one head each).
        dim: context features per arm.
        hidden: width of both ReLU layers of ``phi`` (its output is the representation).
        alpha: optimism scale (``sqrt(beta)``).
        ridge: ridge of the per-task head statistics.
        update_every, train_steps, batch_size, lr: the ERM refit schedule (Adam, ``batch_size`` rounds per step).

    >>> m = GFUCB(n_tasks=3, dim=5, hidden=8)
    >>> ctx = torch.randn(3, 4, 5)
    >>> s = m.scores(ctx); s.shape
    torch.Size([3, 4])
    >>> m.update(ctx, s.argmax(1), torch.tensor([1.0, 0.0, -1.0]))
    """

    input_kind = "bandit"

    def __init__(self, n_tasks: int = BANDIT["n_tasks"], dim: int = BANDIT["dim"], hidden: int = CPU["hidden"],
                 alpha: float = CPU["alpha"], ridge: float = CPU["ridge"], update_every: int = CPU["update_every"],
                 train_steps: int = CPU["train_steps"], batch_size: int = CPU["batch_size"], lr: float = CPU["lr"]) -> None:
        super().__init__()
        for name, v in (("n_tasks", n_tasks), ("dim", dim), ("hidden", hidden), ("update_every", update_every),
                        ("batch_size", batch_size)):
            if int(v) < 1:
                raise ValueError(f"GFUCB: {name} must be >= 1, got {v}")
        if alpha < 0 or ridge <= 0:
            raise ValueError(f"GFUCB: alpha must be >= 0 and ridge > 0, got alpha={alpha}, ridge={ridge}")
        self.n_tasks, self.dim, self.hidden, self.alpha, self.ridge = n_tasks, dim, hidden, alpha, ridge
        self.update_every, self.train_steps, self.batch_size, self.lr = update_every, train_steps, batch_size, lr
        self.phi = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())  # shared
        self.heads = nn.Parameter(torch.zeros(n_tasks, hidden))  # w_i: the multihead class's task-specific part
        self.reset()

    def reset(self) -> None:
        """Forget the played rounds (the network keeps its weights)."""
        self.xs: list[torch.Tensor] = []
        self.rs: list[torch.Tensor] = []
        self.stats = RidgeUCB(self.n_tasks, self.hidden, self.ridge)
        self.gen = torch.Generator().manual_seed(0)

    def predict(self, contexts: torch.Tensor) -> torch.Tensor:
        """The ERM's reward predictions ``w_i . phi(x)`` (M, K) (no optimism)."""
        return (self.phi(contexts) * self.heads[:, None]).sum(-1)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        """Optimistic values (M, K): ridge head on ``phi_hat`` plus ``alpha ||phi_hat(x)||_{V_i^{-1}}``."""
        if contexts.ndim != 3 or contexts.shape[0] != self.n_tasks or contexts.shape[2] != self.dim:
            raise ValueError(f"GFUCB: contexts must be (M, K, d) = ({self.n_tasks}, K, {self.dim}), "
                             f"got {tuple(contexts.shape)}")
        with torch.no_grad():
            f = self.phi(contexts.float())
        return self.stats.ucb(f, self.alpha)

    forward = scores

    def update(self, contexts: torch.Tensor, actions: torch.Tensor, rewards: torch.Tensor) -> None:
        """Record the pulled arms' contexts and rewards; refit the multihead ERM every ``update_every`` rounds."""
        x = contexts.float()[torch.arange(contexts.shape[0]), actions]
        self.xs.append(x)
        self.rs.append(rewards.float())
        if len(self.xs) % self.update_every == 0:
            self.fit()
        else:
            with torch.no_grad():
                self.stats.update(self.phi(x), rewards.float())

    def fit(self) -> None:
        """The multihead least-squares ERM over every task's data (shared ``phi``, heads ``w_i``), then the head
        statistics ``V_i``, ``b_i`` recomputed on the new ``phi_hat``."""
        x, r = torch.stack(self.xs, 1), torch.stack(self.rs, 1)  # (M, n, d), (M, n)
        opt = torch.optim.Adam(self.parameters(), lr=self.lr)
        with torch.enable_grad():
            for _ in range(self.train_steps):
                idx = torch.randint(0, x.shape[1], (min(self.batch_size, x.shape[1]),), generator=self.gen)
                loss = F.mse_loss(self.predict(x[:, idx]), r[:, idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            f = self.phi(x)
        self.stats.refit(list(f), list(r))


def gfucb(**overrides: Any) -> GFUCB:
    """GFUCB at the CPU defaults (``CPU``), any field (and ``n_tasks``, ``dim``) overridden by keyword.

    >>> gfucb(hidden=32).hidden
    32
    """
    unknown = set(overrides) - set(CPU) - {"n_tasks", "dim"}
    if unknown:
        raise ValueError(f"gfucb: unknown option(s) {sorted(unknown)}; the options are {sorted(CPU)}, n_tasks, dim")
    return GFUCB(**{**CPU, **overrides})
