"""The operator_learn task (training loop, metrics, baselines, figures, errors) and its baselines (issue 16)."""
import math

import numpy as np
import pytest
import torch
from torch import nn

from zoo.task import count_params, torch_threads
from zoo_nn.operators import FNO1d, FNO2d
from zoo_task_operator_learn import baselines as B
from zoo_task_operator_learn import task

SMALL = {"n_train": 32, "n_test": 8, "batch_size": 8}


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):  # tiny models: one thread is faster on a shared machine
        yield


class PointMLP(nn.Module):
    """A points model: an MLP on (value, coordinate) of each point alone (it cannot see the other points)."""

    input_kind = "points"

    def __init__(self, d: int = 1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(1 + d, 32), nn.GELU(), nn.Linear(32, 1))

    def forward(self, values, coords):
        return self.net(torch.cat([values, coords], -1))


class WrongChannels(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))

    def forward(self, a):
        return torch.cat([a, a], 1) * self.w


def test_rel_l2_is_per_sample():
    target = torch.tensor([[3.0, 4.0], [1.0, 0.0]])
    pred = torch.tensor([[3.0, 4.0], [0.0, 0.0]])
    assert task.rel_l2(pred, target).tolist() == [0.0, 1.0]


def test_burgers_trains_and_reports_both_resolutions(tmp_path):
    torch.manual_seed(0)
    model = FNO1d(modes=8, width=24)
    untrained = task.evaluate(FNO1d(modes=8, width=24), problem="burgers", steps=1, baselines=[], **SMALL)
    r = task.evaluate(model, problem="burgers", steps=60, lr=1e-2, out_dir=str(tmp_path), baselines=["unet", "mlp_grid"],
                      **SMALL)
    m = r.metrics
    assert {"rel_l2", "rel_l2_2x", "params", "seconds_per_step"} <= set(m)
    assert m["rel_l2"] < 0.5 * untrained.metrics["rel_l2"]  # training helps
    assert m["rel_l2_2x"] < 1.2 * m["rel_l2"]  # an FNO at twice the resolution stays near its training error
    assert set(r.baselines) == {"unet", "mlp_grid"}  # as asked (default: fno too)
    for b in ("unet", "mlp_grid"):  # baselines at matched parameters
        assert abs(r.baselines[b]["params"] - m["params"]) <= 0.1 * m["params"], b
    assert math.isnan(r.baselines["mlp_grid"]["rel_l2_2x"]) and not math.isnan(r.baselines["mlp_grid"]["rel_l2"])
    assert "mlp_grid.rel_l2_2x" in r.config["not_applicable"]
    assert sorted(r.artifacts) == sorted(f"{p}_{s}" for p in ("input", "target", "prediction", "error") for s in (64, 128))
    assert all((tmp_path / f"{k}.png").stat().st_size > 1000 for k in r.artifacts)


def test_same_seed_same_numbers_and_seed_changes_training():
    def run(seed):
        torch.manual_seed(0)
        return task.evaluate(FNO1d(modes=4, width=8), problem="antiderivative", steps=15, seed=seed, baselines=[],
                             **SMALL).metrics["rel_l2"]
    a, b, c = run(0), run(0), run(1)
    assert a == b and a != c


def test_points_model_is_scored_on_irregular_points():
    torch.manual_seed(0)
    r = task.evaluate(PointMLP(), problem="poisson", steps=20, baselines=["fno"], irregular_points=50, **SMALL)
    assert {"rel_l2", "rel_l2_2x", "rel_l2_irregular"} <= set(r.metrics)
    assert r.config["irregular_points"] == 50 and r.config["input_kind"] == "points"
    assert "rel_l2_irregular" not in r.baselines["fno"]  # grid models get no point inputs


def test_darcy_runs_in_2d_at_32_and_64():
    torch.manual_seed(0)
    r = task.evaluate(FNO2d(modes=6, width=8), problem="darcy", steps=5, baselines=["unet"], n_train=8, n_test=4,
                      batch_size=4)
    assert r.config["train_res"] == 32 and r.config["test_res"] == [64]
    assert np.isfinite([r.metrics["rel_l2"], r.metrics["rel_l2_2x"], r.baselines["unet"]["rel_l2_2x"]]).all()


