"""The formula_regress task and the shared B-spline KAN layer (zoo_nn.kan)."""
import math

import numpy as np
import pytest
import torch

import zoo
from zoo_nn.kan import KAN, BSplineKANLayer, RBFKANLayer, bspline_basis, kan_param_count, uniform_grid
from zoo_task_formula_regress import task as F

# ---------------------------------------------------------------- B-spline KAN layer


def test_basis_is_a_partition_of_unity_with_local_support():
    grid = uniform_grid(2, 5, 3)
    x = torch.rand(200, 2) * 2 - 1
    b = bspline_basis(x, grid, 3)
    assert b.shape == (200, 2, 8)
    assert torch.allclose(b.sum(-1), torch.ones(200, 2), atol=1e-6)
    assert int((b > 0).sum(-1).max()) == 4  # a cubic B-spline basis: k + 1 non-zero functions per point
    assert float(b.min()) >= 0
    assert torch.equal(bspline_basis(torch.full((1, 2), 5.0), grid, 3), torch.zeros(1, 2, 8))  # outside the grid


def test_cubic_basis_matches_the_cardinal_bspline():
    # uniform knots: B_j(x) = N3((x - t_j) / h) with N3 the cardinal cubic B-spline; N3(2) = 2/3, N3(1) = 1/6
    grid = uniform_grid(1, 4, 3, (0.0, 4.0))  # h = 1, knots -3..7
    b = bspline_basis(torch.tensor([[1.0]]), grid, 3)[0, 0]
    assert torch.allclose(b, torch.tensor([0, 1 / 6, 2 / 3, 1 / 6, 0, 0, 0]), atol=1e-6)


def test_layer_is_eq_2_10_summed_over_inputs():
    torch.manual_seed(0)
    layer = BSplineKANLayer(3, 2, grid_size=4)
    x = torch.rand(16, 3) * 2 - 1
    basis = bspline_basis(x, layer.grid, 3)
    phi = (layer.base_weight * torch.nn.functional.silu(x).unsqueeze(1)
           + layer.spline_scale * torch.einsum("nib,oib->noi", basis, layer.spline_coef))
    assert torch.allclose(layer(x), phi.sum(-1), atol=1e-6)
    assert torch.allclose(layer.edge_activations(x), phi, atol=1e-6)
    assert layer(torch.rand(4, 5, 3)).shape == (4, 5, 2)  # any leading shape


def test_paper_initialisation():
    torch.manual_seed(0)
    layer = BSplineKANLayer(40, 30, noise_scale=0.1)
    assert torch.equal(layer.spline_scale, torch.ones(30, 40))  # w_s = 1
    bound = math.sqrt(6 / (40 + 30))  # Xavier-uniform w_b
    w_max = float(layer.base_weight.detach().abs().max())
    assert 0.9 * bound < w_max <= bound
    assert abs(float(layer.spline_coef.detach().std()) - 0.1) < 0.01  # c ~ N(0, 0.1^2): spline(x) ~ 0
    eff = BSplineKANLayer(40, 30, init="efficient")
    assert not torch.equal(eff.spline_scale, torch.ones(30, 40))
    assert float(eff.spline_coef.detach().abs().max()) < 0.1
    with pytest.raises(ValueError):
        BSplineKANLayer(2, 2, init="xavier")


def test_grid_extension_keeps_the_function_and_refines_the_grid():
    torch.manual_seed(0)
    layer = BSplineKANLayer(2, 3, grid_size=3)
    x = torch.rand(300, 2) * 2 - 1  # inside the grid
    before = layer(x)
    layer.extend_grid(12)  # fitted on points spread over the grid
    assert layer.grid_size == 12 and layer.spline_coef.shape == (3, 2, 15) and layer.grid.shape == (2, 12 + 7)
    assert torch.allclose(layer(x), before, atol=1e-5)  # the fine grid refines the coarse one: exact fit
    net = KAN([2, 3, 1], grid_size=3)
    before = net(x)
    net.extend_grid(6, x)  # hidden activations leave [-1, 1] a little, where the supports differ
    assert net.layers[1].grid_size == 6 and torch.allclose(net(x), before, atol=5e-3)


def test_grid_update_follows_the_data():
    torch.manual_seed(0)
    layer = BSplineKANLayer(1, 1, grid_size=5)
    x = torch.rand(500, 1) * 0.5  # inside [0, 0.5]
    before = layer(x)
    layer.update_grid(x)
    inner = layer.grid[0, 3:-3]
    assert float(inner[0]) == pytest.approx(float(x.min()), abs=0.02)
    assert float(inner[-1]) == pytest.approx(float(x.max()), abs=0.02)
    assert torch.allclose(layer(x), before, atol=2e-3)


