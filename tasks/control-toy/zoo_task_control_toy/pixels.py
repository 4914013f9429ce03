"""``pixels`` mode of control_toy: online RL in a rendered 6x6 gridworld with two reward objects.

Frames are (3, 6, 6) float, one pixel per cell, one channel per object colour: 0 = agent, 1 = object A, 2 = object B.
Actions stay/up/down/left/right (walls clip). Touching an object ends the episode with that object's reward
(stationary: A = +1, B = -1); 20 steps without contact end it with 0 (a time-out, not a terminal state: ``dones`` is
False). New episodes place the agent and the two objects on distinct random cells. ``N_ENVS`` = 16 environments run
in lock-step. In the ``switching`` variant the two rewards swap at the midpoint of the run.

The task owns exploration (epsilon-greedy on the model's ``forward(frames) -> (B, 5)``, epsilon decaying linearly
from 1 to 0.05 over the first 20% of steps and never raised again) and calls ``update(frames, actions, rewards,
next_frames, dones)`` after every step; each variant runs on a fresh ``copy.deepcopy`` of the model as given.

Metrics (reward per environment step; the optimum is ~0.25, random ~-0.0): ``return`` = mean over the last 25% of
the stationary run; ``return_switch`` = the same for the switching run (the swapped rewards); ``adapt`` = mean over
the first 25% of the post-switch half (how fast the model recovers); ``pre_switch`` = the last 25% before it.
"""
from __future__ import annotations

import copy
import time
from typing import Any

import numpy as np
import torch
from torch import nn

SIZE = 6
N_OBJECTS = 2
CHANNELS = 1 + N_OBJECTS
N_ACTIONS = 5
MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]])  # (row, col): stay, up, down, left, right
REWARDS = (1.0, -1.0)
TIMEOUT = 20
N_ENVS = 16
STEPS = 1500
EPS_END = 0.05
EPS_FRACTION = 0.2
VARIANTS = ("stationary", "switching")
GAMMA = 0.9


