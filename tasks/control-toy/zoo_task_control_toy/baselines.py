"""Baselines of ``control_toy``.

Bandits (``scores(contexts (M, K, d)) -> (M, K)``, ``update(contexts, actions, rewards)``):

* ``linucb``: independent per-task LinUCB (Li et al. 2010) on the raw context and a bias, ridge 1, bonus
  ``alpha ||x||_{A_i^{-1}}``; no trainable parameters.
* ``neural_ucb``: single-task neural(-linear) UCB: every task has its own ReLU MLP, fitted to its own rewards only every
  ``update_every`` rounds, and a ridge head with bonus ``alpha ||phi_i(x)||_{A_i^{-1}}`` on its last hidden layer
  (Riquelme et al. 2018's neural-linear; NeuralUCB's gradient features would be as large as the net). Sized by width.
* ``random``: uniform random arms.

Gridworld (``encode(states, rewards) -> z``, ``policy(s, z) -> logits``, ``pretrain(data, ...)``):

* ``goal_conditioned``: a goal-conditioned Q-network ``Q(s, a, g)`` trained offline by Q-learning on the random-walk
  transitions with hindsight goals (reward 1 on reaching g, episode ends there); zero-shot it is given as goal the
  sampled state with the highest reward. Sized by width.
* ``per_task``: value iteration on the task's own data: the reward of every state is that of its nearest labelled
  sample (Manhattan distance; ties averaged), the dynamics are the offline data's; no trainable parameters.
* ``random``: the uniform policy.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from . import data as D

# ------------------------------------------------------------------------------------------ bandits
ALPHA = 1.0  # every UCB here and the models' defaults: the same exploration scale
RIDGE = 1.0


class RidgeUCB:
    """Per-task ridge regression with a UCB bonus on given features: ``A_i = ridge I + sum x x^T``, ``b_i = sum r x``.

    >>> r = RidgeUCB(n_tasks=2, dim=3)
    >>> r.update(torch.eye(3)[:2], torch.tensor([1.0, 2.0]))
    >>> r.ucb(torch.eye(3)[None].expand(2, 3, 3), alpha=0.0)
    tensor([[0.5000, 0.0000, 0.0000],
            [0.0000, 1.0000, 0.0000]])
    """

    def __init__(self, n_tasks: int, dim: int, ridge: float = RIDGE) -> None:
        self.ridge = ridge
        self.a_inv = torch.eye(dim).repeat(n_tasks, 1, 1) / ridge
        self.b = torch.zeros(n_tasks, dim)

    def update(self, x: torch.Tensor, r: torch.Tensor) -> None:
        """One observation per task: ``x`` (M, f), ``r`` (M,) (Sherman-Morrison on ``A^{-1}``)."""
        ax = torch.einsum("mij,mj->mi", self.a_inv, x)
        self.a_inv = self.a_inv - torch.einsum("mi,mj->mij", ax, ax) / (1 + (x * ax).sum(-1))[:, None, None]
        self.b = self.b + r[:, None] * x

    def refit(self, feats: list[torch.Tensor], rewards: list[torch.Tensor]) -> None:
        """Recompute every task's statistics from all its data (features changed): lists of (n_i, f) and (n_i,)."""
        dim = self.b.shape[1]
        a = torch.stack([self.ridge * torch.eye(dim) + f.T @ f for f in feats])
        self.a_inv = torch.linalg.inv(a)
        self.b = torch.stack([f.T @ r for f, r in zip(feats, rewards, strict=True)])

    def ucb(self, x: torch.Tensor, alpha: float) -> torch.Tensor:
        """``theta_i . x + alpha ||x||_{A_i^{-1}}`` for features ``x`` (M, K, f) -> (M, K)."""
        theta = torch.einsum("mij,mj->mi", self.a_inv, self.b)
        width = torch.einsum("mkf,mfg,mkg->mk", x, self.a_inv, x).clamp_min(0).sqrt()
        return torch.einsum("mkf,mf->mk", x, theta) + alpha * width


class LinUCB(nn.Module):
    """Independent per-task LinUCB on ``[x, 1]``."""

    input_kind = "bandit"

    def __init__(self, n_tasks: int = D.BANDIT["n_tasks"], dim: int = D.BANDIT["dim"], alpha: float = ALPHA,
                 ridge: float = RIDGE) -> None:
        super().__init__()
        self.n_tasks, self.dim, self.alpha, self.ridge = n_tasks, dim, alpha, ridge
        self.reset()

    def reset(self) -> None:
        self.stats = RidgeUCB(self.n_tasks, self.dim + 1, self.ridge)

    @staticmethod
    def _x(contexts: torch.Tensor) -> torch.Tensor:
        return torch.cat([contexts, torch.ones_like(contexts[..., :1])], -1)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        return self.stats.ucb(self._x(contexts.float()), self.alpha)

    forward = scores

    def update(self, contexts: torch.Tensor, actions: torch.Tensor, rewards: torch.Tensor) -> None:
        x = self._x(contexts.float())[torch.arange(contexts.shape[0]), actions]
        self.stats.update(x, rewards.float())