def test_kan_parameter_count():
    assert sum(p.numel() for p in KAN([2, 5, 1]).parameters()) == kan_param_count([2, 5, 1]) == 15 * 10
    assert kan_param_count([4, 3, 2], grid_size=10, spline_order=2) == 18 * 14


def test_rbf_layer_bases():
    layer = RBFKANLayer(1, 1, grid_min=-1.0, grid_max=1.0, num_grids=3, layernorm=False)  # h = 1
    assert torch.allclose(layer.basis(torch.tensor([[0.5]]))[0, 0], torch.exp(-torch.tensor([1.5, 0.5, -0.5]) ** 2))
    sw = RBFKANLayer(1, 1, grid_min=-1.0, grid_max=1.0, num_grids=3, basis="rswaf", inv_denominator=0.5,
                     base_activation=None, layernorm=False)
    want = 1 - torch.tanh(torch.tensor([1.5, 0.5, -0.5]) * 0.5) ** 2
    assert torch.allclose(sw.basis(torch.tensor([[0.5]]))[0, 0], want)
    assert sw.base_linear is None and RBFKANLayer(4, 3)(torch.rand(2, 4)).shape == (2, 3)


# ---------------------------------------------------------------- the task


def test_formulas_are_documented_and_data_is_fixed():
    for name, (_fn, d, description, source) in F.FORMULAS.items():
        assert description and "Liu et al. 2024" in source and name in F.DOMAINS
        data = F.make_data(name)
        assert data.x_train.shape == (1000, d) and data.y_test.shape == (1000, 1)
        assert float(data.x_train.abs().max()) <= 1.0
        assert abs(float(data.y_train.mean())) < 1e-5 and abs(float(data.y_train.std()) - 1) < 1e-2
        assert torch.isfinite(data.y_test).all()
    a, b = F.make_data("xy"), F.make_data("xy")
    assert torch.equal(a.x_test, b.x_test) and not torch.equal(a.x_test, F.make_data("xy", seed=1).x_test)
    with pytest.raises(KeyError):
        F.make_data("nope")


def test_formula_values_on_known_points():
    f = {k: v[0] for k, v in F.FORMULAS.items()}
    assert f["bessel_j0"](np.array([[0.0]]))[0] == pytest.approx(1.0)
    assert f["exp_sin_sq"](np.array([[0.5, 1.0]]))[0] == pytest.approx(math.exp(2.0))
    assert f["xy"](np.array([[0.3, -2.0]]))[0] == pytest.approx(-0.6)
    assert f["feynman_I_6_2"](np.array([[0.0, 1.0]]))[0] == pytest.approx(1 / math.sqrt(2 * math.pi))
    assert f["feynman_I_12_11"](np.array([[2.0, 1.0, 3.0, 1.0, math.pi / 2]]))[0] == pytest.approx(8.0)
    assert f["ellipkinc"](np.array([[0.7, 0.0]]))[0] == pytest.approx(0.7)  # F(phi | 0) = phi


def test_inputs_are_rescaled_from_the_domain():
    data = F.make_data("feynman_I_12_11")  # every variable in [1, 5] -> [-1, 1]
    assert float(data.x_train.min()) < -0.99 and float(data.x_train.max()) > 0.99


def test_relative_rmse_of_the_mean_is_one_and_contract():
    data = F.make_data("xy")

    class Const(torch.nn.Module):
        def forward(self, x):
            return torch.full((len(x), 1), float(data.y_test.mean()))

    assert F.relative_rmse(Const(), data) == pytest.approx(1.0, abs=1e-5)
    F.check_output(None, torch.zeros(3, 1))
    with pytest.raises(AssertionError):
        F.check_output(None, torch.zeros(3))
    assert F.example_input().shape == (4, 2)


def test_match_width_and_baselines_at_equal_parameters():
    assert F.match_width(lambda w: torch.nn.Linear(3, w), 41) == 10  # 4 per unit
    for name in ("mlp", "kan"):
        for d in (1, 4):
            model = F.build_baseline(name, params=600, in_features=d)
            assert abs(F.count_params(model) - 600) / 600 < 0.1
            assert model(torch.rand(5, d)).shape == (5, 1)


def test_training_learns_a_formula():
    data = F.make_data("xy")
    torch.manual_seed(0)
    model = F.formula_kan(2, 3)
    threads = torch.get_num_threads()
    with F.torch_threads(1):
        assert torch.get_num_threads() == 1
        out = F.train(model, data, steps=150)
    assert torch.get_num_threads() == threads
    assert out["steps"] == 150 and out["seconds_per_step"] > 0
    assert F.relative_rmse(model, data) < 0.3  # predicting the mean scores 1.0


