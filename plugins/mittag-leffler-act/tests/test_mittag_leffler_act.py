"""Conformance kit plus tests of the Mittag-Leffler function, the gate's special cases and its training."""
from __future__ import annotations

import math

import pytest
import torch
from scipy.special import erfcx
from torch.nn import functional as F

import zoo
from zoo.testing import check_plugin
from zoo_mittag_leffler_act.mittag_leffler import log_mittag_leffler, mittag_leffler, rgamma
from zoo_mittag_leffler_act.model import ALPHA_MIN, MittagLefflerGated, mittag_leffler_mlp

D = torch.float64


def test_conformance(hub):
    check_plugin("mittag-leffler-act", overrides={"mittag_leffler_mlp": {"hidden": 16}})


def test_rgamma_known_values():
    x = torch.tensor([3.0, 0.5, 0.0, -1.0, -0.5, -1.5], dtype=D)
    expected = [0.5, 1 / math.sqrt(math.pi), 0.0, 0.0, -1 / (2 * math.sqrt(math.pi)), 3 / (4 * math.sqrt(math.pi))]
    torch.testing.assert_close(rgamma(x), torch.tensor(expected, dtype=D))


def test_closed_forms():
    z = torch.linspace(-15, 15, 601, dtype=D)
    torch.testing.assert_close(mittag_leffler(z, 1.0, 1.0), torch.exp(z), rtol=1e-8, atol=2e-7)
    torch.testing.assert_close(mittag_leffler(z, 1.0, 2.0), torch.expm1(z) / z, rtol=2e-7, atol=0)
    neg = torch.linspace(-40, 0, 401, dtype=D)  # E_{1/2,1}(z) = exp(z^2) erfc(-z)
    torch.testing.assert_close(mittag_leffler(neg, 0.5, 1.0), torch.from_numpy(erfcx(-neg.numpy())), rtol=1e-6, atol=0)
    big = torch.linspace(5, 30, 26, dtype=D)  # there exp(z^2) erfc(-z) = 2 exp(z^2) to double precision
    torch.testing.assert_close(log_mittag_leffler(big, 0.5, 1.0), big ** 2 + math.log(2), rtol=1e-12, atol=1e-9)
    for b in (0.7, 1.0, 2.5):
        assert mittag_leffler(torch.zeros(1, dtype=D), 0.6, b).item() == pytest.approx(1 / math.gamma(b))


def test_negative_tail_matches_exp_in_relative_error():
    # issue 14: E_{1,1}(z) = exp(z) was returned as 0 below z ~ -16 (the algebraic expansion's coefficients
    # 1/Gamma(1 - k) all vanish there) and lost 5% to the series' cancellation near -16
    z = -torch.logspace(-3, math.log10(700), 400, dtype=D)
    torch.testing.assert_close(mittag_leffler(z, 1.0, 1.0), torch.exp(z), rtol=1e-12, atol=0)
    torch.testing.assert_close(log_mittag_leffler(z, 1.0, 1.0), z, rtol=1e-12, atol=0)
    torch.testing.assert_close(mittag_leffler(z, 1.0, 2.0), -torch.expm1(z) / -z, rtol=1e-12, atol=0)
    assert mittag_leffler(torch.tensor([-40.0]), 1.0, 1.0).item() == pytest.approx(math.exp(-40), rel=1e-6)  # float32


@pytest.mark.parametrize("z, a, b, value, rel", [  # values: 60-digit mpmath sums of the series
    (-20.0, 0.999, 1.0, 5.59790680353e-5, 1e-6), (-20.0, 1.0, 1.001, 5.28273238085e-5, 1e-6),  # 3.4e-5, 3.9e-5 before
    (-30.0, 0.99, 1.0, 3.59756051682e-4, 1e-8), (-14.0, 0.95, 1.0, 4.27772088202e-3, 1e-4),
    (-18.0, 0.8, 0.8, 6.213759142e-4, 1e-8)])
def test_negative_tail_near_the_exponential_case(z, a, b, value, rel):
    # close to (a, b) = (1, 1) the algebraic coefficients nearly vanish and exp(-x) is a large part of E
    assert mittag_leffler(torch.tensor([z], dtype=D), a, b).item() == pytest.approx(value, rel=rel)


def test_derivative_is_a_mittag_leffler_function():
    """dE_{a,b}/dz = (E_{a,b-1}(z) - (b-1) E_{a,b}(z)) / (a z): autograd agrees with the identity."""
    a, b = 0.8, 1.2
    z = torch.tensor([-20.0, -3.0, -0.7, 0.4, 2.0, 5.0], dtype=D, requires_grad=True)
    (grad,) = torch.autograd.grad(mittag_leffler(z, a, b).sum(), z)
    zd = z.detach()
    identity = (mittag_leffler(zd, a, b - 1) - (b - 1) * mittag_leffler(zd, a, b)) / (a * zd)
    torch.testing.assert_close(grad, identity, rtol=1e-5, atol=1e-7)


def test_gradients_in_alpha_and_beta_match_finite_differences():
    z = torch.tensor([-12.0, -3.0, -1.0, 0.5, 3.0, 12.0], dtype=D)  # both asymptotic branches and the series
    a = torch.tensor(0.7, dtype=D, requires_grad=True)
    b = torch.tensor(1.1, dtype=D, requires_grad=True)
    # central differences lose digits to the alternating series: a larger step than the default 1e-6
    assert torch.autograd.gradcheck(lambda a, b: log_mittag_leffler(z, a, b), (a, b), eps=1e-4, rtol=1e-4)


