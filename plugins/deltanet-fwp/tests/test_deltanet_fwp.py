"""deltanet-fwp: the conformance kit, DPFP, the delta rule's exact overwrite, causality and the parallel form."""
from __future__ import annotations

import pytest
import torch

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_deltanet_fwp.model import FastWeightLayer, additive_rule, delta_rule, dpfp, fwp_delta_lm, sum_normalise
from zoo_deltanet_fwp.reproduce import REPRODUCTION

TINY = {"dim": 8, "key_dim": 2, "nu": 1}


def test_conformance(hub):
    check_plugin("deltanet-fwp", overrides={"fwp_delta_lm": TINY, "fwp_additive_lm": TINY})


@pytest.mark.parametrize("nu", [1, 2, 3])
def test_dpfp_has_2_nu_d_nonnegative_features(nu):
    x = torch.randn(5, 7, 6)
    phi = dpfp(x, nu)
    assert phi.shape == (5, 7, 2 * nu * 6) and (phi >= 0).all() and (phi > 0).any()
    r = torch.relu(torch.cat([x, -x], -1))
    assert torch.equal(phi[..., :12], r * torch.roll(r, 1, -1))  # the first block: products of neighbours
    normed = sum_normalise(phi)
    assert torch.allclose(normed.sum(-1), torch.ones(5, 7), atol=1e-3)  # eps in the denominator


def test_delta_rule_overwrites_a_key_exactly_the_additive_rule_does_not():
    # orthonormal (one-hot) keys e0, e1, then e0 again with a new value; beta = 1; the query is e0 at every step
    keys = torch.eye(4)[[0, 1, 0]].view(1, 1, 3, 4)
    values = torch.tensor([[1.0, 2.0], [5.0, -1.0], [-3.0, 4.0]]).view(1, 1, 3, 2)
    q = torch.eye(4)[[0, 0, 0]].view(1, 1, 3, 4)
    delta = delta_rule(q, keys, values, torch.ones(1, 1, 3))[0, 0]
    additive = additive_rule(q, keys, values)[0, 0]
    assert torch.allclose(delta[-1], values[0, 0, 2])            # the new value, exactly
    assert torch.allclose(additive[-1], values[0, 0, 0] + values[0, 0, 2])  # both writes superposed
    assert torch.allclose(delta[1], values[0, 0, 0])             # e1's write did not disturb e0's value


def test_delta_rate_scales_the_correction():
    keys = torch.eye(3)[[0, 0]].view(1, 1, 2, 3)
    values = torch.tensor([[2.0], [6.0]]).view(1, 1, 2, 1)
    y = delta_rule(keys, keys, values, torch.tensor([[[1.0, 0.25]]]))[0, 0, :, 0]
    assert torch.allclose(y, torch.tensor([2.0, 2.0 + 0.25 * (6.0 - 2.0)]))


@pytest.mark.parametrize("rule", ["delta", "additive"])
def test_parallel_form_equals_the_recurrence(rule):
    torch.manual_seed(0)
    layer = FastWeightLayer(12, heads=3, key_dim=3, nu=2, rule=rule)
    x = torch.randn(2, 9, 12)
    assert torch.allclose(layer(x), layer.recurrent(x), atol=1e-5)


@pytest.mark.parametrize("name", ["fwp_delta_lm", "fwp_additive_lm"])
def test_causal(name):
    torch.manual_seed(0)
    model = zoo.create(name).eval()
    ids = torch.randint(0, 129, (2, 12))
    later = ids.clone()
    later[:, 7:] = torch.randint(0, 129, (2, 5))
    with torch.no_grad():
        a, b = model(ids), model(later)
    assert torch.allclose(a[:, :7], b[:, :7], atol=1e-6) and not torch.allclose(a[:, 7:], b[:, 7:])


def test_presets():
    model = fwp_delta_lm()
    assert model.layers[0].feature_dim == 16 and model.layers[0].beta is not None
    paper = fwp_delta_lm(preset="paper", depth=1)
    assert paper.layers[0].heads == 8 and paper.layers[0].feature_dim == 2 * 3 * 16 and paper.ffns is not None
    assert zoo.create("fwp_additive_lm").layers[0].beta is None
    with pytest.raises(ValueError, match="preset"):
        fwp_delta_lm(preset="huge")


def test_quick_reproduction_runs_and_rows_differ():
    result = run_claim(REPRODUCTION, quick=True)
    rows = result.rows
    assert set(rows) == {"fwp_delta_lm", "fwp_additive_lm", "transformer", "fwp_delta_update", "fwp_additive_update"}
    assert rows["fwp_delta_lm"]["final_train_loss"]["mean"] != rows["fwp_additive_lm"]["final_train_loss"]["mean"]
    assert abs(rows["transformer"]["params"]["mean"] / rows["fwp_delta_lm"]["params"]["mean"] - 1) < 0.1