def test_evaluate_reports_baselines_at_the_model_size():
    torch.manual_seed(0)
    model = F.formula_mlp(in_features=2, hidden=8)  # plain module: evaluated on the d=2 formulas it fits
    before = [p.clone() for p in model.parameters()]
    r = F.evaluate(model, formula=["xy", "bessel_j0"], steps=5)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))  # copies are trained
    assert r.task == "formula_regress" and r.config["formulas"] == ["xy"]  # bessel_j0 has d=1
    assert set(r.baselines) == {"mlp", "kan"}
    p = r.metrics["params:xy"]
    for b in ("mlp", "kan"):
        assert abs(r.baselines[b]["params:xy"] - p) / p < 0.15
        assert 0 < r.baselines[b]["rel_rmse:xy"] and r.baselines[b]["seconds_per_step"] > 0
    assert r.metrics["rel_rmse_gmean"] == pytest.approx(r.metrics["rel_rmse:xy"])
    assert "kan" in r.table("mlp8")


def test_evaluate_rebuilds_through_the_callable_zoo_evaluate_hands_it():
    """The task never imports the factory: a fresh model per formula width comes from ``rebuild``."""
    calls = []

    def rebuild(**overrides):
        calls.append(overrides)
        return F.formula_mlp(overrides["in_features"], 6)

    r = F.evaluate(F.formula_mlp(2, 6), formula=["bessel_j0", "exp_sin_4d"], steps=2, baselines=[], rebuild=rebuild)
    assert calls == [{"in_features": 1}, {"in_features": 4}]
    assert r.config["formulas"] == ["bessel_j0", "exp_sin_4d"] and r.baselines == {}


def test_zoo_evaluate_hands_the_task_a_rebuild_of_the_same_model():
    import zoo

    # a model built for 2 inputs is evaluated on 1- and 4-input formulas: only a rebuild makes that work
    model = zoo.create("mlp_kan_formula", in_features=2)
    r = zoo.evaluate(model, formula=["bessel_j0", "exp_sin_4d"], steps=2, baselines=[])
    assert r.config["formulas"] == ["bessel_j0", "exp_sin_4d"] and "rel_rmse:exp_sin_4d" in r.metrics


def test_pretrained_model_is_scored_as_is_on_its_width():
    torch.manual_seed(0)
    model = F.formula_kan(2, 3)
    before = F.relative_rmse(model, F.make_data("xy"))
    r = F.evaluate(model, formula=["xy", "bessel_j0"], train_model=False, baselines=[])
    assert r.config["formulas"] == ["xy"] and r.metrics["rel_rmse:xy"] == pytest.approx(before)
    assert "steps" not in r.metrics and "seconds_per_step" not in r.metrics


def test_task_is_registered():
    spec = zoo.registry.task("formula_regress")
    assert spec.baselines == ("mlp", "kan") and spec.evaluate == "zoo_task_formula_regress.task:evaluate"


def test_describe_is_what_evaluate_runs(monkeypatch):
    """describe() reports the settings train() really uses: Adam, its lr, full batch, the steps, the data sizes."""
    import inspect

    used, passes = {}, []

    class Adam(torch.optim.Adam):
        def __init__(self, params, lr):
            used.update(optimizer="Adam", lr=lr)
            super().__init__(params, lr=lr)

    def batch(module, args):
        if module.training:
            used.setdefault("batch_size", "full batch" if len(args[0]) == F.N_TRAIN else len(args[0]))
            passes.append(1)

    monkeypatch.setattr(torch.optim, "Adam", Adam)
    r = F.evaluate(F.formula_mlp(2, 6), formula="xy", steps=3, baselines=[],
                   rebuild=lambda in_features: _hooked(F.formula_mlp(in_features, 6), batch))
    d = F.describe(formula="xy", steps=3)
    assert {k: d[k] for k in used} == used and len(passes) == d["steps"] == 3
    assert {k: r.config[k] for k in d} == d and r.n == d["n_test"] == len(F.make_data("xy").y_test)
    assert d["n_train"] == len(F.make_data("xy").y_train)
    defaults = {k: p.default for k, p in inspect.signature(F.train).parameters.items()}
    assert F.describe()["steps"] == defaults["steps"] and F.describe()["lr"] == defaults["lr"]
    assert F.describe()["torch_threads"] == defaults["num_threads"]
    assert F.describe()["formulas"] == list(F.FORMULAS)
    assert zoo.registry.task("formula_regress").describe == "zoo_task_formula_regress.task:describe"


def _hooked(model, hook):
    model.register_forward_pre_hook(hook)
    return model


