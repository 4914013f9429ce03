"""AdaFNN plugin: the conformance kit, the Basis Layer's quadrature and penalties, and what tells it from FPCA."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from zoo.testing import check_plugin
from zoo_adafnn.model import CPU, PAPER, AdaFNN, adafnn, inner, trapezoid_weights

TINY = {"n_bases": 2, "basis_hidden": [4], "head_hidden": [4]}


def test_conformance(hub):
    check_plugin("adafnn", overrides={"adafnn": TINY})


def test_presets_and_contract():
    assert adafnn().n_bases == CPU["n_bases"] and adafnn(preset="paper").head[0].linear.out_features == PAPER["head_hidden"][0]
    assert adafnn(n_bases=3).bases(torch.linspace(0, 1, 7)).shape == (3, 7)
    with pytest.raises(ValueError, match="preset"):
        adafnn(preset="huge")
    with pytest.raises(ValueError, match="x \\(B, T\\) and t"):
        adafnn()(torch.randn(2, 5), torch.linspace(0, 1, 6))


def _irregular_grid(n=301, seed=0):
    rng = np.random.default_rng(seed)
    return torch.tensor(np.sort(np.r_[0.0, rng.uniform(0, 1, n - 2), 1.0]), dtype=torch.float64)


def test_trapezoid_rule_matches_the_analytic_integral_on_an_irregular_grid():
    t = _irregular_grid()
    assert trapezoid_weights(t).sum().item() == pytest.approx(1.0, abs=1e-12)
    assert inner(torch.sin(math.pi * t), t, t).item() == pytest.approx(1 / math.pi, abs=1e-4)  # int t sin(pi t)
    assert inner(t ** 2, torch.ones_like(t), t).item() == pytest.approx(1 / 3, abs=1e-4)


def test_scores_are_the_integral_of_x_against_each_basis():
    # a micro network whose last layer is zero apart from its bias is the constant basis b_k = c_k, so the scores
    # are c_k * int x dt exactly: int sin(pi t) dt = 2 / pi, whatever the (irregular) grid
    model = AdaFNN(n_bases=3, basis_hidden=(8,), head_hidden=(8,)).double()
    c = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    with torch.no_grad():
        model.basis.weights[-1].zero_()
        model.basis.biases[-1].copy_(c.reshape(3, 1, 1))
    for seed in (0, 1):
        t = _irregular_grid(seed=seed)
        scores = model.scores(torch.sin(math.pi * t)[None], t)
        assert torch.allclose(scores[0], c * 2 / math.pi, atol=1e-4)


def test_scores_do_not_depend_on_the_sampling_grid():
    # the same curve on a regular 101-point grid and an irregular 401-point grid: the same scores (a grid MLP
    # cannot even take the second input)
    model = AdaFNN(n_bases=4, basis_hidden=(16, 16)).double()
    fine, coarse = _irregular_grid(401), torch.linspace(0, 1, 101, dtype=torch.float64)
    x = lambda t: torch.cos(2 * math.pi * t) + t  # noqa: E731
    a, b = model.scores(x(coarse)[None], coarse), model.scores(x(fine)[None], fine)
    assert torch.allclose(a, b, rtol=2e-3, atol=2e-3)


def _cosines(t, n):
    return torch.stack([torch.ones_like(t)] + [math.sqrt(2) * torch.cos(k * math.pi * t) for k in range(1, n)])


def test_orthogonality_penalty_is_zero_for_orthonormal_bases_and_not_otherwise():
    t = torch.linspace(0, 1, 2001, dtype=torch.float64)
    model = AdaFNN(n_bases=3, lambda_orth=1.0)
    assert model.penalty(t, _cosines(t, 3)).item() == pytest.approx(0.0, abs=1e-5)
    skew = torch.stack([torch.ones_like(t), math.sqrt(3) * (2 * t - 1) + 0.5, math.sqrt(2) * torch.cos(math.pi * t)])
    assert model.penalty(t, skew / inner(skew, skew, t).sqrt()[:, None]).item() > 0.05


def test_sparsity_penalty_prefers_a_localised_basis():
    t = torch.linspace(0, 1, 2001, dtype=torch.float64)
    model = AdaFNN(n_bases=1, lambda_sparse=1.0)
    spread = torch.ones(1, t.numel(), dtype=torch.float64)  # L2-normalised constant: L1 norm 1
    bump = torch.exp(-((t - 0.5) / 0.02) ** 2)[None]
    bump = bump / inner(bump, bump, t).sqrt()[:, None]
    assert model.penalty(t, spread).item() == pytest.approx(1.0, abs=1e-6)
    assert model.penalty(t, bump).item() < 0.3


def test_penalty_gradient_reaches_the_bases_through_any_loss_on_the_output():
    torch.manual_seed(0)
    t = torch.linspace(0, 1, 51)
    model = AdaFNN(n_bases=3, basis_hidden=(8,), head_hidden=(8,), lambda_orth=1.0, lambda_sparse=1.0)
    x = torch.randn(4, 51)
    (model(x, t).sum() * 0).backward()  # the prediction loss contributes nothing: only the penalty's gradient is left
    got = [p.grad.clone() for p in model.basis.parameters()]
    model.zero_grad()
    model.penalty(t).backward()
    assert all(torch.allclose(g, p.grad) for g, p in zip(got, model.basis.parameters(), strict=True))
    assert any(g.abs().sum() > 0 for g in got)


def _data(n, seed, t, n_comp=12, target=2):
    # x = sum_j z_j xi_j phi_j with decaying z_j = 1/(j+1); y = the standardised score of a low-variance component
    g = np.random.default_rng(seed)
    z = 1.0 / np.arange(1, n_comp + 1)
    xi = g.uniform(-math.sqrt(3), math.sqrt(3), (n, n_comp))
    x = torch.tensor(xi * z, dtype=torch.float32) @ _cosines(t, n_comp)
    return x, torch.tensor(xi[:, target], dtype=torch.float32)


def _r2(features: np.ndarray, y: np.ndarray) -> float:
    a = np.c_[features, np.ones(len(features))]
    coef, *_ = np.linalg.lstsq(a, y, rcond=None)
    return float(1 - ((a @ coef - y) ** 2).mean() / y.var())


def test_learned_bases_find_the_low_variance_component_fpca_misses():
    # y depends on the third-largest-variance component only: the top-2 FPCA scores carry none of it, AdaFNN's two
    # learned bases pick it up (the claim's mechanism: bases that follow the target, not the input's variance)
    torch.manual_seed(0)
    t = torch.linspace(0, 1, 51)
    x, y = _data(512, 0, t)
    xt, yt = _data(256, 1, t)
    centred = (x - x.mean(0)).numpy()
    top2 = np.linalg.svd(centred, full_matrices=False)[2][:2]
    assert _r2((xt.numpy() - x.mean(0).numpy()) @ top2.T, yt.numpy()) < 0.05
    model = AdaFNN(n_bases=2, basis_hidden=(16, 16), head_hidden=(16,), lambda_orth=0.01, lambda_sparse=0.01)
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    g = torch.Generator().manual_seed(0)
    for _ in range(300):
        i = torch.randint(0, 512, (64,), generator=g)
        loss = ((model(x[i], t)[:, 0] - y[i]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        scores = model.eval().scores(xt, t).numpy()
    assert _r2(scores, yt.numpy()) > 0.9
