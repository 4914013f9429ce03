"""FAME plugin: the conformance kit, the control path, the mixture-of-experts field and the bidirectional CDE."""
from __future__ import annotations

import pytest
import torch

from zoo.testing import check_plugin
from zoo_fame.model import FAME, MoEVectorField, fame, linear_path

TINY = {"hidden": 8, "experts": 2, "expert_width": 8, "steps": 4, "heads": 2, "decoder_width": 8}


def _samples(b: int = 3, n: int = 30, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(b, n, generator=g).sort(1).values
    return torch.stack([t, torch.sin(6 * t) + 0.1 * torch.randn(b, n, generator=g)], -1)


def _model(**kw) -> FAME:
    torch.manual_seed(0)
    return FAME(**{**TINY, "steps": 8, **kw}).eval()


def test_conformance(hub):
    check_plugin("fame", overrides={"fame": TINY})


def test_presets():
    assert fame().steps == 64 and fame().cde.solver == "euler" and fame(preset="paper").cde.solver == "rk4"
    assert fame(preset="paper").hidden == 64 and fame(hidden=16).hidden == 16
    with pytest.raises(ValueError, match="preset"):
        fame(preset="huge")
    with pytest.raises(ValueError, match="top_k"):
        MoEVectorField(8, 2, experts=2, top_k=3)


def test_linear_path_interpolates_and_holds_the_ends():
    s = torch.tensor([[[0.2, 1.0], [0.6, 3.0]]])
    path = linear_path(s, None, torch.tensor([0.0, 0.2, 0.4, 0.6, 1.0]))
    assert torch.allclose(path[0, :, 1], torch.tensor([1.0, 1.0, 2.0, 3.0, 3.0]))
    assert torch.allclose(path[0, 1:4, 0], torch.tensor([0.2, 0.4, 0.6]))  # the time channel inside the observed range


def test_output_is_invariant_to_points_added_on_a_segment_and_to_sample_order():
    model = _model(steps=64)
    s = _samples()
    mid = (s[:, 4] + s[:, 5]) / 2  # a new observation on the straight segment between two samples
    more = torch.cat([s, mid[:, None]], 1)
    tq = torch.rand(3, 7)
    with torch.no_grad():
        ref = model(s, torch.ones(3, 30, dtype=torch.bool), tq)
        added = model(more, torch.ones(3, 31, dtype=torch.bool), tq)
        shuffled = model(s[:, torch.randperm(30)], torch.ones(3, 30, dtype=torch.bool), tq)
        bumped = s.clone()
        bumped[:, 4, 1] += 0.5
        moved = model(bumped, torch.ones(3, 30, dtype=torch.bool), tq)
    assert torch.allclose(added, ref, atol=1e-5) and torch.allclose(shuffled, ref, atol=1e-5)
    assert not torch.allclose(moved, ref, atol=1e-4)  # a sample off the old path is new information


def test_padded_samples_do_not_change_the_output():
    model = _model()
    s = _samples()
    junk = torch.cat([torch.rand(3, 12, 1), 50 * torch.randn(3, 12, 1)], -1)
    mask = torch.cat([torch.ones(3, 30), torch.zeros(3, 12)], 1).bool()
    tq = torch.rand(3, 5)
    with torch.no_grad():
        assert torch.allclose(model(torch.cat([s, junk], 1), mask, tq), model(s, torch.ones(3, 30, dtype=torch.bool), tq),
                              atol=1e-6)


@pytest.mark.parametrize("top_k", [None, 1, 2])
def test_gates_sum_to_one_and_top_k_routes_to_k_experts(top_k):
    field = MoEVectorField(hidden=6, channels=2, experts=4, width=8, top_k=top_k, groups=2)
    gates = field.gates(torch.randn(2, 5, 6))
    assert gates.shape == (2, 5, 4) and torch.allclose(gates.sum(-1), torch.ones(2, 5), atol=1e-6)
    assert ((gates > 0).sum(-1) == (top_k or 4)).all()
    assert field(torch.randn(2, 5, 6)).shape == (2, 5, 6, 2)


def test_forward_cde_is_causal_and_backward_cde_anticausal():
    # the property an MLP on the whole curve does not have: the forward hidden path before t only sees x before t
    model = _model(steps=10)
    s = _samples(1, 40)
    late = s.clone()
    late[0, s[0, :, 0] > 0.55, 1] += 1.0
    with torch.no_grad():
        (f1, b1), (f2, b2) = model.hidden_paths(s, None), model.hidden_paths(late, None)
    early = model.grid <= 0.5
    assert torch.allclose(f1[:, early], f2[:, early], atol=1e-6) and not torch.allclose(f1[:, -1], f2[:, -1], atol=1e-3)
    assert not torch.allclose(b1[:, 0], b2[:, 0], atol=1e-3)  # the backward path carries the late change to t = 0


def test_rk4_step_matches_a_fine_euler_integration():
    model = _model(steps=4, solver="rk4")
    s = _samples(2, 30)
    with torch.no_grad():
        path = linear_path(s, None, model.grid)[None].expand(2, -1, -1, -1).contiguous()
        rk4 = model.cde(path)[:, :, -1]
        h = torch.baddbmm(model.cde.initial_b, path[:, :, 0], model.cde.initial_w)
        sub = 400
        for k in range(path.shape[2] - 1):
            dx = (path[:, :, k + 1] - path[:, :, k]) / sub
            for _ in range(sub):
                h = h + (model.cde.field(h) @ dx[..., None])[..., 0]
    assert torch.allclose(rk4, h, atol=2e-3)


def test_quick_task_run_trains_fame_and_the_baseline():
    from zoo_task_operator_learn import task

    model = fame(**TINY)
    res = task.evaluate(model, problem="function_on_function", baselines=["mlp_interp"], steps=3, n_train=20, n_test=10)
    m, b = res.metrics, res.baselines["mlp_interp"]
    assert {"rel_l2", "rel_l2_skewed"} <= set(m) and m["rel_l2"] > 0 and m["rel_l2"] != b["rel_l2"]
    assert abs(b["params"] - m["params"]) <= 0.1 * m["params"] + 200  # matched parameters (tiny models: rounding)


@pytest.mark.slow
def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_fame.reproduce import REPRODUCTION

    assert len(REPRODUCTION.seeds) >= 3
    res = run_claim(REPRODUCTION, quick=True)
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")
    assert "shift_growth" in res.rows["fame"]
