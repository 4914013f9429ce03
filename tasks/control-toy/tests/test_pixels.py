"""control_toy pixels mode: the environment's known answers, the switch, the metrics and the baselines."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo.task import count_params
from zoo_task_control_toy import pixels as P
from zoo_task_control_toy import task as T


def test_render_move_reward_reset_and_walls():
    env = P.PixelGrid(3, 0)
    env.pos[:] = [[[0, 0], [0, 1], [5, 5]], [[2, 2], [0, 0], [3, 2]], [[0, 3], [4, 4], [5, 0]]]
    f = env.render()
    assert f.shape == (3, 3, 6, 6) and torch.equal(f.sum((2, 3)), torch.ones(3, 3)) and f[0, 0, 0, 0] == 1
    r, done, contact = env.step(np.array([4, 2, 1]))  # right onto A, down onto B, up into the wall
    np.testing.assert_array_equal(r, [1.0, -1.0, 0.0])
    np.testing.assert_array_equal(done, [True, True, False])
    np.testing.assert_array_equal(contact, [[True, False], [False, True], [False, False]])
    assert env.pos[2, 0].tolist() == [0, 3] and env.t.tolist() == [0, 0, 1]  # clipped; finished episodes reset
    for _ in range(P.TIMEOUT - 1):
        env.pos[2, 1:] = [[5, 5], [5, 4]]
        env.step(np.array([0, 0, 0]))
    assert env.t[2] == 0  # timed out and reset
    with pytest.raises(ValueError, match="actions"):
        env.step(np.array([5, 0, 0]))


class Oracle(torch.nn.Module):
    """Walks to object A (the rewarding one before the switch) by the frames; no learning."""

    input_kind = "pixels"

    def forward(self, f):
        pa = f[:, 0].flatten(1).argmax(1)
        po = f[:, 1].flatten(1).argmax(1)
        dr, dc = po // 6 - pa // 6, po % 6 - pa % 6
        a = torch.where(dr < 0, 1, torch.where(dr > 0, 2, torch.where(dc < 0, 3, 4)))
        return torch.nn.functional.one_hot(a, 5).float()

    def update(self, *args):
        pass


def test_oracle_scores_near_optimum_and_pays_for_the_switch():
    c_st = P.run(Oracle(), variant="stationary", steps=200, seed=0)
    c_sw = P.run(Oracle(), variant="switching", steps=200, seed=0)
    m = P.metrics(c_st, c_sw)
    assert m["return"] > 0.15 and m["pre_switch"] > 0.15 and m["return_switch"] < -0.15
    np.testing.assert_array_equal(c_st[:100], c_sw[:100])  # same seed, same stream until the switch


def test_metrics_windows():
    st, sw = np.arange(8.0), np.r_[np.ones(4), -np.ones(4)]
    m = P.metrics(st, sw)
    assert m == {"return": 6.5, "return_switch": -1.0, "adapt": -1.0, "pre_switch": 1.0}


def test_evaluate_pixels_and_baselines():
    dqn = T.build_baseline("pixel_dqn", mode="pixels", params=2000)
    assert abs(count_params(dqn) - 2000) / 2000 < 0.1
    r = T.evaluate(T.build_baseline("random", mode="pixels"), steps=8, baselines=["pixel_dqn"])
    assert set(r.metrics) >= {"return", "adapt", "return_switch", "params"} and "pixel_dqn" in r.baselines
    assert abs(r.metrics["return"]) < 0.5
    out = T.example_input(dqn)
    T.check_output(dqn, dqn(out))
    assert T.describe(mode="pixels")["baselines"] == ["pixel_dqn", "random"]
    with pytest.raises(ValueError, match="pixels"):
        T.build_baseline("per_task", mode="pixels")
    with pytest.raises(ValueError, match="pixels takes"):
        T.describe(mode="pixels", dim=3)
    with pytest.raises(ValueError, match="variant"):
        P.run(Oracle(), variant="drift", steps=8)
