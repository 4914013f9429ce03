"""Conformance kit plus behaviour tests of EvoNorm-B0, EvoNorm-S0 and the tiny ResNets."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import zoo
from zoo.testing import check_plugin
from zoo_evonorm.model import EvoNormB0, EvoNormS0, group_std, norm_act_layer, tiny_resnet

MODELS = ("tinyresnet_evonorm_b0", "tinyresnet_evonorm_s0", "tinyresnet_bn_relu", "tinyresnet_gn_relu")


def test_conformance(hub):
    check_plugin("evonorm")


def test_registered_models_and_claim():
    names = {m for s in zoo.plugins() if s.id == "evonorm" for m in s.models}
    assert names == set(MODELS)
    assert zoo.registry.claim("evonorm").reproduce == "zoo_evonorm.reproduce:REPRODUCTION"


def _set(layer: nn.Module, v1, gamma, beta) -> None:
    with torch.no_grad():
        for p, v in ((layer.v1, v1), (layer.weight, gamma), (layer.bias, beta)):
            p.copy_(torch.tensor(v, dtype=torch.float32).view(1, -1, 1, 1))


def test_b0_equation_train_and_eval():
    torch.manual_seed(0)
    x = torch.randn(3, 2, 4, 5) * 2 + 0.5
    layer = EvoNormB0(2, eps=1e-5, momentum=0.25)
    _set(layer, [0.7, -1.3], [1.5, 0.5], [0.1, -0.2])
    y = layer.train()(x)
    ref = torch.empty_like(x)
    for c in range(2):
        xc = x[:, c]
        batch_std = math.sqrt(xc.flatten().var(unbiased=False).item() + 1e-5)
        for b in range(3):
            inst_std = math.sqrt(xc[b].flatten().var(unbiased=False).item() + 1e-5)
            v1, g, be = layer.v1[0, c, 0, 0].item(), layer.weight[0, c, 0, 0].item(), layer.bias[0, c, 0, 0].item()
            den = torch.clamp(v1 * xc[b] + inst_std, min=batch_std)
            ref[b, c] = xc[b] / den * g + be
    torch.testing.assert_close(y, ref)
    # running variance: BatchNorm's rule (unbiased batch variance, momentum 0.25 from 1)
    n = 3 * 4 * 5
    expected = 0.75 + 0.25 * x.var(dim=(0, 2, 3), unbiased=False) * n / (n - 1)
    torch.testing.assert_close(layer.running_var.flatten(), expected)
    # eval mode uses the running variance, so one sample's output no longer depends on the others
    layer.eval()
    alone = layer(x[:1])
    torch.testing.assert_close(alone, layer(x)[:1])
    den = torch.maximum((layer.running_var + 1e-5).sqrt(),
                        layer.v1 * x[:1] + (x[:1].var(dim=(2, 3), unbiased=False, keepdim=True) + 1e-5).sqrt())
    torch.testing.assert_close(alone, x[:1] / den * layer.weight + layer.bias)


def test_b0_train_mode_depends_on_the_batch_s0_does_not():
    torch.manual_seed(1)
    x, other = torch.randn(2, 8, 4, 4), torch.randn(2, 8, 4, 4) * 5
    b0, s0 = EvoNormB0(8).train(), EvoNormS0(8, groups=4).train()
    assert not torch.allclose(b0(x)[:1], b0(torch.cat([x[:1], other]))[:1])
    torch.testing.assert_close(s0(x)[:1], s0(torch.cat([x[:1], other]))[:1])
    torch.testing.assert_close(s0.train()(x), s0.eval()(x))  # no running statistics


def test_s0_equation_on_known_input():
    torch.manual_seed(2)
    x = torch.randn(2, 4, 3, 3)
    layer = EvoNormS0(4, groups=2, eps=1e-5)
    _set(layer, [1.0, 0.5, -2.0, 0.0], [1.0, 2.0, 0.5, 1.0], [0.0, 0.1, 0.2, -0.3])
    y = layer(x)
    ref = torch.empty_like(x)
    for b in range(2):
        for c in range(4):
            grp = x[b, (c // 2) * 2:(c // 2) * 2 + 2]
            std = math.sqrt(grp.flatten().var(unbiased=False).item() + 1e-5)
            v1, g, be = (layer.v1[0, c, 0, 0], layer.weight[0, c, 0, 0], layer.bias[0, c, 0, 0])
            ref[b, c] = x[b, c] * torch.sigmoid(v1 * x[b, c]) / std * g + be
    torch.testing.assert_close(y, ref)
    # v1 = 0 gives sigmoid(0) = 1/2: a plain (uncentered) group normalization, halved
    assert torch.allclose(y[:, 3], x[:, 3] * 0.5 / group_std(x, 2)[:, 3] - 0.3)


def test_initial_values_and_parameter_counts():
    for layer in (EvoNormB0(16), EvoNormS0(16)):
        assert torch.equal(layer.v1, torch.ones(1, 16, 1, 1)) and torch.equal(layer.weight, torch.ones(1, 16, 1, 1))
        assert torch.equal(layer.bias, torch.zeros(1, 16, 1, 1))
        assert sum(p.numel() for p in layer.parameters()) == 3 * 16
    with pytest.raises(ValueError, match="multiple of groups"):
        EvoNormS0(6, groups=4)
    with pytest.raises(ValueError, match="unknown norm_act"):
        norm_act_layer("layernorm")


@pytest.mark.parametrize("norm_act, kind", [("evonorm_b0", EvoNormB0), ("evonorm_s0", EvoNormS0),
                                            ("bn_relu", nn.BatchNorm2d), ("gn_relu", nn.GroupNorm)])
def test_every_norm_act_layer_is_swapped(norm_act, kind):
    model = tiny_resnet(norm_act=norm_act)
    assert sum(isinstance(m, kind) for m in model.modules()) == 2 * 3 + 1  # two per block, three blocks, final
    assert model(torch.rand(5, 1, 8, 8)).shape == (5, 10)


def test_same_seed_same_conv_weights_across_rows():
    from zoo_evonorm.reproduce import build

    ref = {k: v for k, v in build("tinyresnet_bn_relu", 3).state_dict().items() if "conv" in k or "head" in k}
    assert ref
    for name in MODELS[:2] + MODELS[3:]:
        sd = build(name, 3).state_dict()
        assert all(torch.equal(sd[k], v) for k, v in ref.items()), name


def test_gradients_reach_v1():
    model = zoo.create("tinyresnet_evonorm_b0")
    nn.functional.cross_entropy(model(torch.rand(4, 1, 8, 8)), torch.tensor([0, 1, 2, 3])).backward()
    layers = [m for m in model.modules() if isinstance(m, EvoNormB0)]
    assert all(m.v1.grad is not None and torch.isfinite(m.v1.grad).all() for m in layers)
    assert any(m.v1.grad.abs().sum() > 0 for m in layers)


def test_quick_reproduction_measures_s0_against_bn_and_gn():
    from zoo.claims import run_claim
    from zoo_evonorm.reproduce import REPRODUCTION

    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert len(r.table) == 16 and "task baseline @ 4" in r.table and r.seeds == [0, 1]
    assert [c["check"] for c in r.checks] == [f"test_acc: EvoNorm-S0 @ {b}{s} - {o} @ {b}{s} >= 0"
                                              for s in ("", " fashion") for b, o in ((128, "BN-ReLU"), (4, "BN-ReLU"),
                                                                                   (4, "GN-ReLU"))]
    # issue 14: the Fashion-MNIST rows score all 10,000 test images, the digits rows 450
    assert all(round(10_000 * a, 6).is_integer() for a in r.per_seed["EvoNorm-S0 @ 4 fashion"]["test_acc"])
    assert r.settings["row_args"]["BN-ReLU @ 128 fashion"]["dataset"] == "fashion_mnist"
    # issue 14: the task's CNN baseline is sized to the ResNet's parameter count (it was 65,834 beside 19,834)
    assert abs(r.table["task baseline @ 4"]["params"] - r.table["EvoNorm-S0 @ 4"]["params"]) <= 0.05 * 19_834
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    assert r.settings["row_args"]["EvoNorm-S0 @ 128"]["batch_size"] == 8  # the quick batch
    # S0 is not BN-ReLU or GN-ReLU under another name: same seeds and batches, different losses
    for b in (128, 4):
        s0 = r.per_seed[f"EvoNorm-S0 @ {b}"]["final_train_loss"]
        assert s0 != r.per_seed[f"BN-ReLU @ {b}"]["final_train_loss"] and s0 != r.per_seed[f"GN-ReLU @ {b}"]["final_train_loss"]
    # the EvoNorm rows carry their v1 (and S0/B0 their affine) parameters beyond the baselines'
    assert r.table["EvoNorm-S0 @ 4"]["params"] > r.table["BN-ReLU @ 4"]["params"] == r.table["GN-ReLU @ 4"]["params"]
    assert r.verdict in ("reproduced", "not reproduced", "inconclusive")