def test_fit_formulas_gives_evaluates_numbers_one_row_at_a_time():
    """A claim's rows (fit_formulas) are evaluate's columns: the same seeds give the same errors and sizes."""
    build = lambda d: F.formula_mlp(d, 6)  # noqa: E731
    r = F.evaluate(build(2), formula=["xy", "bessel_j0"], steps=5, seed=1, rebuild=lambda in_features: build(in_features))
    model = F.fit_formulas(build, ["xy", "bessel_j0"], steps=5, seed=1)
    assert model["rel_rmse:xy"] == r.metrics["rel_rmse:xy"] and model["rel_rmse_gmean"] == r.metrics["rel_rmse_gmean"]
    kan = F.fit_formulas(build, ["xy", "bessel_j0"], baseline="kan", steps=5, seed=1)
    assert kan["rel_rmse:bessel_j0"] == r.baselines["kan"]["rel_rmse:bessel_j0"] != model["rel_rmse:bessel_j0"]
    assert kan["params:xy"] == r.baselines["kan"]["params:xy"]
    with pytest.raises(ValueError, match="params="):
        F.build_baseline("mlp", in_features=2)


# ---------------------------------------------------------------- user formulas (issue 14)


def _sin_xy():
    return F.Formula("sin_xy", lambda v: np.sin(v[:, 0] * v[:, 1]), n_vars=2, domain=((0.0, 3.0), (-1.0, 2.0)),
                     description="sin(x y)")


def test_a_user_formula_is_sampled_and_scaled_like_the_fixed_ones():
    f = _sin_xy()
    data = F.make_data(f)
    assert data.name == "sin_xy" and data.x_train.shape == (1000, 2) and float(data.x_train.abs().max()) <= 1.0
    # the targets are fn on the inputs mapped back to each variable's own range, standardised on the train split
    lo, hi = np.array([0.0, -1.0]), np.array([3.0, 2.0])
    u = np.concatenate([data.x_train.numpy(), data.x_test.numpy()]).astype(np.float64)
    y = np.sin((lo + (u + 1) / 2 * (hi - lo)).prod(1))
    y = (y - y[:1000].mean()) / y[:1000].std()
    assert np.allclose(np.concatenate([data.y_train[:, 0].numpy(), data.y_test[:, 0].numpy()]), y, atol=1e-4)
    assert torch.equal(F.make_data(f).x_test, data.x_test)  # fixed points, as for the fixed formulas


def test_evaluate_accepts_a_user_formula_next_to_a_fixed_one():
    torch.manual_seed(0)
    r = F.evaluate(F.formula_mlp(2, 6), formula=[_sin_xy(), "xy"], steps=3, baselines=["kan"],
                   rebuild=lambda in_features: F.formula_mlp(in_features, 6))
    assert r.config["formulas"] == ["sin_xy", "xy"] and {"rel_rmse:sin_xy", "rel_rmse:xy"} <= set(r.metrics)
    assert "rel_rmse:sin_xy" in r.baselines["kan"]
    assert r.config["user_formulas"] == {"sin_xy": {"n_vars": 2, "domain": [[0.0, 3.0], [-1.0, 2.0]],
                                                    "description": "sin(x y)", "source": "user"}}
    cube = F.Formula("cube", lambda v: v[:, 0] ** 3, n_vars=1)  # a 1-d formula: the model is rebuilt for d = 1
    one = F.fit_formulas(lambda d: F.formula_mlp(d, 4), cube, steps=2)
    assert one["params:cube"] == F.count_params(F.formula_mlp(1, 4))


def test_zoo_evaluate_passes_a_user_formula_through():
    r = zoo.evaluate(zoo.create("mlp_kan_formula", in_features=2), formula=_sin_xy(), steps=2, baselines=[])
    assert list(r.config["formulas"]) == ["sin_xy"] and math.isfinite(r.metrics["rel_rmse:sin_xy"])


def test_user_formula_errors_name_the_fix():
    with pytest.raises(ValueError, match="taken by a fixed formula"):
        F.make_data(F.Formula("xy", lambda v: v[:, 0], 2))
    with pytest.raises(ValueError, match="one per variable"):
        F.Formula("f", lambda v: v[:, 0], 3, domain=((0, 1), (0, 1)))
    with pytest.raises(ValueError, match="low < high"):
        F.Formula("f", lambda v: v[:, 0], 1, domain=((1.0, 0.0),))
    with pytest.raises(TypeError, match="callable"):
        F.Formula("f", "x * y", 2)
    with pytest.raises(ValueError, match=r"fn must map \(N, 2\) -> \(N,\)"):
        F.make_data(F.Formula("wide", lambda v: v, 2))
    with pytest.raises(ValueError, match="non-finite"):
        F.make_data(F.Formula("nan", lambda v: np.full(len(v), np.nan), 1))
    with pytest.raises(ValueError, match="unique"):
        F.describe(formula=["xy", "xy"])
    with pytest.raises(KeyError, match="Formula"):
        F.evaluate(F.formula_mlp(2, 4), formula="nope", steps=1)