def test_clear_errors():
    with pytest.raises(ValueError, match="unknown problem 'navier'.*burgers"):
        task.evaluate(FNO1d(modes=4, width=8), problem="navier")
    with pytest.raises(ValueError, match=r"output has shape \(2, 2, 64\), expected \(2, 1, 64\)"):
        task.evaluate(WrongChannels(), problem="burgers", steps=1, baselines=[], **SMALL)
    with pytest.raises(ValueError, match=r"fails on darcy's inputs \(2, 1, 32, 32\) \(expected output \(2, 1, 32, 32\)\)"):
        task.evaluate(FNO1d(modes=4, width=8), problem="darcy", steps=1, baselines=[], n_train=8, n_test=4)
    with pytest.raises(ValueError, match="problem 'scalar_on_function' takes curve models.*'grid'"):
        task.evaluate(FNO1d(modes=4, width=8), problem="scalar_on_function")
    with pytest.raises(ValueError, match="unknown baseline.*'gp'.*fno, unet, mlp_grid"):
        task.evaluate(FNO1d(modes=4, width=8), problem="burgers", baselines=["gp"])
    with pytest.raises(ValueError, match="unknown operator_learn baseline 'resnet'"):
        task.build_baseline("resnet")
    with pytest.raises(ValueError, match="built for the grid"):
        task.build_baseline("mlp_grid", problem="burgers")(torch.zeros(1, 1, 128))


def test_baselines_match_parameters():
    for problem, target in (("burgers", 50_000), ("darcy", 120_000)):
        for name in ("fno", "unet", "mlp_grid"):
            net = task.build_baseline(name, params=target, problem=problem)
            assert abs(count_params(net) - target) <= 0.1 * target, (problem, name, count_params(net))


class SamplesMean(nn.Module):
    input_kind = "samples"

    def fit(self, split, *, steps, seed):  # its own fit: the task calls it instead of its loop
        return {"steps": 0}

    def forward(self, samples, mask, t_query):
        mean = (samples[..., 1] * mask).sum(1) / mask.sum(1)
        return mean[:, None, None].expand(-1, t_query.shape[1], 1)


class CurveMean(nn.Module):
    input_kind = "curve"

    def forward(self, x, t):
        return x.mean(1, keepdim=True)


def test_contract_by_input_kind_and_describe():
    model = FNO1d(modes=4, width=8)
    x = task.example_input(model)
    assert x.shape == (2, 1, 64) and task.example_input().shape == (2, 1, 64)
    task.check_output(model, model(x))
    with pytest.raises(AssertionError, match=r"must be \(2, 1, 64\), got \(2, 1, 32\)"):
        task.check_output(model, model(x)[..., :32])
    for net in (PointMLP(), SamplesMean(), CurveMean()):
        out = net(*task.example_input(net))
        task.check_output(net, out)
        with pytest.raises(AssertionError, match=f"a {net.input_kind} model"):
            task.check_output(net, out[:1])
    samples, mask, _ = task.example_input(SamplesMean())
    assert mask[1].sum() == 20 and samples[1, 20:].abs().sum() == 0  # padding is zero and masked
    d = task.describe(problem="darcy", steps=100)
    assert d["steps"] == 100 and d["train_res"] == 32 and d["test_res"] == [64] and d["input_kinds"] == ["grid", "points"]
    with pytest.raises(ValueError, match="unknown option"):
        task.describe(problem="burgers", epochs=3)


def test_interpolation_of_irregular_samples_is_exact_on_lines():
    t = torch.tensor([[0.9, 0.1, 0.5, 0.0], [0.2, 0.8, 0.0, 0.0]])
    x = 2 * t + 1
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=torch.bool)
    grid = torch.linspace(0, 1, 11)
    out = B.interpolate_samples(torch.stack([t, x], -1), mask, grid)
    inside0 = (grid >= 0.1) & (grid <= 0.9)
    assert torch.allclose(out[0, inside0], 2 * grid[inside0] + 1, atol=1e-6)
    assert torch.allclose(out[0, ~inside0], torch.where(grid[~inside0] < 0.5, 1.2, 2.8))  # held constant outside
    inside1 = (grid >= 0.2) & (grid <= 0.8)
    assert torch.allclose(out[1, inside1], 2 * grid[inside1] + 1, atol=1e-6)