def test_parameter_range_is_enforced():
    with pytest.raises(ValueError, match="0 < alpha <= 1"):
        mittag_leffler(torch.zeros(1), 1.5, 1.0)


@pytest.mark.parametrize("abc, reference, tol", [
    ((1.0, 1.0, 1.0), F.silu, 1e-5),
    ((1.0, 1.0, 1.702), lambda x: x * torch.sigmoid(1.702 * x), 1e-5),
    ((1.0, 1.0, 0.0), lambda x: x / 2, 0.0),
    ((1.0, 1.0, 1000.0), torch.relu, 1e-3),
])
def test_special_cases(abc, reference, tol):
    x = torch.linspace(-30, 30, 1201)
    with torch.no_grad():
        assert (MittagLefflerGated(*abc, learnable=False)(x) - reference(x)).abs().max().item() <= tol


@pytest.mark.parametrize("a, b", [(1.0, 1.0), (0.5, 1.0), (0.3, 0.3), (0.8, 2.0), (1.0, 3.0)])
def test_gate_is_a_monotone_sigmoid_type_gate(a, b):
    x = torch.linspace(-60, 60, 4001)
    with torch.no_grad():
        g = MittagLefflerGated(a, b, 1.0, learnable=False).gate(x)
    assert torch.isfinite(g).all() and g.min() >= 0 and g.max() <= 1
    assert (g[1:] - g[:-1]).min() >= -1e-6  # non-decreasing
    assert g[0] < 0.05 and g[-1] > 0.9
    assert g[2000].item() == pytest.approx(1 / (1 + 1 / math.gamma(b)), abs=1e-6)  # g(0) = 1 / (1 + 1/Gamma(b))


def test_alpha_below_one_changes_the_shape():
    x = torch.linspace(-4, 4, 81)
    with torch.no_grad():
        assert (MittagLefflerGated(0.5, 1.0, 1.0)(x) - F.silu(x)).abs().max() > 0.05


def test_projection_keeps_parameters_valid():
    act = MittagLefflerGated(1.3, 0.2, 1.0)
    act.train()(torch.randn(5))
    assert act.alpha.item() == 1.0 and act.beta.item() == 1.0
    act = MittagLefflerGated(0.1, 2.0, 1.0)
    act.train()(torch.randn(5))
    assert act.alpha.item() == pytest.approx(ALPHA_MIN) and act.beta.item() == 2.0


def test_gradients_reach_every_parameter_and_stay_finite():
    torch.manual_seed(0)
    act = MittagLefflerGated(0.7, 1.3, 0.8)
    x = torch.cat([torch.randn(100) * 3, torch.tensor([-1e4, -100.0, 100.0, 1e4])]).requires_grad_()
    y = act(x)
    y.sum().backward()
    assert torch.isfinite(y).all() and torch.isfinite(x.grad).all()
    for p in (act.alpha, act.beta, act.gamma):
        assert p.grad is not None and torch.isfinite(p.grad) and p.grad.abs() > 0


def test_mlp_same_linear_weights_as_the_task_baseline():
    from zoo_task_digits import task as digits

    base = digits.build_baseline("mlp-ln-relu", seed=5).state_dict()
    torch.manual_seed(5)
    ours = zoo.create("mittag_leffler_mlp").state_dict()
    shared = [k for k in base if k.startswith(("features.1", "features.4", "head"))]
    assert shared and all(torch.equal(base[k], ours[k]) for k in shared)
    assert sum(k.endswith(("alpha", "beta", "gamma")) for k in ours) == 6


def test_fixed_variant_has_buffers_not_parameters():
    model = mittag_leffler_mlp(hidden=8, learnable=False)
    assert not any(n.endswith(("alpha", "beta", "gamma")) for n, _ in model.named_parameters())
    assert sum(n.endswith("alpha") for n, _ in model.named_buffers()) == 2


def test_quick_reproduction_measures_the_three_parts():
    from zoo.claims import run_claim
    from zoo_mittag_leffler_act.reproduce import REPRODUCTION

    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.table) == ["special cases", "Mittag-Leffler", "ReLU", "GELU", "SiLU", "Tanh", "Sigmoid",
                             "Mittag-Leffler a=0.5"] and r.seeds == [0, 1]
    assert len(r.checks) == 4 + 4 + 2 and r.checks[-1]["check"] == "grad_log10_abs: Sigmoid - Mittag-Leffler >= 0"
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    # (a) is exact arithmetic: it holds even in a smoke run
    assert [c["verdict"] for c in r.checks[:4]] == ["reproduced"] * 4
    # the learnable gate is not the ReLU baseline: its trained network and its gradient flow differ
    ml, relu = r.per_seed["Mittag-Leffler"], r.per_seed["ReLU"]
    assert ml["final_train_loss"] != relu["final_train_loss"] and ml["grad_log10"] != relu["grad_log10"]
    # at init (a = b = c = 1) it is SiLU: the same gradient ratio as the SiLU network of the same seed
    assert ml["grad_log10"] == pytest.approx(r.per_seed["SiLU"]["grad_log10"], abs=1e-4)
    assert {"a@1", "b@1", "c@1", "c@2"} <= set(ml) and "test_acc" not in r.per_seed["Sigmoid"]
