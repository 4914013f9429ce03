"""oc-gvf plugin: the conformance kit and the object-centric properties a raw-pixel DQN does not have."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from zoo.testing import check_plugin
from zoo_oc_gvf.model import OCGVF, oc_gvf, slots, touched
from zoo_task_control_toy import pixels as P


def test_conformance(hub):
    check_plugin("oc-gvf", overrides={"oc_gvf": {"width": 8}})


def frame(agent, a, b):
    env = P.PixelGrid(1, 0)
    env.pos[0] = [agent, a, b]
    return env.render()


def test_gvfs_are_translation_invariant_unlike_the_pixel_dqn():
    torch.manual_seed(0)
    net, dqn = oc_gvf(), P.PixelDQN(width=16)
    f1, f2 = frame([1, 1], [1, 3], [3, 1]), frame([2, 2], [2, 4], [4, 2])  # the same scene shifted by (1, 1)
    torch.testing.assert_close(net.gvf(f1), net.gvf(f2))
    assert not torch.allclose(dqn(f1), dqn(f2))


def test_swapping_the_objects_swaps_the_question_blocks():
    torch.manual_seed(1)
    net = oc_gvf()
    f = frame([0, 0], [2, 5], [4, 1])
    swapped = f[:, [0, 2, 1]]
    g, gs = net.gvf(f).view(2, 5), net.gvf(swapped).view(2, 5)
    torch.testing.assert_close(g[[1, 0]], gs)
    s = slots(f)
    assert s.shape == (1, 2, 22) and torch.equal(s.sum(-1), torch.full((1, 2), 2.0))


def test_cumulants_match_the_task_contacts():
    env = P.PixelGrid(32, 3)
    rng = np.random.default_rng(0)
    for _ in range(30):
        f, a = env.render(), rng.integers(0, 5, 32)
        _, done, contact = env.step(a)
        c = touched(f, torch.from_numpy(a)) * torch.from_numpy(done)[:, None].float()
        np.testing.assert_array_equal(c.numpy(), contact)


def test_update_learns_the_question_of_a_contact():
    # a terminal move onto object A: q_A(s, right) is pulled towards c_A = 1, q_B(s, right) towards 0
    torch.manual_seed(0)
    net = oc_gvf(batch=4, lr=3e-2, width=16)
    f = frame([2, 2], [2, 3], [5, 5]).repeat(4, 1, 1, 1)
    a = torch.full((4,), 4)
    for _ in range(60):
        net.update(f, a, torch.ones(4), f, torch.ones(4, dtype=torch.bool))
    q = net.gvf(f[:1]).view(2, 5)[:, 4]
    assert abs(q[0].item() - 1) < 0.1 and abs(q[1].item()) < 0.1
    assert net(f).shape == (4, 5) and net(f)[0].argmax() == 4  # the reward-trained policy takes the move


def test_input_errors():
    with pytest.raises(ValueError, match="objects"):
        oc_gvf(n_objects=3).gvf(frame([0, 0], [1, 1], [2, 2]))
    with pytest.raises(ValueError, match="frames"):
        slots(torch.zeros(2, 36))
    with pytest.raises(ValueError):
        OCGVF(n_objects=0)
