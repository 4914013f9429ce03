"""Known answers of ssl_probe's Pong mode: the renderer, the game's bounds, consecutive views, the F1 probe."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo_task_ssl_probe import pong

TINY = {"episode_len": 40, "pretrain_episodes": 2, "probe_train_episodes": 2, "probe_test_episodes": 1}


def test_render_puts_the_ball_and_paddles_where_the_state_says():
    frame = pong.render((7, 12, 3, 20))
    ball = np.argwhere(frame == pong.BALL_LEVEL)
    assert sorted(map(tuple, ball)) == [(12, 7), (12, 8), (13, 7), (13, 8)]  # (row = y, col = x), 2x2
    assert (frame[3:9, pong.LEFT_X] == pong.PADDLE_LEVEL).all() and frame[9, pong.LEFT_X] == 0
    assert (frame[20:26, pong.RIGHT_X] == pong.PADDLE_LEVEL).all() and frame[19, pong.RIGHT_X] == 0
    assert int((frame > 0).sum()) == 4 + 2 * pong.PADDLE_H
    with pytest.raises(ValueError, match="out of range"):
        pong.render((31, 0, 0, 0))


def test_episodes_stay_in_bounds_and_frames_match_their_states():
    frames, states = pong.simulate(3000, np.random.default_rng(3))
    assert states.min() >= 0 and states[:, :2].max() <= pong.BALL_MAX and states[:, 2:].max() <= pong.PADDLE_MAX
    for t in range(0, 3000, 97):
        assert np.array_equal(frames[t], pong.render(states[t]))
    # the ball moves at most 2 px a frame except when it is served again from the centre column
    step = np.abs(np.diff(states[:, :2], axis=0)).max(1)
    served = states[1:, 0] == pong.SIZE // 2 - 1
    assert (step[~served] <= 2).all()
    # it bounces: both walls are reached, and both paddles return the ball (x changes direction away from a paddle)
    assert states[:, 1].min() == 0 and states[:, 1].max() >= pong.BALL_MAX - 1
    dx = np.sign(np.diff(states[:, 0]))
    turns = np.nonzero((dx[:-1] != dx[1:]) & (dx[:-1] != 0) & (dx[1:] != 0))[0] + 1
    assert {int(states[t, 0] <= 3) for t in turns} == {0, 1}


def test_data_is_fixed_by_the_seed_and_views_are_consecutive_frames():
    a, b, c = pong.load(0, **TINY), pong.load(0, **TINY), pong.load(1, **TINY)
    assert torch.equal(a.pretrain, b.pretrain) and torch.equal(a.test_y, b.test_y)
    assert not torch.equal(a.pretrain, c.pretrain)
    assert not a.next_ok[TINY["episode_len"] - 1] and a.next_ok[0]  # no pair across the episode boundary
    x_t, x_next = pong.consecutive_sampler(a, 2)(torch.Generator().manual_seed(0), 16)
    frames = pong.as_float(a.pretrain)
    for u, v in zip(x_t, x_next, strict=True):
        i = int(((frames - u).abs().flatten(1).sum(1) == 0).nonzero()[0])
        assert torch.equal(frames[i + 1], v)
    with pytest.raises(ValueError, match="ssl_views"):
        pong.consecutive_sampler(a, 3)


def test_weighted_f1_and_the_probe_on_ground_truth_one_hot_state():
    assert pong.weighted_f1(torch.tensor([0, 0, 1, 1]), torch.tensor([0, 0, 1, 1])) == 1.0
    # class 0: P = 1, R = 1/2, F1 = 2/3; class 1: P = 2/3, R = 1, F1 = 4/5; weights 1/2 each
    assert pong.weighted_f1(torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 1, 1])) == pytest.approx(11 / 15)
    data = pong.load(0, **TINY)
    onehot = lambda y: torch.cat([torch.nn.functional.one_hot(y[:, j], 16) for j in range(4)], 1).float()  # noqa: E731
    # every test state seen in training (a state never seen has an all-zero one-hot after standardisation)
    s = pong.probe_scores(onehot(data.train_y), data.train_y, onehot(data.train_y), data.train_y)
    assert s["mean_f1"] == 1.0 and s["mean_acc"] == 1.0
    constant = pong.probe_scores(torch.zeros(len(data.train_y), 3), data.train_y, torch.zeros(len(data.test_y), 3),
                                 data.test_y)
    assert constant["mean_f1"] < 0.5  # a constant feature predicts one class per variable


def test_run_trains_the_model_and_scores_the_baselines():
    torch.manual_seed(0)
    model = pong.build_baseline("autoencoder", seed=0)
    res = pong.run(model, steps=3, seed=0, baselines=["random_cnn", "supervised"], init_probe=False, **TINY)
    assert res.metrics["pretrain_steps"] == 3 and 0 <= res.metrics["mean_f1"] <= 1
    assert set(res.baselines) == {"random_cnn", "supervised"}
    assert res.baselines["random_cnn"]["params"] == count(model.encoder)  # sized to the model's encoder
    assert "pretrain_steps" not in res.baselines["random_cnn"]  # untrained
    assert res.baselines["supervised"]["pretrain_steps"] == 3
    with pytest.raises(ValueError, match="unknown baseline"):
        pong.run(model, steps=1, baselines=["vae"], **TINY)
    with pytest.raises(ValueError, match="unknown option"):
        pong.run(model, steps=1, colour=True, **TINY)
    with pytest.raises(ValueError, match="choose from"):
        pong.build_baseline("vae")


def count(m: torch.nn.Module) -> int:
    return sum(p.numel() for p in m.parameters())
