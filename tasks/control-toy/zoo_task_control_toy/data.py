"""Seeded problems of ``control_toy``: multitask contextual bandits sharing a feature map, and an 8x8 gridworld with
random reward families, its offline random-walk data, value iteration and exact policy evaluation.

Everything here is numpy and fixed by its seed: the same seed gives the same contexts, rewards, noise, walks and
reward functions in every process.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# ------------------------------------------------------------------------------------------ bandits
BANDIT = {"n_tasks": 10, "n_arms": 8, "dim": 16, "feature_dim": 4, "hidden": 32, "rounds": 2000, "noise": 0.3}


@dataclass
class BanditProblem:
    """M concurrent contextual bandits whose mean rewards are ``theta_i . phi*(x)`` for one shared map ``phi*``.

    ``contexts[t]`` (M, K, d) is what every task sees at round t, ``means[t]`` (M, K) its arms' expected rewards and
    ``noise[t]`` (M, K) the zero-mean noise added to the arm that is pulled.
    """

    contexts: np.ndarray  # (T, M, K, d) float32
    means: np.ndarray  # (T, M, K) float64
    noise: np.ndarray  # (T, M, K) float64
    theta: np.ndarray  # (M, k)

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return self.contexts.shape  # type: ignore[return-value]

    def regret(self, t: int, actions: np.ndarray) -> np.ndarray:
        """Per-task pseudo-regret of ``actions`` (M,) at round ``t``: best mean minus the pulled arm's mean."""
        m = self.means[t]
        return m.max(1) - m[np.arange(m.shape[0]), actions]

    def reward(self, t: int, actions: np.ndarray) -> np.ndarray:
        """The noisy rewards (M,) the pulled ``actions`` return at round ``t``."""
        idx = np.arange(self.means.shape[1])
        return self.means[t, idx, actions] + self.noise[t, idx, actions]


def phi_star(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray) -> np.ndarray:
    """The shared feature map: a random two-layer ReLU network ``relu(x W1 + b1) W2``."""
    return np.maximum(x @ w1 + b1, 0.0) @ w2


def bandit_problem(seed: int = 0, *, n_tasks: int = BANDIT["n_tasks"], n_arms: int = BANDIT["n_arms"],
                   dim: int = BANDIT["dim"], feature_dim: int = BANDIT["feature_dim"], hidden: int = BANDIT["hidden"],
                   rounds: int = BANDIT["rounds"], noise: float = BANDIT["noise"]) -> BanditProblem:
    """The seeded multitask bandit: contexts ``x ~ N(0, I_d)``; ``phi*`` a random 2-layer ReLU net to ``feature_dim``
    features (weights ``N(0, 1/fan_in)``, hidden biases ``N(-1, 0.25)``); task weights ``theta_i ~ N(0, I_k)``; means
    scaled to unit standard deviation over all tasks; Gaussian noise of std ``noise``."""
    for name, v in (("n_tasks", n_tasks), ("n_arms", n_arms), ("dim", dim), ("feature_dim", feature_dim),
                    ("hidden", hidden), ("rounds", rounds)):
        if int(v) < 1:
            raise ValueError(f"bandit_problem: {name} must be >= 1, got {v}")
    rng = np.random.default_rng([seed, 17])
    w1 = rng.normal(0, 1 / np.sqrt(dim), (dim, hidden))
    b1 = rng.normal(-1.0, 0.5, hidden)  # sparse ReLU units: a linear model explains ~30% of the means
    w2 = rng.normal(0, 1 / np.sqrt(hidden), (hidden, feature_dim))
    theta = rng.normal(0, 1, (n_tasks, feature_dim))
    x = rng.normal(0, 1, (rounds, n_tasks, n_arms, dim)).astype(np.float32)
    feats = phi_star(x.astype(np.float64), w1, b1, w2)  # (T, M, K, k)
    means = np.einsum("tmkf,mf->tmk", feats, theta)
    means = (means - means.mean()) / means.std()
    eps = rng.normal(0, noise, (rounds, n_tasks, n_arms))
    return BanditProblem(contexts=x, means=means, noise=eps, theta=theta)


# ------------------------------------------------------------------------------------------ gridworld
SIZE = 8
N_STATES = SIZE * SIZE
ACTIONS = ("stay", "up", "down", "left", "right")
MOVES = ((0, 0), (0, -1), (0, 1), (-1, 0), (1, 0))  # (dx, dy); a move into the border leaves the agent in place
GAMMA = 0.9
FAMILIES = ("goal", "linear", "mlp")
GOAL_RADIUS = 3  # goal reward max(0, 1 - d(s, g) / 3) with d the Manhattan distance: a tent of 13 cells


