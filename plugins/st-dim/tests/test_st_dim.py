"""st-dim plugin: the conformance kit and the properties of the spatiotemporal InfoNCE objective."""
from __future__ import annotations

import math

import pytest
import torch

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_st_dim.model import PAPER, STDIM, infonce, st_dim
from zoo_st_dim.reproduce import REPRODUCTION
from zoo_task_ssl_probe import pong

TINY = {"width": 4, "feature_size": 8}


def test_conformance(hub):
    check_plugin("st-dim", overrides={"st_dim": TINY})


def test_presets_shapes_and_errors():
    paper = st_dim(preset="paper")
    assert paper.encoder.feature_size == PAPER["feature_size"] == 256 and paper.encoder.local_depth == 128
    m = st_dim(**TINY)
    x = torch.rand(3, 1, 32, 32)
    assert m(x).shape == (3, 8) and m.local_features(x).shape == (3, 16, 8, 8)
    s = m.scores(x, x)
    assert s["gl"].shape == s["ll"].shape == (64, 3, 3)  # (cells, B, B)
    assert m.critic_gl.weight.shape == (16, 8) and m.critic_ll.weight.shape == (16, 16)
    with pytest.raises(ValueError, match="preset"):
        st_dim(preset="huge")
    with pytest.raises(ValueError, match="global_local"):
        STDIM(global_local=False, local_local=False)
    with pytest.raises(ValueError, match="same shape"):
        m.ssl_loss(x, x[:2])


def test_constant_critic_gives_log_batch_per_term():
    m = st_dim(**TINY)
    for critic in (m.critic_gl, m.critic_ll):
        torch.nn.init.zeros_(critic.weight)
        torch.nn.init.zeros_(critic.bias)
    x, y = torch.rand(6, 1, 32, 32), torch.rand(6, 1, 32, 32)
    with torch.no_grad():
        assert float(m.ssl_loss(x, y)) == pytest.approx(2 * math.log(6), abs=1e-6)  # L_GL + L_LL, log(B) each
        # a random (non-constant) critic: the global-local term alone is not log(B)
        assert float(STDIM(**TINY, local_local=False).ssl_loss(x, y)) != pytest.approx(math.log(6), abs=1e-3)
    assert float(infonce(torch.zeros(5, 7, 7))) == pytest.approx(math.log(7))


def test_scores_are_the_bilinear_critics_of_section_3():
    torch.manual_seed(0)
    m = st_dim(**TINY)
    x, y = torch.rand(4, 1, 32, 32), torch.rand(4, 1, 32, 32)
    with torch.no_grad():
        s = m.scores(x, y)
        g_next, l_next = m.encoder(y, with_local=True)
        l_t = m.local_features(x)
    c, i, j = 37, 1, 2  # cell 37 = (row 4, column 5) of the 8x8 map
    cell_t, cell_next = l_t[i, :, 4, 5], l_next[j, :, 4, 5]
    with torch.no_grad():
        gl = cell_t @ (m.critic_gl.weight @ g_next[j] + m.critic_gl.bias)  # phi(x_next)^T W_g phi_mn(x_t) (+ bias)
        ll = cell_t @ (m.critic_ll.weight @ cell_next + m.critic_ll.bias)
    assert float(s["gl"][c, i, j]) == pytest.approx(float(gl), rel=1e-5)
    assert float(s["ll"][c, i, j]) == pytest.approx(float(ll), rel=1e-5)


def test_loss_pairs_samples_by_index_and_is_asymmetric_in_time():
    torch.manual_seed(0)
    m = st_dim(**TINY)
    x, y = torch.rand(8, 1, 32, 32), torch.rand(8, 1, 32, 32)
    perm = torch.tensor([3, 0, 6, 1, 7, 2, 5, 4])
    with torch.no_grad():
        base = float(m.ssl_loss(x, y))
        assert float(m.ssl_loss(x[perm], y[perm])) == pytest.approx(base, rel=1e-5)  # same pairs, new order
        assert abs(float(m.ssl_loss(x, y[perm])) - base) > 1e-4  # the positives changed
        assert abs(float(m.ssl_loss(y, x)) - base) > 1e-4  # global of t+1 vs local of t, not symmetric


def test_training_on_consecutive_frames_separates_true_from_shuffled_pairs():
    # the InfoNCE objective learns which x_t+1 follows which x_t: after a few steps, true consecutive pairs score a
    # lower loss than the same frames paired at random (an autoencoder's loss cannot tell the two apart at all)
    data = pong.load(0, episode_len=100, pretrain_episodes=8, probe_train_episodes=1, probe_test_episodes=1)
    torch.manual_seed(0)
    m = st_dim(width=8, feature_size=16)
    before = pong.train(m, data, steps=40, seed=0, **{**m.ssl_defaults, "lr": 1e-3})
    assert before["pretrain_steps"] == 40
    x, y = pong.consecutive_sampler(data, 2)(torch.Generator().manual_seed(1), 64)
    with torch.no_grad():
        true_pairs = float(m.ssl_loss(x, y))
        shuffled = float(m.ssl_loss(x, y[torch.randperm(64, generator=torch.Generator().manual_seed(2))]))
    assert true_pairs < 2 * math.log(64) - 0.2 and true_pairs < shuffled - 0.3  # 2 log 64 = 8.32 at a constant critic


def test_quick_reproduction_runs_and_rows_differ():
    result = run_claim(REPRODUCTION, quick=True)
    rows = result.rows
    assert set(rows) == {"st_dim", "random_cnn", "autoencoder", "supervised"}
    assert rows["random_cnn"]["params"]["mean"] == rows["st_dim"]["params"]["mean"] == rows["autoencoder"]["params"]["mean"]
    assert rows["st_dim"]["params_total"]["mean"] - rows["st_dim"]["params"]["mean"] == (32 * 64 + 64) + (64 * 64 + 64)
    assert rows["st_dim"]["mean_f1"]["mean"] != rows["random_cnn"]["mean_f1"]["mean"]


def test_pretrained_tag_is_probed_without_retraining_and_beats_the_random_encoder():
    model = zoo.create("st_dim.pong", pretrained=True)
    small = {"episode_len": 500, "pretrain_episodes": 1, "probe_train_episodes": 2, "probe_test_episodes": 1}
    before = {k: v.clone() for k, v in model.state_dict().items()}
    res = pong.run(model, steps=5, seed=0, baselines=["random_cnn"], init_probe=False, **small)
    assert res.config["trained"] is False and "pretrain_steps" not in res.metrics
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert res.metrics["mean_f1"] > res.baselines["random_cnn"]["mean_f1"] + 0.05