def test_fpca_recovers_the_components_with_unit_variance_scores():
    g = torch.linspace(0, 1, 64)
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(2000, 2, generator=gen) * torch.tensor([3.0, 1.0])
    phi = torch.stack([torch.sin(2 * math.pi * g), torch.cos(2 * math.pi * g)])
    curves = 5 + scores @ phi
    mean, basis = B.fpca(curves, 2)
    assert torch.allclose(mean, torch.full((64,), 5.0), atol=0.2)
    z = (curves - mean) @ basis
    assert torch.allclose(z.std(0), torch.ones(2), atol=0.02)
    first = basis[:, 0] / basis[:, 0].norm()
    assert abs(float(first @ phi[0] / phi[0].norm())) > 0.99  # the high-variance direction first


def test_gp_baseline_fits_the_lengthscale_by_marginal_likelihood():
    gen = np.random.default_rng(0)
    coords = torch.from_numpy(np.sort(gen.random((40, 30, 1)), axis=1))
    truth = B.GPBaseline("rbf")
    truth.log_params.copy_(torch.tensor([math.log(1.5), math.log(0.15), math.log(1e-6)], dtype=torch.float64))
    values = torch.stack([truth.sample(c, 1, seed=i)[0] for i, c in enumerate(coords)])
    fitted = B.GPBaseline("rbf")
    fig = fitted.fit(values, coords)
    assert fig["lengthscale"] == pytest.approx(0.15, rel=0.15) and fig["variance"] == pytest.approx(1.5, rel=0.35)
    obs = torch.tensor([[0.2], [0.5], [0.8]])
    mean, cov = fitted.posterior(obs, torch.tensor([1.0, -1.0, 0.5]), obs)
    assert torch.allclose(mean[:, 0], torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64), atol=1e-2)  # interpolates
    assert float(cov.diagonal().max()) < 1e-2


def test_more_test_resolutions_are_named_by_size():
    r = task.evaluate(FNO1d(modes=4, width=8), problem="poisson", steps=2, test_res=(128, 256), baselines=["mlp_grid"],
                      **SMALL)
    assert {"rel_l2", "rel_l2_2x", "rel_l2_256"} <= set(r.metrics) and "rel_l2_128" not in r.metrics
    assert r.config["test_res"] == [128, 256] and "mlp_grid.rel_l2_256" in r.config["not_applicable"]


def test_functional_regression_runs_models_of_their_kind():
    for problem, net in (("function_on_function", SamplesMean()), ("scalar_on_function", B.InterpMLP("curve", hidden=16))):
        r = task.evaluate(net, problem=problem, steps=30, n_train=64, n_test=32)
        assert set(r.baselines) == {"linear", "mlp_interp", "fpca_mlp"}
        assert all(np.isfinite(v["rel_l2"]) and np.isfinite(v["rel_l2_2x"]) for v in r.baselines.values())
        assert np.isfinite(r.metrics["rel_l2_2x"])
        if problem == "function_on_function":
            assert "rel_l2_skewed" in r.metrics and r.metrics["steps"] == 0  # nothing to train in the mean
        else:
            assert r.metrics["r2"] > 0 and r.baselines["fpca_mlp"]["params"] <= 1.1 * r.metrics["params"]


def test_fpca_misses_the_low_variance_driver_that_the_dense_curve_keeps():
    """scalar_on_function's response is driven by the 10th component (1% of the first one's variance): the top-8
    principal components drop it, an MLP on the whole interpolated curve does not."""
    torch.manual_seed(0)
    r = task.evaluate(B.InterpMLP("curve", hidden=32), problem="scalar_on_function", steps=300, baselines=["fpca_mlp"],
                      n_train=256, n_test=100)
    assert r.metrics["r2"] > 0.8 and r.baselines["fpca_mlp"]["r2"] < 0.5


def test_targets_are_scaled_to_unit_rms_and_the_metric_is_unchanged():
    from zoo_task_operator_learn import data

    d = data.load("darcy", split="train", n=8, resolution=32)
    norm = task.Normalizer(d.a, d.u)
    split = task.grid_split(d, "grid", norm)
    assert float(d.u.std()) < 0.05 and abs(float(split.target.pow(2).mean().sqrt()) - 1) < 1e-4  # Darcy u ~ 1e-2
    assert abs(float(split.inputs[0].mean())) < 1e-4 and abs(float(split.inputs[0].std()) - 1) < 1e-3
    pred = split.target + 0.1 * torch.randn_like(split.target)
    physical = task.rel_l2(pred * float(norm.u_scale[0]), torch.from_numpy(d.u))
    assert torch.allclose(task.rel_l2(pred, split.target), physical, rtol=1e-5)
