"""``control_toy``: multitask contextual bandits (cumulative regret) and an 8x8 gridworld with random reward families
(zero-shot normalised return). A model declares its mode by its ``input_kind`` attribute.

* ``bandit`` (``input_kind = "bandit"``): M = 10 concurrent contextual bandits, K = 8 arms of d = 16 features each,
  mean rewards ``theta_i . phi*(x)`` for one random 2-layer ReLU map ``phi*`` shared by all tasks (data.bandit_problem),
  Gaussian noise 0.3, 2,000 rounds. Contract: ``scores(contexts (M, K, d)) -> (M, K)`` (the task pulls the argmax in
  every task), ``update(contexts (M, K, d), actions (M,) long, rewards (M,))`` after each round, ``forward = scores``
  and an optional ``reset()`` called before the run. Metrics: ``regret`` (cumulative pseudo-regret at the last round,
  averaged over tasks), ``regret@half`` and ``late_rate`` (mean per-round regret over the last 10% of rounds).
  Baselines ``linucb`` (independent per task), ``neural_ucb`` (single-task neural-linear UCB, the model's parameter
  count in total) and ``random``.
* ``gridworld`` (``input_kind = "gridworld"``): an 8x8 grid, actions stay/up/down/left/right, the reward of the state
  reached, discount 0.9. Offline data: 64 random walks of 64 steps with no reward. The model is pretrained by its own
  ``pretrain(data: OfflineData, *, steps, seed)`` (reward-free data plus a sampler of training reward functions:
  goal tents, linear, random-MLP), then, zero-shot, for each held-out reward function it gets 32 reward-labelled
  states from the data: ``encode(states (B, 32, 66), rewards (B, 32)) -> z (B, dz)``, ``policy(s (B, 66), z (B, dz))
  -> logits (B, 5)``, ``forward(states, rewards, s) = policy(s, encode(states, rewards))``. States are features
  ``[one-hot cell (64), x/7, y/7]``. The greedy policy (ties split evenly) is evaluated exactly (a linear solve);
  metric ``return_<family>``: ``(J(pi) - J_worst) / (J_opt - J_worst)`` by value iteration, averaged over 64 new
  reward functions per family; ``return`` is the mean over the held-out goal and linear families (``return_mlp`` is
  reported: a family seen in pretraining). Baselines ``goal_conditioned`` (goal = best sample, at the model's
  parameter count), ``per_task`` (value iteration on the nearest-sample reward) and ``random``.
* ``pixels`` (``input_kind = "pixels"``): online RL from rendered (3, 6, 6) frames with two reward objects,
  stationary and reward-switching variants (see ``pixels.py``). Contract: ``forward(frames (B, 3, 6, 6)) -> (B, 5)``
  action values (the task acts epsilon-greedily on them), ``update(frames, actions, rewards, next_frames, dones)``
  after every step. Metrics ``return``, ``return_switch``, ``adapt``, ``pre_switch`` (reward per step). Baselines
  ``pixel_dqn`` (MLP Q-network at the model's parameter count, replay, target network) and ``random``.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result, count_params, match_width, status

from . import data as D
from . import pixels as P
from .baselines import GoalConditioned, LinUCB, NeuralUCB, PerTaskVI, RandomBandit, RandomPolicy

NAME = "control_toy"
MODES = ("bandit", "gridworld", "pixels")
BASELINES = {"linucb": "bandit", "neural_ucb": "bandit", "random": "both", "goal_conditioned": "gridworld",
             "per_task": "gridworld", "pixel_dqn": "pixels"}
PRETRAIN_STEPS = 2000
N_SAMPLES = 32
N_EVAL = 64
HELD_OUT = ("goal", "linear")


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"{NAME}: unknown mode {mode!r}; choose from {', '.join(MODES)}")


def mode_of(model: nn.Module) -> str:
    kind = getattr(model, "input_kind", None)
    if kind not in MODES:
        raise ValueError(f"{NAME}: a model declares its mode by input_kind, one of {MODES}; "
                         f"{type(model).__name__} has {kind!r}")
    return kind


# ------------------------------------------------------------------------------------------ bandit
def run_bandit(model: nn.Module, problem: D.BanditProblem, *, progress: str | None = None) -> dict[str, float]:
    """Play every round of ``problem`` with ``model`` (argmax of its scores in each task); the regret metrics."""
    T, M, K, _ = problem.shape
    if hasattr(model, "reset"):
        model.reset()
    regret = np.zeros((T, M))
    t0 = time.perf_counter()
    for t in range(T):
        ctx = torch.from_numpy(problem.contexts[t])
        with torch.no_grad():
            s = model.scores(ctx)
        if tuple(s.shape) != (M, K):
            raise ValueError(f"{NAME}: scores must be (M, K) = {(M, K)}, got {tuple(s.shape)} (build the model with "
                             f"n_tasks={M}, dim={problem.shape[-1]})")
        a = s.argmax(1).cpu().numpy()
        regret[t] = problem.regret(t, a)
        model.update(ctx, torch.from_numpy(a), torch.from_numpy(problem.reward(t, a)).float())
        if progress and (t + 1) % 500 == 0:
            status(f"{progress}: round {t + 1}/{T}, regret {regret[: t + 1].sum(0).mean():.1f}")
    cum = regret.cumsum(0).mean(1)
    late = max(1, T // 10)
    return {"regret": float(cum[-1]), "regret@half": float(cum[T // 2 - 1]) if T > 1 else float(cum[-1]),
            "late_rate": float(regret[-late:].mean()), "rounds": float(T), "seconds": time.perf_counter() - t0}


# ------------------------------------------------------------------------------------------ gridworld
@dataclass
class OfflineData:
    """What a gridworld model pretrains on: reward-free transitions and a sampler of training reward functions.

    ``transitions`` (n, 3) long rows ``(s, a, s')`` of cell indices; ``features`` (64, 66) the state features;
    ``tasks(b, rng)`` -> reward tables (b, 64) from ``families`` (uniform mix); ``samples(tables, rng)`` -> (cells (b,
    n_samples) long, rewards (b, n_samples)): reward-labelled states drawn from the data, as the zero-shot test gives.
    """

    transitions: torch.Tensor
    features: torch.Tensor
    n_samples: int = N_SAMPLES
    gamma: float = D.GAMMA
    families: tuple[str, ...] = D.FAMILIES
    pool: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.pool = self.transitions[:, 2].numpy()

    def tasks(self, b: int, rng: np.random.Generator) -> torch.Tensor:
        fam = rng.integers(0, len(self.families), b)
        out = np.zeros((b, D.N_STATES))
        for i, f in enumerate(self.families):
            sel = np.flatnonzero(fam == i)
            if len(sel):
                out[sel] = D.reward_functions(f, len(sel), rng)
        return torch.tensor(out, dtype=torch.float32)

    def samples(self, tables: torch.Tensor, rng: np.random.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        s, r = D.reward_samples(tables.numpy(), self.n_samples, rng, self.pool)
        return torch.as_tensor(s), torch.as_tensor(r, dtype=torch.float32)


def offline_data(seed: int = 0, n_samples: int = N_SAMPLES) -> OfflineData:
    return OfflineData(torch.as_tensor(D.random_walks(seed)), torch.as_tensor(D.state_features()), n_samples)


def greedy(logits: torch.Tensor) -> np.ndarray:
    """The greedy policy of ``logits`` (..., 5) with ties (within 1e-6) split evenly: uniform logits give the uniform
    policy."""
    lg = logits.detach().double().cpu()
    best = (lg >= lg.max(-1, keepdim=True).values - 1e-6).double()
    return (best / best.sum(-1, keepdim=True)).numpy()


@torch.no_grad()
def zero_shot(model: nn.Module, data: OfflineData, *, seed: int = 0, n_eval: int = N_EVAL,
              families: tuple[str, ...] = D.FAMILIES) -> dict[str, float]:
    """Normalised return of ``model`` on ``n_eval`` new reward functions per family, each given ``data.n_samples``
    labelled states (a stream no pretraining sampler draws from)."""
    rng = np.random.default_rng([seed, 7919])
    feats = data.features
    out: dict[str, float] = {}
    for fam in families:
        tables = D.reward_functions(fam, n_eval, rng)
        cells, r = data.samples(torch.tensor(tables, dtype=torch.float32), rng)
        z = model.encode(feats[cells], r)
        s = feats.repeat(n_eval, 1)  # (n_eval * 64, ds)
        logits = model.policy(s, z.repeat_interleave(D.N_STATES, 0)).reshape(n_eval, D.N_STATES, -1)
        out[f"return_{fam}"] = float(D.normalised_return(tables, greedy(logits)).mean())
    held = [out[f"return_{f}"] for f in HELD_OUT if f"return_{f}" in out]
    if held:
        out["return"] = float(np.mean(held))
    return out


# ------------------------------------------------------------------------------------------ baselines
def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, mode: str = "bandit",
                   **options: Any) -> nn.Module:
    """Baseline ``name`` for ``mode``, seeded; ``neural_ucb`` and ``goal_conditioned`` are sized by width to ``params``
    (``count_params``) when given. Bandit options: ``n_tasks``, ``dim``, ``alpha``."""
    _check_mode(mode)
    if name not in BASELINES:
        raise ValueError(f"{NAME}: unknown baseline {name!r}; choose from {sorted(BASELINES)}")
    if BASELINES[name] not in ("both", mode) and not (name == "random" and mode == "pixels"):
        raise ValueError(f"{NAME}: baseline {name!r} is for mode {BASELINES[name]!r}, not {mode!r}")
    torch.manual_seed(seed)
    if mode == "bandit":
        shape = {k: options[k] for k in ("n_tasks", "dim") if k in options}
        if name == "random":
            return RandomBandit(seed)
        if name == "linucb":
            return LinUCB(**shape, alpha=options.get("alpha", 1.0))

        def build_nucb(w: int) -> nn.Module:
            return NeuralUCB(**shape, width=w, alpha=options.get("alpha", 1.0))
        width = match_width(build_nucb, params, lo=2) if params else 24
        torch.manual_seed(seed)
        return build_nucb(width)
    if mode == "pixels":
        if name == "random":
            return P.RandomPixels()
        width = match_width(lambda w: P.PixelDQN(width=w), params, lo=2) if params else 64
        torch.manual_seed(seed)
        return P.PixelDQN(width=width)
    if name == "random":
        return RandomPolicy()
    if name == "per_task":
        return PerTaskVI()
    width = match_width(lambda w: GoalConditioned(width=w), params, lo=2) if params else 128
    torch.manual_seed(seed)
    return GoalConditioned(width=width)


# ------------------------------------------------------------------------------------------ the task contract
def example_input(model: nn.Module | None = None) -> Any:
    """Bandit models: contexts (10, 8, 16); gridworld models: (states (2, 32, 66), rewards (2, 32), s (2, 66))."""
    gen = torch.Generator().manual_seed(0)
    if getattr(model, "input_kind", "bandit") == "pixels":
        return P.PixelGrid(2, seed=0).render()
    if getattr(model, "input_kind", "bandit") == "gridworld":
        cells = torch.randint(0, D.N_STATES, (2, N_SAMPLES), generator=gen)
        feats = torch.as_tensor(D.state_features())
        return feats[cells], torch.rand(2, N_SAMPLES, generator=gen), feats[torch.tensor([0, 9])]
    return torch.randn(D.BANDIT["n_tasks"], D.BANDIT["n_arms"], D.BANDIT["dim"], generator=gen)


def check_output(model: nn.Module, output: Any) -> None:
    kind = getattr(model, "input_kind", "bandit")
    want = (2, len(D.ACTIONS)) if kind in ("gridworld", "pixels") else (D.BANDIT["n_tasks"], D.BANDIT["n_arms"])
    what = "action logits (B, 5)" if kind in ("gridworld", "pixels") else "arm scores (M, K)"
    if not isinstance(output, torch.Tensor) or tuple(output.shape) != want:
        got = tuple(output.shape) if isinstance(output, torch.Tensor) else type(output).__name__
        raise AssertionError(f"{NAME}: a {kind} model must return {what} = {want}, got {got}")
    if not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: the {kind} model's output has non-finite values")


def describe(*, mode: str = "bandit", steps: int | None = None, n_samples: int = N_SAMPLES, n_eval: int = N_EVAL,
             **bandit: Any) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options (bandit: ``steps`` = rounds, plus data.BANDIT's fields)."""
    _check_mode(mode)
    if mode == "bandit":
        unknown = set(bandit) - set(D.BANDIT)
        if unknown:
            raise ValueError(f"{NAME}: unknown bandit option(s) {sorted(unknown)}; choose from {sorted(D.BANDIT)}")
        cfg = {**D.BANDIT, **bandit, **({"rounds": steps} if steps else {})}
        return {"mode": mode, **cfg, "phi_star": "relu(x W1 + b1) W2, random, shared by all tasks",
                "means": "theta_i . phi*(x), standardised", "action": "argmax of scores per task",
                "metrics": ["regret", "regret@half", "late_rate"], "baselines": ["linucb", "neural_ucb", "random"]}
    if mode == "pixels":
        if bandit:
            raise ValueError(f"{NAME}: pixels takes steps; not {sorted(bandit)}")
        return P.describe_pixels(steps)
    if bandit:
        raise ValueError(f"{NAME}: gridworld takes steps, n_samples, n_eval; not {sorted(bandit)}")
    return {"mode": mode, "grid": f"{D.SIZE}x{D.SIZE}", "actions": list(D.ACTIONS), "gamma": D.GAMMA,
            "offline_data": "64 uniform random walks x 64 steps, no rewards", "pretrain_steps": steps or PRETRAIN_STEPS,
            "train_families": list(D.FAMILIES), "held_out": list(HELD_OUT), "n_samples": n_samples, "n_eval": n_eval,
            "goal_reward": f"max(0, 1 - manhattan(s, g) / {D.GOAL_RADIUS})",
            "metric": "(J(pi) - J_worst) / (J_opt - J_worst), exact, uniform starts, greedy policy (ties split)",
            "baselines": ["goal_conditioned", "per_task", "random"]}


def evaluate(model: nn.Module, *, mode: str | None = None, steps: int | None = None, budget_s: float | None = None,
             seed: int = 0, baselines: list[str] | None = None, train_model: bool | None = None,
             n_samples: int = N_SAMPLES, n_eval: int = N_EVAL, out_dir: str | None = None, progress: bool = False,
             rebuild: Callable[..., nn.Module] | None = None, **bandit: Any) -> Result:
    """Run ``mode``'s protocol (module docstring) on ``model`` and the baselines on the same seeded data."""
    t0 = time.perf_counter()
    mode = mode or mode_of(model)
    _check_mode(mode)
    if getattr(model, "input_kind", None) != mode:
        raise ValueError(f"{NAME}: mode {mode!r} needs a model with input_kind={mode!r}, this one has "
                         f"{getattr(model, 'input_kind', None)!r}")
    settings = describe(mode=mode, steps=steps, n_samples=n_samples, n_eval=n_eval, **bandit)
    names = settings["baselines"] if baselines is None else list(baselines)
    params = count_params(model)
    rows: dict[str, dict[str, float]] = {}
    if mode == "bandit":
        cfg = {k: settings[k] for k in D.BANDIT}
        problem = D.bandit_problem(seed, **cfg)
        metrics = {"params": float(params), **run_bandit(model, problem, progress=f"{NAME} model" if progress else None)}
        for b in names:
            base = build_baseline(b, params=params or None, seed=seed, mode=mode, n_tasks=cfg["n_tasks"], dim=cfg["dim"])
            rows[b] = {"params": float(count_params(base)), **run_bandit(base, problem)}
        return Result(task=NAME, metrics=metrics, baselines=rows, n=cfg["rounds"] * cfg["n_tasks"],
                      seconds=time.perf_counter() - t0, config={**settings, "seed": seed})
    if mode == "pixels":
        metrics = {"params": float(params), **P.evaluate_pixels(model, steps=steps, seed=seed)}
        for b in names:
            base = build_baseline(b, params=params or None, seed=seed, mode=mode)
            rows[b] = {"params": float(count_params(base)), **P.evaluate_pixels(base, steps=steps, seed=seed)}
        return Result(task=NAME, metrics=metrics, baselines=rows, n=settings["steps"] * P.N_ENVS * 2,
                      seconds=time.perf_counter() - t0, config={**settings, "seed": seed})
    data = offline_data(seed, n_samples)
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    pre_steps = settings["pretrain_steps"]
    metrics = {"params": float(params)}
    if train_model:
        torch.manual_seed(seed)
        metrics.update(model.pretrain(data, steps=pre_steps, seed=seed))
    metrics.update(zero_shot(model.eval(), data, seed=seed, n_eval=n_eval))
    for b in names:
        base = build_baseline(b, params=params or None, seed=seed, mode=mode)
        m = {"params": float(count_params(base)), **base.pretrain(data, steps=pre_steps, seed=seed)}
        rows[b] = {**m, **zero_shot(base.eval(), data, seed=seed, n_eval=n_eval)}
    return Result(task=NAME, metrics=metrics, baselines=rows, n=n_eval * len(D.FAMILIES),
                  seconds=time.perf_counter() - t0, config={**settings, "seed": seed, "trained": train_model})