class BatchedMLP(nn.Module):
    """``n`` independent ReLU MLPs ``d -> width -> width`` evaluated at once: input (n, B, d) -> features (n, B, width)."""

    def __init__(self, n: int, dim: int, width: int) -> None:
        super().__init__()
        self.w1 = nn.Parameter(torch.empty(n, dim, width))
        self.b1 = nn.Parameter(torch.zeros(n, 1, width))
        self.w2 = nn.Parameter(torch.empty(n, width, width))
        self.b2 = nn.Parameter(torch.zeros(n, 1, width))
        for w in (self.w1, self.w2):  # PyTorch's default nn.Linear init (Kaiming uniform, a = sqrt 5), per network
            bound = 1 / np.sqrt(w.shape[1])
            nn.init.uniform_(w, -bound, bound)
        self.head = nn.Parameter(torch.zeros(n, width))  # a trained linear head (the ridge head scores)

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(torch.relu(x @ self.w1 + self.b1) @ self.w2 + self.b2)


class NeuralUCB(nn.Module):
    """Single-task neural-linear UCB: one MLP per task fitted on that task's data alone, ridge head and bonus on top."""

    input_kind = "bandit"

    def __init__(self, n_tasks: int = D.BANDIT["n_tasks"], dim: int = D.BANDIT["dim"], width: int = 24,
                 alpha: float = ALPHA, ridge: float = RIDGE, update_every: int = 20, train_steps: int = 40,
                 batch_size: int = 64, lr: float = 3e-3) -> None:
        super().__init__()
        self.n_tasks, self.dim, self.width, self.alpha, self.ridge = n_tasks, dim, width, alpha, ridge
        self.update_every, self.train_steps, self.batch_size, self.lr = update_every, train_steps, batch_size, lr
        self.net = BatchedMLP(n_tasks, dim, width)
        self.reset()

    def reset(self) -> None:
        self.xs: list[torch.Tensor] = []  # (M, d) per round
        self.rs: list[torch.Tensor] = []
        self.stats = RidgeUCB(self.n_tasks, self.width, self.ridge)
        self.gen = torch.Generator().manual_seed(0)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            f = self.net.features(contexts.float())  # (M, K, width)
        return self.stats.ucb(f, self.alpha)

    forward = scores

    def update(self, contexts: torch.Tensor, actions: torch.Tensor, rewards: torch.Tensor) -> None:
        x = contexts.float()[torch.arange(contexts.shape[0]), actions]
        self.xs.append(x)
        self.rs.append(rewards.float())
        if len(self.xs) % self.update_every == 0:
            self._fit()
        else:
            with torch.no_grad():
                self.stats.update(self.net.features(x[:, None])[:, 0], rewards.float())

    def _fit(self) -> None:
        x, r = torch.stack(self.xs, 1), torch.stack(self.rs, 1)  # (M, n, d), (M, n)
        opt = torch.optim.Adam(self.net.parameters(), lr=self.lr)
        with torch.enable_grad():
            for _ in range(self.train_steps):
                idx = torch.randint(0, x.shape[1], (min(self.batch_size, x.shape[1]),), generator=self.gen)
                pred = (self.net.features(x[:, idx]) * self.net.head[:, None]).sum(-1)
                loss = F.mse_loss(pred, r[:, idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            f = self.net.features(x)
        self.stats.refit(list(f), list(r))


class RandomBandit(nn.Module):
    """Uniform random arms (seeded scores)."""

    input_kind = "bandit"

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.gen = torch.Generator().manual_seed(seed)

    def scores(self, contexts: torch.Tensor) -> torch.Tensor:
        return torch.rand(contexts.shape[:2], generator=self.gen)

    forward = scores

    def update(self, contexts: torch.Tensor, actions: torch.Tensor, rewards: torch.Tensor) -> None:
        pass


# ------------------------------------------------------------------------------------------ gridworld
class GoalConditioned(nn.Module):
    """``Q(s, a, g)``: an MLP of ``[features(s), features(g)]``, trained by offline Q-learning with hindsight goals."""

    input_kind = "gridworld"

    def __init__(self, width: int = 128, state_dim: int = D.STATE_DIM, gamma: float = D.GAMMA) -> None:
        super().__init__()
        self.width, self.gamma = width, gamma
        self.q = nn.Sequential(nn.Linear(2 * state_dim, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                               nn.Linear(width, len(D.ACTIONS)))

    def encode(self, states: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """The goal: the features of the sampled state with the highest reward."""
        best = rewards.argmax(1)
        return states[torch.arange(states.shape[0]), best]

    def policy(self, s: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self.q(torch.cat([s, z], -1))

    def forward(self, states: torch.Tensor, rewards: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return self.policy(s, self.encode(states, rewards))

    def pretrain(self, data: Any, *, steps: int, seed: int = 0, batch_size: int = 256, lr: float = 1e-3,
                 target_every: int = 50, **_: Any) -> dict[str, float]:
        """Q-learning on the offline transitions, goals drawn uniformly (half of them the transition's own next
        state, hindsight relabelling); target network refreshed every ``target_every`` steps."""
        gen = torch.Generator().manual_seed(seed)
        feats, tr = data.features, data.transitions
        target = [p.detach().clone() for p in self.q.parameters()]
        tq = _functional_q(self.q)
        opt = torch.optim.Adam(self.q.parameters(), lr=lr)
        loss = torch.tensor(float("nan"))
        for i in range(steps):
            b = tr[torch.randint(0, len(tr), (batch_size,), generator=gen)]
            g = torch.randint(0, D.N_STATES, (batch_size,), generator=gen)
            g = torch.where(torch.rand(batch_size, generator=gen) < 0.5, b[:, 2], g)
            done = (b[:, 2] == g).float()
            with torch.no_grad():
                nxt = tq(target, torch.cat([feats[b[:, 2]], feats[g]], -1)).max(-1).values
                y = done + self.gamma * (1 - done) * nxt
            q = self.q(torch.cat([feats[b[:, 0]], feats[g]], -1)).gather(1, b[:, 1:2])[:, 0]
            loss = F.mse_loss(q, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if (i + 1) % target_every == 0:
                target = [p.detach().clone() for p in self.q.parameters()]
        return {"final_pretrain_loss": float(loss.detach())}


def _functional_q(q: nn.Sequential):
    """``f(params, x)``: the Sequential ``q`` evaluated with other parameters (a target network without a copy)."""
    def f(params: list[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        return torch.func.functional_call(q, dict(zip([n for n, _ in q.named_parameters()], params, strict=True)), (x,))
    return f


class PerTaskVI(nn.Module):
    """Value iteration on the task's own data: nearest-sample reward estimate, the offline data's dynamics."""

    input_kind = "gridworld"

    def __init__(self, gamma: float = D.GAMMA) -> None:
        super().__init__()
        self.gamma = gamma
        x, y = D.xy(np.arange(D.N_STATES))
        self.register_buffer("dist", torch.tensor(np.abs(x[:, None] - x[None]) + np.abs(y[:, None] - y[None]),
                                                  dtype=torch.float32), persistent=False)
        self.register_buffer("next", torch.as_tensor(D.NEXT), persistent=False)

    def encode(self, states: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        """The optimal Q-table (B, 64 * 5) of the nearest-sample reward estimate."""
        idx = states[..., : D.N_STATES].argmax(-1)  # (B, N) sampled cells
        d = self.dist[:, idx].permute(1, 0, 2)  # (B, 64, N): every cell's distance to every sample
        near = (d == d.min(-1, keepdim=True).values).float()
        r_hat = (near * rewards[:, None]).sum(-1) / near.sum(-1)
        _, q = D.value_iteration(r_hat.double().cpu().numpy(), gamma=self.gamma)
        return torch.as_tensor(q, dtype=rewards.dtype).reshape(len(rewards), -1)

    def policy(self, s: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        cell = s[..., : D.N_STATES].argmax(-1)
        return z.reshape(len(z), D.N_STATES, -1)[torch.arange(len(z)), cell]

    def forward(self, states: torch.Tensor, rewards: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return self.policy(s, self.encode(states, rewards))

    def pretrain(self, data: Any, **_: Any) -> dict[str, float]:
        return {}


class RandomPolicy(nn.Module):
    """The uniform policy (equal logits)."""

    input_kind = "gridworld"

    def encode(self, states: torch.Tensor, rewards: torch.Tensor) -> torch.Tensor:
        return torch.zeros(len(states), 1)

    def policy(self, s: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return torch.zeros(len(s), len(D.ACTIONS))

    def forward(self, states: torch.Tensor, rewards: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        return self.policy(s, self.encode(states, rewards))

    def pretrain(self, data: Any, **_: Any) -> dict[str, float]:
        return {}
