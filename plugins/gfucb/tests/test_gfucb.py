"""gfucb plugin: the conformance kit, the closed-form optimism on frozen features, and what sharing phi changes."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo.testing import check_plugin
from zoo_gfucb.model import GFUCB, gfucb
from zoo_task_control_toy import data as D
from zoo_task_control_toy import task
from zoo_task_control_toy.baselines import NeuralUCB

TINY = {"hidden": 8}


def test_conformance(hub):
    check_plugin("gfucb", overrides={"gfucb": TINY})


def _play(model, ctx, rewards):
    for c, r in zip(ctx, rewards, strict=True):
        model.update(c, torch.zeros(c.shape[0], dtype=torch.long), r)


def test_scores_are_the_ridge_ucb_of_the_heads_on_frozen_features():
    torch.manual_seed(0)
    m = GFUCB(n_tasks=3, dim=4, hidden=6, alpha=0.7, ridge=2.0, update_every=1000)  # never refits: phi frozen
    ctx, r = torch.randn(30, 3, 2, 4), torch.randn(30, 3)
    fresh = m.scores(ctx[0])
    with torch.no_grad():
        f0 = m.phi(ctx[0])
    torch.testing.assert_close(fresh, 0.7 * f0.norm(dim=-1) / 2.0 ** 0.5)  # V = ridge I, b = 0: the bonus alone
    _play(m, ctx, r)
    q = torch.randn(3, 5, 4)
    with torch.no_grad():
        f, fx = m.phi(q), m.phi(ctx[:, :, 0])  # (3, 5, h), (30, 3, h)
    for i in range(3):
        v = 2.0 * torch.eye(6) + fx[:, i].T @ fx[:, i]
        w = torch.linalg.solve(v, fx[:, i].T @ r[:, i])
        want = f[i] @ w + 0.7 * torch.einsum("kf,fg,kg->k", f[i], torch.linalg.inv(v), f[i]).sqrt()
        torch.testing.assert_close(m.scores(q)[i], want, rtol=1e-4, atol=1e-4)


def test_one_task_data_moves_the_other_tasks_scores_only_when_phi_is_shared():
    # the multihead class: task 0's rewards reshape the shared phi and so task 1's scores; a per-task network (the
    # single-task baseline) keeps task 1 exactly where it was
    ctx = torch.randn(20, 2, 3, 4)
    r_a = torch.randn(20, 2)
    r_b = r_a.clone()
    r_b[:, 0] += 3.0  # only task 0's rewards differ
    out = {}
    for name, make in (("gfucb", lambda: GFUCB(n_tasks=2, dim=4, hidden=8, update_every=20, train_steps=5)),
                       ("neural_ucb", lambda: NeuralUCB(n_tasks=2, dim=4, width=8, update_every=20, train_steps=5))):
        runs = []
        for r in (r_a, r_b):
            torch.manual_seed(0)
            m = make()
            _play(m, ctx, r)
            runs.append(m.scores(ctx[0]))
        out[name] = (runs[0][1] - runs[1][1]).abs().max().item()
    assert out["neural_ucb"] == 0.0 and out["gfucb"] > 1e-3


def test_a_short_run_has_half_the_regret_of_random_arms():
    problem = D.bandit_problem(3, rounds=300)
    torch.manual_seed(3)
    g = gfucb()
    reg = task.run_bandit(g, problem)["regret"]
    rand = task.run_bandit(task.build_baseline("random", mode="bandit", seed=3), problem)["regret"]
    assert reg < 0.5 * rand
    assert np.isfinite(reg)


def test_errors_name_the_fix():
    with pytest.raises(ValueError, match="unknown option"):
        gfucb(width=3)
    with pytest.raises(ValueError, match="hidden must be"):
        GFUCB(hidden=0)
    with pytest.raises(ValueError, match=r"\(M, K, d\)"):
        gfucb().scores(torch.randn(3, 8, 16))
