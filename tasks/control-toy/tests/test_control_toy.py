"""control_toy: value iteration and exact policy evaluation on known cases, regret of an oracle and of random arms,
the baselines' defining properties, seeding, and the contract."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo_task_control_toy import data as D
from zoo_task_control_toy import task as T
from zoo_task_control_toy.baselines import PerTaskVI, RandomPolicy


def test_value_iteration_on_a_goal_tent_has_its_closed_form():
    r = np.zeros((1, D.N_STATES))
    r[0] = D.reward_functions("goal", 1, np.random.default_rng(0))[0]
    g = int(r[0].argmax())
    v, q = D.value_iteration(r)
    gx, gy = D.xy(g)
    x, y = D.xy(np.arange(D.N_STATES))
    d = np.abs(x - gx) + np.abs(y - gy)
    # at the goal: stay forever, 1 / (1 - 0.9) = 10; one step away: 1 + 0.9 * 10; two: (1 - 1/3) + 0.9 * 10 ...
    assert v[0, g] == pytest.approx(10.0) and np.allclose(v[0, d == 1], 10.0)
    assert np.allclose(v[0, d == 2], 2 / 3 + 9.0)
    assert q.shape == (1, D.N_STATES, 5) and np.allclose(q.max(-1), v)
    pi = np.eye(5)[q[0].argmax(-1)][None]
    assert np.allclose(D.policy_value(r, pi), v, atol=1e-8)
    assert D.normalised_return(r, pi)[0] == pytest.approx(1.0)
    worst = D.value_iteration(r, minimise=True)[1]
    assert D.normalised_return(r, np.eye(5)[worst[0].argmin(-1)][None])[0] == pytest.approx(0.0, abs=1e-9)


def test_transitions_and_features():
    assert D.NEXT[0, 1] == 0 and D.NEXT[0, 3] == 0 and D.NEXT[0, 4] == 1 and D.NEXT[0, 2] == 8  # corner walls
    f = D.state_features(np.array([9]))
    assert f.shape == (1, 66) and f[0, 9] == 1 and f[0, :64].sum() == 1 and np.allclose(f[0, 64:], [1 / 7, 1 / 7])
    walks = D.random_walks(0)
    assert walks.shape == (64 * 64, 3) and np.all(D.NEXT[walks[:, 0], walks[:, 1]] == walks[:, 2])
    np.testing.assert_array_equal(walks, D.random_walks(0))
    for fam in D.FAMILIES:
        r = D.reward_functions(fam, 16, np.random.default_rng(1))
        bound = 2 ** 0.5 if fam == "linear" else 1.0  # a unit weight on coordinates in [-1, 1]
        assert r.shape == (16, 64) and np.abs(r).max() <= bound + 1e-9 and r.std() > 0.1
    with pytest.raises(ValueError, match="goal, linear|'goal'"):
        D.reward_functions("sparse", 1, np.random.default_rng(0))


def test_oracle_regret_is_zero_and_random_regret_grows_linearly():
    p = D.bandit_problem(0, rounds=400)

    class Oracle(torch.nn.Module):
        input_kind = "bandit"
        t = 0

        def scores(self, contexts):
            assert torch.equal(contexts, torch.from_numpy(p.contexts[self.t]))
            return torch.from_numpy(p.means[self.t])

        def update(self, contexts, actions, rewards):
            self.t += 1

    assert T.run_bandit(Oracle(), p)["regret"] == 0.0
    rnd = T.run_bandit(T.build_baseline("random", mode="bandit"), p)
    mean_gap = float((p.means.max(2)[:, :, None] - p.means).mean())
    assert rnd["regret"] / 400 == pytest.approx(mean_gap, rel=0.1)
    assert rnd["regret@half"] / rnd["regret"] == pytest.approx(0.5, abs=0.06)


def test_bandit_problem_is_seeded_and_nonlinear():
    a, b, c = D.bandit_problem(1, rounds=50), D.bandit_problem(1, rounds=50), D.bandit_problem(2, rounds=50)
    assert np.array_equal(a.means, b.means) and np.array_equal(a.contexts, b.contexts) and not np.array_equal(a.means, c.means)
    assert abs(a.means.std() - 1.0) < 0.2  # standardised over the full horizon's draw
    x = np.c_[a.contexts[:, 0].reshape(-1, 16), np.ones(50 * 8)]
    y = a.means[:, 0].reshape(-1)
    res = y - x @ np.linalg.lstsq(x, y, rcond=None)[0]
    assert res.var() / y.var() > 0.3  # a linear model leaves a large part unexplained
    r = a.reward(3, np.zeros(10, dtype=int))
    assert np.allclose(r, a.means[3, :, 0] + a.noise[3, :, 0])


def test_linucb_solves_a_linear_bandit():
    p = D.bandit_problem(0, rounds=300, noise=0.1)
    feats = np.concatenate([p.contexts, np.ones(p.contexts.shape[:3] + (1,), np.float32)], -1)
    w = np.random.default_rng(0).normal(size=(10, 17))
    p.means = np.einsum("tmkd,md->tmk", feats, w)  # exactly linear: LinUCB is well specified
    out = T.run_bandit(T.build_baseline("linucb", mode="bandit"), p)
    assert out["late_rate"] < 0.05 * float((p.means.max(2)[:, :, None] - p.means).mean())


def test_greedy_splits_ties_and_the_per_task_learner_is_exact_with_every_state_labelled():
    assert np.allclose(T.greedy(torch.zeros(3, 5)), 0.2)
    assert np.allclose(T.greedy(torch.tensor([[0.0, 2.0, 2.0, 1.0, 0.0]])), [[0, 0.5, 0.5, 0, 0]])
    r = D.reward_functions("mlp", 4, np.random.default_rng(3))
    feats = torch.as_tensor(D.state_features())
    cells = torch.arange(64).repeat(4, 1)
    z = PerTaskVI().encode(feats[cells], torch.tensor(r, dtype=torch.float32))
    logits = PerTaskVI().policy(feats.repeat(4, 1), z.repeat_interleave(64, 0)).reshape(4, 64, 5)
    assert np.allclose(D.normalised_return(r, T.greedy(logits)), 1.0, atol=1e-4)
    rp = RandomPolicy()
    assert np.allclose(T.greedy(rp.policy(feats, rp.encode(feats[None], torch.zeros(1, 64)))), 0.2)


def test_evaluate_both_modes_and_the_contract():
    r = T.evaluate(T.build_baseline("linucb", mode="bandit"), steps=30, baselines=["random"])
    assert {"regret", "regret@half", "late_rate"} <= set(r.metrics) and r.config["rounds"] == 30
    assert r.baselines["random"]["regret"] > 0
    g = T.evaluate(T.build_baseline("per_task", mode="gridworld"), steps=2, n_eval=4, baselines=["random"])
    assert 0.3 < g.metrics["return"] <= 1.0 and g.baselines["random"]["return"] < g.metrics["return"]
    for model in (T.build_baseline("linucb", mode="bandit"), T.build_baseline("random", mode="gridworld")):
        x = T.example_input(model)
        T.check_output(model, model(*x) if isinstance(x, tuple) else model(x))
    with pytest.raises(AssertionError, match="arm scores"):
        T.check_output(T.build_baseline("linucb", mode="bandit"), torch.zeros(10, 7))


def test_errors_name_the_choices():
    with pytest.raises(ValueError, match="bandit, gridworld"):
        T.describe(mode="maze")
    with pytest.raises(ValueError, match="choose from"):
        T.build_baseline("dqn", mode="bandit")
    with pytest.raises(ValueError, match="for mode 'gridworld'"):
        T.build_baseline("per_task", mode="bandit")
    with pytest.raises(ValueError, match="unknown bandit option"):
        T.describe(mode="bandit", arms=3)
    with pytest.raises(ValueError, match="input_kind"):
        T.evaluate(T.build_baseline("linucb", mode="bandit"), mode="gridworld")
