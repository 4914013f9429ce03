import math

import pytest
import torch

from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_kan_fair import measures
from zoo_kan_fair.model import BSplineActivation, BSplineMLP, bspline_mlp, kan_digits, mlp_digits
from zoo_kan_fair.reproduce import digits_model
from zoo_nn.kan import BSplineKANLayer, bspline_basis
from zoo_task_formula_regress.task import torch_threads

SMALL = {"bspline_mlp": {"hidden": 4}, "bspline_mlp_digits": {"hidden": 4}, "kan_digits": {"hidden": 2},
         "gelu_mlp_digits": {"hidden": 4}}


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):  # tiny networks: extra threads only contend
        yield


def test_conformance(hub):
    check_plugin("kan-fair", overrides=SMALL)


def test_bspline_activation_is_one_spline_per_neuron():
    torch.manual_seed(0)
    act = BSplineActivation(3, grid_size=4)
    assert act.coef.shape == (3, 7)
    x = torch.rand(10, 3) * 2 - 1
    want = (bspline_basis(x, act.grid, 3) * act.coef).sum(-1)
    assert torch.allclose(act(x), want)
    with torch.no_grad():
        act.coef[1].zero_()
    assert torch.equal(act(x)[:, 1], torch.zeros(10))  # neurons do not share their spline
    assert not torch.equal(act(x)[:, 0], torch.zeros(10))


def test_bspline_activation_starts_near_zero():
    torch.manual_seed(0)
    act = BSplineActivation(64, grid_size=5, noise_scale=0.1)
    assert float(act(torch.rand(100, 64) * 2 - 1).detach().abs().max()) < 0.1 / 5


def test_bspline_mlp_layout():
    net = bspline_mlp(in_features=3, hidden=5, depth=2)
    assert isinstance(net, BSplineMLP)
    kinds = [type(m).__name__ for m in net]
    assert kinds == ["Linear", "BSplineActivation", "Linear", "BSplineActivation", "Linear"]
    assert net(torch.rand(4, 3)).shape == (4, 1)


def test_flops_follow_the_papers_accounting():
    mlp = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.GELU(), torch.nn.Linear(4, 2))
    assert measures.flops(mlp) == 2 * 3 * 4 + 14 * 4 + 2 * 4 * 2
    k, g = 3, 5
    spline = 9 * k * (g + 1.5 * k) + 2 * g - 2.5 * k - 1
    layer = torch.nn.Sequential(BSplineKANLayer(3, 2, grid_size=g, spline_order=k))
    assert measures.flops(layer) == 3 * 2 * (spline + 2) + 5 * 3 + 2 * 3 * 2  # edges + SiLU shortcut
    assert measures.flops(BSplineActivation(4, grid_size=g)) == 4 * spline
    with pytest.raises(TypeError):
        measures.flops(torch.nn.Conv2d(1, 1, 3))


def test_digits_networks_are_matched_in_parameters():
    models = {label: digits_model(label, 0) for label in ("MLP", "KAN", "B-spline MLP")}
    target = count_params(models["KAN"])
    assert target == 740 * 10  # KAN([64, 10, 10]): (G + k + 2) = 10 per edge
    for m in models.values():
        assert abs(count_params(m) - target) / target < 0.02
        assert m(torch.rand(2, 1, 8, 8)).shape == (2, 10)


def test_flop_matched_networks_cost_the_kans_flops():
    from zoo_kan_fair.reproduce import KAN_HIDDEN, digits_model_flops, flops_width

    target = measures.flops(kan_digits(hidden=KAN_HIDDEN))
    for label in ("MLP", "B-spline MLP"):
        m = digits_model_flops(label, 0)
        assert abs(measures.flops(m) - target) / target < 0.01, label
        assert count_params(m) > 5 * count_params(kan_digits(hidden=KAN_HIDDEN)), label  # so far from param-matched
    assert flops_width(lambda w: torch.nn.Linear(3, w), 60.0) == 10


def test_forgetting_check_has_a_margin():
    from zoo_kan_fair.reproduce import FORGETTING_MARGIN, REPRODUCTION

    forgetting = [c for c in REPRODUCTION.checks if c.metric == "cl_forgetting"]
    assert [c.margin for c in forgetting] == [FORGETTING_MARGIN] and FORGETTING_MARGIN >= 0.01
    assert len(REPRODUCTION.seeds) >= 5


def test_class_incremental_protocol():
    torch.manual_seed(0)
    out = measures.class_incremental(mlp_digits(hidden=8), steps_per_task=3)
    assert set(out) == {"average_accuracy", "bwt", "forgetting", "acc_after_own_task"}
    assert out["forgetting"] == pytest.approx(-out["bwt"])
    assert 0.0 <= out["average_accuracy"] <= 1.0
    # a network that learned each task and then lost it shows positive forgetting
    torch.manual_seed(0)
    out = measures.class_incremental(mlp_digits(hidden=32), tasks=((0, 1), (2, 3)), steps_per_task=100)
    assert out["acc_after_own_task"] > 0.9 and out["forgetting"] > 0.3


def test_quick_reproduction_runs_the_three_settings_at_equal_size():
    from zoo.claims import run_claim
    from zoo_kan_fair.reproduce import REPRODUCTION

    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.table) == ["MLP", "KAN", "B-spline MLP", "MLP (FLOP-matched)", "B-spline MLP (FLOP-matched)"]
    assert r.seeds == [0, 1]
    assert [c["check"] for c in r.checks] == ["digits_acc: MLP - KAN >= 0", "digits_acc: MLP (FLOP-matched) - KAN >= 0",
                                              "log_rel_rmse_gmean: MLP - KAN >= 0",
                                              "log_rel_rmse_gmean: KAN - B-spline MLP >= -0.0953102",
                                              "cl_forgetting: KAN - MLP >= 0.01"]
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    param_rows = ("MLP", "KAN", "B-spline MLP")
    for key in ("digits_params", "formula_params"):  # equal parameter count on both tasks
        assert all(abs(r.table[k][key] - r.table["KAN"][key]) / r.table["KAN"][key] < 0.1 for k in param_rows), key
    for k in ("MLP (FLOP-matched)", "B-spline MLP (FLOP-matched)"):  # equal FLOPs on digits
        assert abs(r.table[k]["digits_flops"] - r.table["KAN"]["digits_flops"]) / r.table["KAN"]["digits_flops"] < 0.01
    # the KAN costs far more FLOPs than the MLP of its size (the paper's point), and trains differently
    assert r.table["KAN"]["digits_flops"] > 5 * r.table["MLP"]["digits_flops"]
    for key in ("digits_acc", "rel_rmse:xy", "cl_forgetting"):
        assert r.per_seed["KAN"][key] != r.per_seed["MLP"][key], key
    assert r.per_seed["B-spline MLP"]["rel_rmse:xy"] != r.per_seed["KAN"]["rel_rmse:xy"]
