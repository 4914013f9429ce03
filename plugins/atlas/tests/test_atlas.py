"""atlas: the conformance kit, aTLAS's exact special cases, what per-block coefficients can do that one lambda cannot."""
from __future__ import annotations

import pytest
import torch
from torch import nn

from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_atlas.model import AtlasMerge, AtlasModel, atlas
from zoo_atlas.reproduce import REPRODUCTION
from zoo_task_task_merge import baselines as B
from zoo_task_task_merge import suite as S


def test_conformance(hub):
    check_plugin("atlas")


@pytest.fixture(scope="module")
def tiny():
    return S.build_suite(seed=0, tasks=("parity", "mod3", "loops"), pre_steps=60, ft_steps=20, hidden=16)


def test_equal_coefficients_are_task_arithmetic(tiny):
    for lam in (0.0, 0.3, 1.0):
        m = AtlasModel(tiny.architecture(), tiny.base_state, tiny.task_vectors, init=lam)
        ta = B.task_arithmetic(tiny, lam)
        got = m.merged_state_dict()
        assert all(torch.allclose(got[k], ta[k], atol=1e-6) for k in ta)
        x, _ = tiny.test("mod3")
        with torch.no_grad():
            assert torch.allclose(m(x, "mod3"), tiny.load(ta)(x, "mod3"), atol=1e-5)  # functional_call forward
    assert m.coefficients.shape == (3, len(tiny.base_state)) and sum(p.numel() for p in m.parameters()) == 15


def test_per_block_coefficients_reach_what_one_lambda_cannot():
    # two blocks, one task vector: the target is block a from the task, block b from the base. Any single lambda
    # misses one of them; aTLAS's per-block coefficients get both exactly: (1, 0)
    arch = nn.Linear(2, 1, bias=True)
    base = {"weight": torch.zeros(1, 2), "bias": torch.zeros(1)}
    tv = [{"weight": torch.tensor([[1.0, -1.0]]), "bias": torch.tensor([2.0])}]
    m = AtlasModel(arch, base, tv)
    with torch.no_grad():
        m.coefficients.copy_(torch.tensor([[1.0, 0.0]]))
    x = torch.tensor([[3.0, 1.0], [0.0, 2.0]])
    assert m(x).flatten().tolist() == [2.0, -2.0]
    best_single = min(float(((x @ (lam * tv[0]["weight"]).T + lam * 2.0).flatten() - torch.tensor([2.0, -2.0])).abs().sum())
                      for lam in torch.linspace(-2, 2, 401))
    assert best_single > 1.0


def test_merge_trains_only_the_coefficients_and_lowers_the_loss(tiny):
    fs = {t: tiny.few_shot(t, 2, seed=0) for t in tiny.tasks}
    before = {k: v.clone() for k, v in tiny.base_state.items()}
    merger = AtlasMerge(steps=30)
    state = merger.merge(tiny, few_shot=fs)
    assert merger.losses[-1] < merger.losses[0]
    assert all(torch.equal(before[k], tiny.base_state[k]) for k in before)  # the suite is untouched
    lam = merger.last.coefficients.detach()
    assert lam.shape == (3, 5) and lam.abs().sum() > 0 and not torch.allclose(lam, lam.mean().expand_as(lam))
    assert set(state) == set(tiny.base_state)
    assert merger.learnable_coefficients(tiny) == 15
    ent = AtlasMerge(objective="entropy", steps=10, unlabeled=32).merge(tiny)
    assert set(ent) == set(tiny.base_state)


def test_bad_inputs_raise(tiny):
    with pytest.raises(ValueError, match="shots"):
        AtlasMerge(steps=1).merge(tiny)  # supervised objective without labelled data
    with pytest.raises(ValueError, match="no data for tasks"):
        AtlasMerge(steps=1).merge(tiny, few_shot={"mod3": tiny.few_shot("mod3", 1)})
    with pytest.raises(ValueError, match="objective"):
        atlas(objective="fixmatch")
    with pytest.raises(TypeError, match="width"):
        atlas(width=3)
    with pytest.raises(ValueError, match="preset"):
        atlas(preset="huge")
    with pytest.raises(ValueError, match="task vector 0"):
        AtlasModel(nn.Linear(2, 1), {"weight": torch.zeros(1, 2), "bias": torch.zeros(1)}, [{"weight": torch.zeros(1, 2)}])
    with pytest.raises(ValueError, match="at least one"):
        AtlasModel(nn.Linear(2, 1), {"weight": torch.zeros(1, 2), "bias": torch.zeros(1)}, [])
    with pytest.raises(TypeError, match="merging method"):
        atlas()(torch.zeros(1, 64))


def test_quick_claim_rows_differ(monkeypatch):
    monkeypatch.setattr(S, "PRE_STEPS", 60)
    monkeypatch.setattr(S, "FT_STEPS", 20)
    monkeypatch.setattr(S, "HIDDEN", 16)
    res = run_claim(REPRODUCTION, quick=True)
    assert res.rows["atlas"]["coefficients"]["mean"] == 15
    assert res.rows["atlas"]["avg_acc"]["mean"] != res.rows["task_arithmetic"]["avg_acc"]["mean"]
