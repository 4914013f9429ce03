"""Conformance kit plus behaviour tests of Derf, DyT and the norm-swapped TinyViTs."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import zoo
from zoo import registry
from zoo.testing import check_plugin
from zoo_derf.model import Derf, DyT, derf_vit, dyt_vit, rmsnorm_vit


def test_conformance(hub):
    check_plugin("derf")


def test_registered_models_and_claim():
    names = {m for s in zoo.plugins() if s.id == "derf" for m in s.models}
    assert names == {"derf_vit", "dyt_vit", "rmsnorm_vit"}

    derf_spec, plugin_id = registry.catalog().models["derf_vit"]
    assert plugin_id == "derf"
    w = derf_spec.weights["digits"]
    assert w.repo == "zoo-models/derf-vit-digits" and w.recipe == "zoo_derf.train:digits" and not w.pinned
    assert registry.claim("derf").reproduce == "zoo_derf.reproduce:REPRODUCTION"


def test_derf_equation_on_known_input():
    layer = Derf(3, alpha_init=0.7, shift_init=-0.2)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([1.0, -2.0, 0.5]))
        layer.bias.copy_(torch.tensor([0.0, 0.1, -1.0]))
    x = torch.tensor([[-1.0, 0.0, 2.0], [0.3, -4.0, 10.0]])
    weight, bias = [1.0, -2.0, 0.5], [0.0, 0.1, -1.0]
    expected = torch.tensor([[weight[j] * math.erf(0.7 * row[j] - 0.2) + bias[j] for j in range(3)]
                             for row in x.tolist()])
    torch.testing.assert_close(layer(x), expected)
    # bounded point-wise map: |y - bias| <= |weight| whatever the input scale
    big = layer(torch.full((1, 3), 1e6))
    assert (big - layer.bias).abs().le(layer.weight.abs() + 1e-6).all()


def test_dyt_equation_on_known_input():
    layer = DyT(2, alpha_init=1.5)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor([2.0, 3.0]))
        layer.bias.copy_(torch.tensor([-1.0, 0.5]))
    x = torch.tensor([[0.2, -0.7]])
    expected = torch.tensor([[2.0 * math.tanh(1.5 * 0.2) - 1.0, 3.0 * math.tanh(1.5 * -0.7) + 0.5]])
    torch.testing.assert_close(layer(x), expected)


def test_derf_is_not_dyt():
    x = torch.linspace(-3, 3, 13)
    assert not torch.allclose(Derf(13)(x), DyT(13)(x))


def test_parameters_and_default_init():
    derf = Derf(64)
    params = dict(derf.named_parameters())
    assert set(params) == {"alpha", "shift", "weight", "bias"}
    assert params["alpha"].numel() == 1 and params["shift"].numel() == 1
    assert params["weight"].shape == (64,) and params["bias"].shape == (64,)
    assert params["alpha"].item() == 0.5 and params["shift"].item() == 0.0
    assert torch.equal(params["weight"], torch.ones(64)) and torch.equal(params["bias"], torch.zeros(64))

    dyt = DyT(64)
    params = dict(dyt.named_parameters())
    assert set(params) == {"alpha", "weight", "bias"}
    assert params["alpha"].numel() == 1 and params["alpha"].item() == 0.5
    assert torch.equal(params["weight"], torch.ones(64)) and torch.equal(params["bias"], torch.zeros(64))


def test_drop_in_for_layernorm_shapes():
    x = torch.randn(2, 5, 7, 16)
    for layer in (Derf(16), DyT(16), nn.LayerNorm(16)):
        assert layer(x).shape == x.shape


@pytest.mark.parametrize("builder, norm", [(derf_vit, Derf), (dyt_vit, DyT), (rmsnorm_vit, nn.RMSNorm)])
def test_every_layernorm_is_replaced(builder, norm):
    model = builder()
    assert not any(isinstance(m, nn.LayerNorm) for m in model.modules())
    norms = [m for m in model.modules() if isinstance(m, norm)]
    assert len(norms) == 2 * 4 + 1  # two per block, four blocks, one before the head


def test_builder_arguments_reach_the_norms():
    model = zoo.create("derf_vit", depth=2, alpha_init=0.8, shift_init=0.1)
    norms = [m for m in model.modules() if isinstance(m, Derf)]
    assert len(norms) == 5
    assert all(m.alpha.item() == pytest.approx(0.8) and m.shift.item() == pytest.approx(0.1) for m in norms)


def test_same_seed_same_weights_as_layernorm_baseline():
    """Only the norm differs between the rows of the comparison: the other weights coincide."""
    from zoo_derf.reproduce import build

    base = dict(build("vit-ln-gelu", 3).named_parameters())
    for name in ("derf_vit", "dyt_vit", "rmsnorm_vit"):
        ours = dict(build(name, 3).named_parameters())
        shared = [k for k in base if ".norm" not in k and not k.startswith("norm.")]
        assert shared and all(torch.equal(base[k], ours[k]) for k in shared), name


def test_gradients_reach_alpha_and_shift():
    torch.manual_seed(0)
    model = zoo.create("derf_vit")
    x = torch.rand(4, 1, 8, 8)
    nn.functional.cross_entropy(model(x), torch.tensor([0, 1, 2, 3])).backward()
    norms = [m for m in model.modules() if isinstance(m, Derf)]
    for m in norms:
        for p in (m.alpha, m.shift, m.weight, m.bias):
            assert p.grad is not None and torch.isfinite(p.grad).all()
        assert m.alpha.grad.abs().item() > 0 and m.shift.grad.abs().item() > 0


def test_quick_reproduction_measures_derf_against_each_norm():
    from zoo.claims import run_claim
    from zoo_derf.reproduce import REPRODUCTION

    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.table) == ["LayerNorm", "RMSNorm", "DyT", "Derf"] and r.seeds == [0, 1]
    assert [c["check"] for c in r.checks] == [f"test_acc: Derf - {o} >= 0" for o in ("LayerNorm", "RMSNorm", "DyT")]
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    # the rows are different models on the same data: a Derf row that were the LayerNorm baseline would fail here
    assert r.per_seed["Derf"]["test_loss"] != r.per_seed["LayerNorm"]["test_loss"]
    assert r.per_seed["Derf"]["test_loss"] != r.per_seed["DyT"]["test_loss"]
    # only the point-wise norms learn an alpha, and it has moved from its initial 0.5
    assert "alpha" in r.table["Derf"] and "alpha" in r.table["DyT"] and "alpha" not in r.table["LayerNorm"]
    assert all(a != 0.5 for a in r.per_seed["Derf"]["alpha"])
    assert r.table["Derf"]["params"] == r.table["LayerNorm"]["params"] + 2 * 9  # alpha and shift in each of 9 norms
    assert r.verdict in ("reproduced", "not reproduced", "inconclusive") and "Derf" in r.render()