class PixelGrid:
    """``n`` lock-step episodes of the gridworld; ``pos`` (n, 3, 2) cells of agent, A, B; ``rewards`` (2,)."""

    def __init__(self, n: int = N_ENVS, seed: int = 0, rewards: tuple[float, float] = REWARDS) -> None:
        self.n = n
        self.rng = np.random.default_rng([seed, 4242])
        self.rewards = np.asarray(rewards, dtype=np.float64)
        self.pos = np.zeros((n, CHANNELS, 2), dtype=np.int64)
        self.t = np.zeros(n, dtype=np.int64)
        self._respawn(np.ones(n, dtype=bool))

    def _respawn(self, which: np.ndarray) -> None:
        for i in np.flatnonzero(which):
            cells = self.rng.choice(SIZE * SIZE, CHANNELS, replace=False)
            self.pos[i] = np.stack([cells // SIZE, cells % SIZE], 1)
            self.t[i] = 0

    def render(self) -> torch.Tensor:
        f = np.zeros((self.n, CHANNELS, SIZE, SIZE), dtype=np.float32)
        idx = np.arange(self.n)
        for c in range(CHANNELS):
            f[idx, c, self.pos[:, c, 0], self.pos[:, c, 1]] = 1.0
        return torch.from_numpy(f)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Move, reward and reset; returns (rewards (n,), dones (n,) terminal, contact (n, 2) which object touched)."""
        actions = np.asarray(actions)
        if actions.shape != (self.n,) or actions.min() < 0 or actions.max() >= N_ACTIONS:
            raise ValueError(f"control_toy pixels: actions must be ({self.n},) in 0..{N_ACTIONS - 1}")
        self.pos[:, 0] = np.clip(self.pos[:, 0] + MOVES[actions], 0, SIZE - 1)
        contact = (self.pos[:, 1:] == self.pos[:, :1]).all(-1)  # (n, 2)
        r = contact.astype(np.float64) @ self.rewards
        done = contact.any(1)
        self.t += 1
        self._respawn(done | (self.t >= TIMEOUT))
        return r, done, contact


def epsilon(t: int, steps: int) -> float:
    return max(EPS_END, 1.0 - (1.0 - EPS_END) * t / max(1.0, EPS_FRACTION * steps))


def run(model: nn.Module, *, variant: str, steps: int = STEPS, seed: int = 0, n_envs: int = N_ENVS) -> np.ndarray:
    """Train ``model`` online for ``steps`` lock-step steps of ``variant``; the mean reward per step (steps,)."""
    if variant not in VARIANTS:
        raise ValueError(f"control_toy pixels: unknown variant {variant!r}; choose from {', '.join(VARIANTS)}")
    env = PixelGrid(n_envs, seed)
    rng = np.random.default_rng([seed, 99])
    torch.manual_seed(seed)
    obs = env.render()
    out = np.zeros(steps)
    for t in range(steps):
        if variant == "switching" and t == steps // 2:
            env.rewards = env.rewards[::-1].copy()
        with torch.no_grad():
            q = model(obs)
        if tuple(q.shape) != (n_envs, N_ACTIONS):
            raise ValueError(f"control_toy pixels: forward must return (B, {N_ACTIONS}), got {tuple(q.shape)}")
        q = q.detach().cpu().numpy()
        best = q >= q.max(1, keepdims=True) - 1e-9
        greedy = np.array([rng.choice(np.flatnonzero(b)) for b in best])
        explore = rng.random(n_envs) < epsilon(t, steps)
        a = np.where(explore, rng.integers(0, N_ACTIONS, n_envs), greedy)
        r, done, _ = env.step(a)
        nxt = env.render()
        # frames the model sees after a terminal step are the new episode's; next_frames of a terminal step are
        # irrelevant (dones masks the bootstrap), so the rendered reset frame is passed
        model.update(obs, torch.from_numpy(a), torch.from_numpy(r).float(), nxt, torch.from_numpy(done))
        obs = nxt
        out[t] = r.mean()
    return out


def metrics(stationary: np.ndarray, switching: np.ndarray) -> dict[str, float]:
    n = len(stationary)
    q = max(1, n // 4)
    half = n // 2
    h4 = max(1, half // 4)
    return {"return": float(stationary[-q:].mean()), "return_switch": float(switching[-q:].mean()),
            "adapt": float(switching[half: half + h4].mean()), "pre_switch": float(switching[half - h4: half].mean())}


def evaluate_pixels(model: nn.Module, *, steps: int | None = None, seed: int = 0) -> dict[str, float]:
    """Both variants on fresh copies of ``model``; the pixels metrics plus ``seconds``."""
    t0 = time.perf_counter()
    steps = steps or STEPS
    if steps < 8:
        raise ValueError("control_toy pixels: steps must be >= 8")
    curves = {v: run(copy.deepcopy(model), variant=v, steps=steps, seed=seed) for v in VARIANTS}
    return {**metrics(curves["stationary"], curves["switching"]), "seconds": time.perf_counter() - t0}


def describe_pixels(steps: int | None = None) -> dict[str, Any]:
    return {"mode": "pixels", "grid": f"{SIZE}x{SIZE}", "frames": f"({CHANNELS}, {SIZE}, {SIZE}): agent, A, B",
            "actions": ["stay", "up", "down", "left", "right"], "rewards": {"A": REWARDS[0], "B": REWARDS[1]},
            "timeout": TIMEOUT, "n_envs": N_ENVS, "steps": steps or STEPS, "variants": list(VARIANTS),
            "switch": "rewards of A and B swap at steps // 2 (switching variant)",
            "exploration": f"epsilon-greedy by the task, 1 -> {EPS_END} over the first {EPS_FRACTION:.0%} of steps",
            "metrics": ["return", "return_switch", "adapt", "pre_switch"], "baselines": ["pixel_dqn", "random"]}


# ------------------------------------------------------------------------------------------ baselines
class Replay:
    """A ring buffer of transitions ``(frames, actions, rewards, next_frames, dones)``, sampled uniformly (seeded by
    torch's global generator, which the task seeds)."""

    def __init__(self, capacity: int) -> None:
        self.capacity, self.size, self.ptr = capacity, 0, 0
        self.data: list[torch.Tensor] | None = None

    def add(self, *batch: torch.Tensor) -> None:
        n = batch[0].shape[0]
        if self.data is None:
            self.data = [torch.zeros((self.capacity, *x.shape[1:]), dtype=x.dtype) for x in batch]
        idx = (self.ptr + torch.arange(n)) % self.capacity
        for buf, x in zip(self.data, batch, strict=True):
            buf[idx] = x
        self.ptr = (self.ptr + n) % self.capacity
        self.size = min(self.capacity, self.size + n)

    def sample(self, k: int) -> list[torch.Tensor]:
        assert self.data is not None, "sample after add"
        idx = torch.randint(0, self.size, (k,))
        return [buf[idx] for buf in self.data]


class RandomPixels(nn.Module):
    """Uniform random actions (constant logits: the task breaks ties uniformly)."""

    input_kind = "pixels"

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return torch.zeros(frames.shape[0], N_ACTIONS)

    def update(self, *args: Any) -> None:
        return None


class PixelDQN(nn.Module):
    """DQN-style learner on the flattened frames: MLP Q-network (one hidden ReLU layer of ``width``), replay buffer of
    ``buffer`` transitions, minibatches of ``batch``, Huber TD loss to a target network synced every ``sync`` updates,
    Adam at ``lr``; discount ``gamma``."""

    input_kind = "pixels"

    def __init__(self, width: int = 64, *, lr: float = 1e-3, gamma: float = GAMMA, buffer: int = 4000,
                 batch: int = 64, sync: int = 50) -> None:
        super().__init__()
        d = CHANNELS * SIZE * SIZE
        self.q = nn.Sequential(nn.Flatten(), nn.Linear(d, width), nn.ReLU(), nn.Linear(width, N_ACTIONS))
        self.target = copy.deepcopy(self.q).requires_grad_(False)
        self.gamma, self.batch, self.sync, self.cap, self.lr = gamma, batch, sync, buffer, lr
        self._opt: torch.optim.Optimizer | None = None
        self._n = 0

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return self.q(frames)

    def update(self, frames: torch.Tensor, actions: torch.Tensor, rewards: torch.Tensor, next_frames: torch.Tensor,
               dones: torch.Tensor) -> None:
        if self._opt is None:
            self._opt = torch.optim.Adam(self.q.parameters(), lr=self.lr)
            self._rep = Replay(self.cap)
        self._rep.add(frames, actions, rewards, next_frames, dones)
        f, a, r, f2, d = self._rep.sample(self.batch)
        with torch.no_grad():
            y = r + self.gamma * (~d).float() * self.target(f2).max(1).values
        loss = nn.functional.smooth_l1_loss(self.q(f).gather(1, a[:, None]).squeeze(1), y)
        self._opt.zero_grad()
        loss.backward()
        self._opt.step()
        self._n += 1
        if self._n % self.sync == 0:
            self.target.load_state_dict(self.q.state_dict())
