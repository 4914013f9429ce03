"""stf-merge: the conformance kit, STF's exact special cases and what tells it from task arithmetic."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_stf_merge.model import STFMerge, linear_weight_names, merge, stf, stf_matrix, stf_merge
from zoo_stf_merge.reproduce import REPRODUCTION
from zoo_task_task_merge import baselines as B
from zoo_task_task_merge import suite as S


def test_conformance(hub):
    check_plugin("stf-merge")


@pytest.fixture(scope="module")
def tiny():
    return S.build_suite(seed=0, tasks=("parity", "mod3", "loops"), pre_steps=60, ft_steps=20, hidden=16)


def test_single_task_and_identical_models_come_back_exactly():
    torch.manual_seed(0)
    m = torch.randn(7, 5)
    assert torch.allclose(stf_matrix([m]), m, atol=1e-5)
    assert torch.allclose(stf_matrix([m, m, m, m]), m, atol=1e-5)  # task arithmetic at 1 would give 4 m
    base = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3))
    tuned = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3))
    for model in ([tuned], [tuned, tuned]):
        got = merge(base, model)
        assert all(torch.allclose(a, b, atol=1e-5) for a, b in zip(got.state_dict().values(),
                                                                   tuned.state_dict().values(), strict=True))


def test_features_in_orthogonal_subspaces_add_up_like_task_arithmetic():
    # two task matrices with orthogonal column and row spaces cannot interfere: STF is their plain sum
    q1, _ = torch.linalg.qr(torch.randn(8, 8, generator=torch.Generator().manual_seed(1)))
    q2, _ = torch.linalg.qr(torch.randn(6, 6, generator=torch.Generator().manual_seed(2)))
    a = q1[:, :3] @ torch.diag(torch.tensor([3.0, 2.0, 1.0])) @ q2[:, :3].T
    b = q1[:, 3:5] @ torch.diag(torch.tensor([5.0, 0.5])) @ q2[:, 3:5].T
    assert torch.allclose(stf_matrix([a, b]), a + b, atol=1e-5)


def test_overlapping_features_keep_each_response_unlike_task_arithmetic():
    torch.manual_seed(3)
    u = torch.nn.functional.normalize(torch.randn(6), dim=0)
    v1, v2 = torch.nn.functional.normalize(torch.randn(2, 4), dim=1)
    a, b = 2.0 * torch.outer(u, v1), 1.0 * torch.outer(u, v2)  # one shared output feature, two inputs
    m = stf_matrix([a, b])
    assert float(u @ m @ v1) == pytest.approx(2.0, abs=1e-5) and float(u @ m @ v2) == pytest.approx(1.0, abs=1e-5)
    ta = a + b
    assert abs(float(u @ ta @ v1) - 2.0) > 0.05  # the sum over-counts along the shared feature


def test_rank_and_energy_select_features():
    m = torch.diag(torch.tensor([4.0, 2.0, 1.0, 0.0]))
    assert torch.allclose(stf_matrix([m], rank=1), torch.diag(torch.tensor([4.0, 0, 0, 0])), atol=1e-6)
    assert torch.allclose(stf_matrix([m], energy=0.9), torch.diag(torch.tensor([4.0, 2.0, 0, 0])), atol=1e-6)


def test_suite_merge_covers_every_linear_layer(tiny):
    arch = tiny.architecture()
    assert linear_weight_names(arch) == ["fc1.weight", "fc2.weight"]
    state = STFMerge().merge(tiny)
    assert set(state) == set(tiny.base_state)
    avg = B.weight_averaging(tiny)
    assert torch.allclose(state["fc1.bias"], avg["fc1.bias"]) and torch.equal(state["heads"], tiny.base_state["heads"])
    assert not torch.allclose(state["fc1.weight"], avg["fc1.weight"], atol=1e-4)
    one = STFMerge().merge(tiny, tasks=["mod3"])  # a single task: that task's fine-tuned model
    assert all(torch.allclose(one[k], tiny.task_states[1][k], atol=1e-4) for k in one)


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="one shape"):
        stf_matrix([torch.zeros(3, 2), torch.zeros(2, 3)])
    with pytest.raises(ValueError, match="at least one"):
        stf_matrix([])
    with pytest.raises(ValueError, match="energy"):
        stf_matrix([torch.ones(2, 2)], energy=0.0)
    with pytest.raises(ValueError, match="other"):
        stf_merge({"w": torch.zeros(2, 2)}, [{"w": torch.ones(2, 2)}], ["w"], other="median")
    with pytest.raises(ValueError, match="not in the base"):
        stf_merge({"w": torch.zeros(2, 2)}, [{"w": torch.ones(2, 2)}], ["v"])
    with pytest.raises(ValueError, match="preset"):
        stf(preset="huge")
    with pytest.raises(TypeError, match="lam"):
        stf(lam=1)
    with pytest.raises(TypeError, match="merging method"):
        stf()(torch.zeros(1, 64))


def test_quick_claim_rows_differ(monkeypatch):
    monkeypatch.setattr(S, "PRE_STEPS", 60)
    monkeypatch.setattr(S, "FT_STEPS", 20)
    monkeypatch.setattr(S, "HIDDEN", 16)
    res = run_claim(REPRODUCTION, quick=True)
    assert res.rows["stf"]["avg_acc"]["mean"] != res.rows["task_arithmetic"]["avg_acc"]["mean"]
