"""fre plugin: the conformance kit, the encoder's permutation invariance and use of every sample, the VAE objective,
the planning agent's exact value iteration, and both agents' pretraining."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo.testing import check_plugin
from zoo_fre.model import FRE, fre
from zoo_task_control_toy import data as D
from zoo_task_control_toy import task

TINY = {"width": 8, "hidden": [16], "layers": 1}


def test_conformance(hub):
    check_plugin("fre", overrides={"fre": TINY})


def _pairs(seed: int = 0):
    rng = np.random.default_rng(seed)
    tables = D.reward_functions("linear", 3, rng)
    cells = torch.as_tensor(rng.integers(0, 64, (3, 32)))
    feats = torch.as_tensor(D.state_features())
    return feats[cells], torch.tensor(np.take_along_axis(tables, cells.numpy(), 1), dtype=torch.float32)


def test_the_encoding_is_a_function_of_the_set_of_pairs():
    torch.manual_seed(0)
    m = FRE(width=16, hidden=(32,)).eval()
    s, r = _pairs()
    perm = torch.randperm(32)
    z = m.encode(s, r)
    torch.testing.assert_close(m.encode(s[:, perm], r[:, perm]), z, rtol=1e-5, atol=1e-5)  # no positions
    # every sample counts: relabelling the lowest-reward sample moves z (a goal-conditioned agent, which keeps only
    # the best sample, would not move)
    low = r.argmin(1)
    r2 = r.clone()
    r2[torch.arange(3), low] += 0.5
    assert (m.encode(s, r2) - z).abs().max() > 1e-4
    gc = task.build_baseline("goal_conditioned", mode="gridworld")
    torch.testing.assert_close(gc.encode(s, r2), gc.encode(s, r))


def test_vae_loss_is_reconstruction_plus_weighted_kl():
    torch.manual_seed(1)
    m = FRE(width=8, hidden=(16,), kl_weight=0.3)
    s, r = _pairs(1)
    loss, mean = m.vae_loss(s, r, s[:, :5], r[:, :5], torch.zeros(3, 8))
    mu, log_std = m.posterior(s, r)
    rec = ((m.decode(mu, s[:, :5]) - r[:, :5]) ** 2).mean()
    kl = -0.5 * (1 + log_std - mu ** 2 - log_std.exp()).mean()
    torch.testing.assert_close(loss, rec + 0.3 * kl)
    torch.testing.assert_close(mean, mu)


def test_planning_agent_is_exact_value_iteration_of_the_decoded_reward():
    m = FRE(width=8, hidden=(16,)).eval()
    tables = D.reward_functions("mlp", 2, np.random.default_rng(2))
    t = torch.tensor(tables, dtype=torch.float32)
    m.decode = lambda z, states: t[z[:, 0].long()]  # a perfect decoder: z[0] names the task
    z = torch.zeros(2, 8)
    z[1, 0] = 1
    q = m.plan(z)
    np.testing.assert_allclose(q.numpy(), D.value_iteration(tables)[1], atol=1e-4)
    feats = torch.as_tensor(D.state_features())
    logits = m.policy(feats.repeat(2, 1), z.repeat_interleave(64, 0)).reshape(2, 64, 5)
    assert np.allclose(D.normalised_return(tables, task.greedy(logits)), 1.0, atol=1e-5)


@pytest.mark.parametrize("agent", ["value_iteration", "iql"])
def test_pretraining_runs_and_reduces_to_the_task_metrics(agent):
    torch.manual_seed(0)
    m = fre(width=8, hidden=[16], layers=1, agent=agent, batch_tasks=4, batch_transitions=4, warmup=0.5)
    assert hasattr(m, "actor") == (agent == "iql")  # the planning agent has no actor, critics or value
    before = [p.detach().clone() for p in m.decoder.parameters()]
    r = task.evaluate(m, steps=4, n_eval=2, baselines=[])
    assert np.isfinite(r.metrics["final_vae_loss"]) and 0 <= r.metrics["return"] <= 1
    assert np.isfinite(r.metrics["final_rl_loss"]) == (agent == "iql")
    assert all(not torch.equal(a, b) for a, b in zip(before, m.decoder.parameters(), strict=True))


def test_errors_name_the_fix():
    with pytest.raises(ValueError, match="preset"):
        fre(preset="huge")
    with pytest.raises(ValueError, match="unknown option"):
        fre(depth=3)
    with pytest.raises(ValueError, match="agent"):
        fre(agent="dqn")
    with pytest.raises(ValueError, match=r"states \(B, K, 66\)"):
        fre().encode(torch.rand(2, 32, 10), torch.rand(2, 32))
    assert fre(preset="paper").width == 128 and fre(preset="paper").agent == "iql"


def test_the_shipped_tag_solves_linear_rewards_zero_shot():
    import zoo

    m = zoo.create("fre.gridworld")
    assert m.zoo.pretrained
    linear = task.zero_shot(m, task.offline_data(0), seed=0, n_eval=8, families=("linear",))["return_linear"]
    fresh = task.zero_shot(fre().eval(), task.offline_data(0), seed=0, n_eval=8, families=("linear",))["return_linear"]
    assert linear > 0.9 and fresh < 0.8  # an untrained encoder is near the random policy's 0.5