def xy(s: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(s)
    return s % SIZE, s // SIZE


def transitions() -> np.ndarray:
    """``next[s, a]`` (64, 5): the deterministic successor of state ``s`` under action ``a``."""
    out = np.zeros((N_STATES, len(ACTIONS)), dtype=np.int64)
    for s in range(N_STATES):
        x, y = s % SIZE, s // SIZE
        for a, (dx, dy) in enumerate(MOVES):
            nx, ny = min(max(x + dx, 0), SIZE - 1), min(max(y + dy, 0), SIZE - 1)
            out[s, a] = ny * SIZE + nx
    return out


NEXT = transitions()


def state_features(states: np.ndarray | None = None) -> np.ndarray:
    """Features ``(..., 66)`` of states: a one-hot of the cell (64) and its coordinates ``x/7, y/7`` (2)."""
    s = np.arange(N_STATES) if states is None else np.asarray(states)
    f = np.zeros(s.shape + (N_STATES + 2,), dtype=np.float32)
    np.put_along_axis(f, s[..., None], 1.0, axis=-1)
    x, y = xy(s)
    f[..., N_STATES] = x / (SIZE - 1)
    f[..., N_STATES + 1] = y / (SIZE - 1)
    return f


STATE_DIM = N_STATES + 2


def random_walks(seed: int = 0, *, n_walks: int = 64, length: int = 64) -> np.ndarray:
    """The offline dataset: ``n_walks`` uniform-random walks of ``length`` steps from uniform starts, as rows
    ``(s, a, s')`` (n_walks * length, 3) int64. It carries no reward: rewards are relabelled per task."""
    rng = np.random.default_rng([seed, 29])
    s = rng.integers(0, N_STATES, n_walks)
    rows = []
    for _ in range(length):
        a = rng.integers(0, len(ACTIONS), n_walks)
        s2 = NEXT[s, a]
        rows.append(np.stack([s, a, s2], 1))
        s = s2
    return np.concatenate(rows, 0)


def reward_functions(family: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` random reward functions of ``family`` as a table (n, 64) of the reward for arriving in each state.

    goal: a tent ``max(0, 1 - d(s, g)/3)`` around a uniform goal cell g; linear: ``w . (2x/7 - 1, 2y/7 - 1)`` with
    ``w ~ N(0, I)`` scaled to unit norm; mlp: a random tanh network of the coordinates (16 hidden units), rescaled to
    [-1, 1]."""
    if family not in FAMILIES:
        raise ValueError(f"reward_functions: unknown family {family!r}; choose from {FAMILIES}")
    x, y = xy(np.arange(N_STATES))
    c = np.stack([2 * x / (SIZE - 1) - 1, 2 * y / (SIZE - 1) - 1], 1)  # (64, 2) in [-1, 1]
    if family == "goal":
        g = rng.integers(0, N_STATES, n)
        gx, gy = xy(g)
        d = np.abs(x[None] - gx[:, None]) + np.abs(y[None] - gy[:, None])
        return np.maximum(0.0, 1.0 - d / GOAL_RADIUS)
    if family == "linear":
        w = rng.normal(0, 1, (n, 2))
        w /= np.linalg.norm(w, axis=1, keepdims=True)
        return w @ c.T
    w1 = rng.normal(0, 2.0, (n, 2, 16))
    b1 = rng.normal(0, 1.0, (n, 1, 16))
    w2 = rng.normal(0, 1.0, (n, 16, 1))
    r = (np.tanh(np.einsum("sc,nch->nsh", c, w1) + b1) @ w2)[..., 0]
    r -= r.mean(1, keepdims=True)
    return r / np.abs(r).max(1, keepdims=True)


def value_iteration(reward: np.ndarray, *, gamma: float = GAMMA, minimise: bool = False, tol: float = 1e-10,
                    max_iter: int = 10_000) -> tuple[np.ndarray, np.ndarray]:
    """Optimal (or, with ``minimise``, worst) values ``V`` (..., 64) and greedy action-values ``Q`` (..., 64, 5) of the
    reward tables (..., 64): ``Q(s, a) = r(next(s, a)) + gamma V(next(s, a))``, ``V = max_a Q``."""
    r = np.asarray(reward, dtype=np.float64)
    v = np.zeros_like(r)
    pick = np.min if minimise else np.max
    for _ in range(max_iter):
        q = r[..., NEXT] + gamma * v[..., NEXT]
        v2 = pick(q, axis=-1)
        if np.max(np.abs(v2 - v)) < tol:
            v = v2
            break
        v = v2
    return v, r[..., NEXT] + gamma * v[..., NEXT]


def policy_value(reward: np.ndarray, policy: np.ndarray, *, gamma: float = GAMMA) -> np.ndarray:
    """Exact values ``V^pi`` (n, 64) of stochastic policies ``policy`` (n, 64, 5) on reward tables (n, 64): the linear
    solve ``(I - gamma P_pi) V = P_pi r``."""
    r = np.asarray(reward, dtype=np.float64)
    pi = np.asarray(policy, dtype=np.float64)
    n = r.shape[0]
    p = np.zeros((n, N_STATES, N_STATES))
    for a in range(len(ACTIONS)):
        np.add.at(p, (slice(None), np.arange(N_STATES), NEXT[:, a]), pi[:, :, a])
    rhs = p @ r[..., None]
    return np.linalg.solve(np.eye(N_STATES)[None] - gamma * p, rhs)[..., 0]


def normalised_return(reward: np.ndarray, policy: np.ndarray, *, gamma: float = GAMMA) -> np.ndarray:
    """Per task, ``(J(pi) - J_worst) / (J_opt - J_worst)`` with ``J`` the value averaged over uniform start states and
    ``J_opt`` / ``J_worst`` from value iteration (maximising / minimising): 1 for an optimal policy, 0 for the worst."""
    j = policy_value(reward, policy, gamma=gamma).mean(1)
    hi = value_iteration(reward, gamma=gamma)[0].mean(1)
    lo = value_iteration(reward, gamma=gamma, minimise=True)[0].mean(1)
    return (j - lo) / np.maximum(hi - lo, 1e-12)


def reward_samples(reward: np.ndarray, n: int, rng: np.random.Generator, pool: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each reward table (B, 64): ``n`` states drawn uniformly from ``pool`` (the offline data's states) and their
    rewards: ``(states (B, n) int64, rewards (B, n))``."""
    s = pool[rng.integers(0, len(pool), (reward.shape[0], n))]
    return s, np.take_along_axis(reward, s, 1)
