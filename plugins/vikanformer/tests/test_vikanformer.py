import math

import pytest
import torch

from zoo.task import count_params
from zoo.testing import check_plugin
from zoo_nn.backbones import TinyViT
from zoo_nn.kan import KAN, RBFKANLayer
from zoo_task_formula_regress.task import torch_threads
from zoo_vikanformer.model import (
    GRID_RANGE,
    MATCHED_HIDDEN,
    VARIANTS,
    ExplicitAttention,
    FourierKANLayer,
    SineKANLayer,
    kan_ffn,
    vikanformer,
)

SMALL = {f"vikanformer_{v}": {"depth": 1, "dim": 16, "heads": 2, "hidden": 3} for v in VARIANTS}


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):
        yield


def test_conformance(hub):
    check_plugin("vikanformer", overrides=SMALL)


def test_each_variant_replaces_every_mlp_and_matches_the_baseline_size():
    base = count_params(TinyViT())
    kinds = {"vanilla": KAN, "efficient": KAN, "fast": RBFKANLayer, "sine": SineKANLayer, "fourier": FourierKANLayer}
    for variant in VARIANTS:
        model = vikanformer(variant)
        assert model(torch.rand(2, 1, 8, 8)).shape == (2, 10)
        assert all(any(isinstance(m, kinds[variant]) for m in b.mlp.modules()) for b in model.blocks)
        assert not any(isinstance(m, torch.nn.GELU) for m in model.modules())
        assert abs(count_params(model) - base) / base < 0.03, variant
    assert MATCHED_HIDDEN["sine"] == 16
    assert vikanformer("vanilla").blocks[0].mlp.layers[0].init == "kan"
    assert vikanformer("efficient").blocks[0].mlp.layers[0].init == "efficient"


def test_sinekan_layer_equation_and_init():
    torch.manual_seed(0)
    layer = SineKANLayer(3, 2, grid_size=4)
    x = torch.rand(5, 3)
    s = torch.sin(x.unsqueeze(-1) * layer.freq + layer.phase)
    assert torch.allclose(layer(x), torch.einsum("nig,oig->no", s, layer.amplitude) + layer.bias, atol=1e-6)
    assert torch.allclose(layer.freq, torch.arange(1, 5) / 5)  # g / (G + 1) after the first layer
    assert torch.allclose(SineKANLayer(3, 2, 4, is_first=True).freq, torch.arange(1, 5).float())
    scale = math.prod(0.9724108095811765 * i ** -0.9884401790754128 + 0.999449553483052 for i in range(1, 4))
    assert layer.phase[0, 0] == pytest.approx(1 / 5 * scale, rel=1e-5)
    assert layer.phase[2, 0] == pytest.approx((math.pi + 1 / 5) * scale, rel=1e-5)
    assert "phase" not in dict(layer.named_parameters()) and torch.allclose(layer.bias, torch.full((2,), 0.5))
    assert float(layer.amplitude.detach().abs().max()) <= 1 / 2  # U(-1, 1) / out / g


def test_fourierkan_layer_equation():
    torch.manual_seed(0)
    layer = FourierKANLayer(2, 3, grid_size=4)
    x = torch.rand(6, 2)
    k = torch.arange(1, 5).float()
    c, s = torch.cos(x.unsqueeze(-1) * k), torch.sin(x.unsqueeze(-1) * k)
    want = torch.einsum("nik,oik->no", c, layer.coef[0]) + torch.einsum("nik,oik->no", s, layer.coef[1]) + layer.bias
    assert torch.allclose(layer(x), want, atol=1e-6)
    assert abs(float(layer.coef.detach().std()) * math.sqrt(2 * 4) - 1) < 0.4  # N(0, 1) / (sqrt(in) sqrt(G))


def test_bspline_grids_cover_the_layernorm_outputs_they_receive():
    """Issue 14: on the KAN default grid [-1, 1] about a third of a block's inputs (LayerNorm outputs) met only
    the silu branch; the block KANs' grids span GRID_RANGE, which holds nearly all of them."""
    from zoo_task_digits.task import load_split

    x = load_split()[2][:64]
    for variant in ("vanilla", "efficient"):
        torch.manual_seed(0)
        model = vikanformer(variant, depth=2).eval()
        seen: list = []
        record = lambda mod, args, seen=seen: seen.append((mod, args[0].reshape(-1, mod.in_features)))  # noqa: E731
        for block in model.blocks:
            for layer in block.mlp.layers:
                layer.register_forward_pre_hook(record)
        with torch.no_grad():
            model(x)
        for layer, inputs in seen:
            lo, hi = layer.grid[:, layer.spline_order], layer.grid[:, -layer.spline_order - 1]
            assert torch.allclose(lo, torch.full_like(lo, GRID_RANGE[0]))
            assert torch.allclose(hi, torch.full_like(hi, GRID_RANGE[1]))
            outside = float(((inputs < lo) | (inputs > hi)).float().mean())
            assert outside < 0.02, (variant, outside)
        first = seen[0][1]  # the first KAN layer's inputs: they would mostly miss [-1, 1]
        assert float((first.abs() > 1).float().mean()) > 0.2


def test_fourierkan_feed_forward_starts_smooth():
    """Issue 14: with the flat init every frequency is as strong as the first and the ViT did not train; the
    block's FourierKAN uses the reference code's smooth_initialization (coefficients / k^2)."""
    torch.manual_seed(0)
    ffn = kan_ffn("fourier", 64, 13)
    k = torch.arange(1, 6).float()
    for layer in ffn:
        per_k = layer.coef.detach().transpose(0, -1).reshape(5, -1).std(1)  # spread of the coefficients at each k
        assert torch.allclose(per_k * math.sqrt(layer.in_features) * k ** 2, torch.ones(5), atol=0.15)
    # consequence: a gentle slope on unit-variance inputs (flat init: mean squared slope ~ sum k^2 / G = 11x the value's)
    x = torch.randn(512, 64, requires_grad=True)
    y = ffn[0](x)
    (grad,) = torch.autograd.grad(y.sum(), x)
    y = y.detach()
    slope = float(grad.pow(2).mean()) / float((y - ffn[0].bias).pow(2).mean()) * 64 / 13  # per edge
    assert slope < 3


def test_flash_and_explicit_attention_agree():
    torch.manual_seed(0)
    model = vikanformer("fourier", depth=1)
    assert isinstance(model.blocks[0].attn, ExplicitAttention)
    fused = vikanformer("fourier", depth=1, flash=True)
    fused.load_state_dict(model.state_dict())
    x = torch.rand(3, 1, 8, 8)
    assert torch.allclose(model(x), fused(x), atol=1e-5)
    assert not isinstance(fused.blocks[0].attn, ExplicitAttention)
    with pytest.raises(ValueError):
        vikanformer("chebyshev")


def test_quick_reproduction_measures_accuracy_and_cost_against_the_mlp_vit():
    from zoo.claims import run_claim
    from zoo_vikanformer.reproduce import REPRODUCTION

    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert list(r.table) == ["MLP ViT", "CNN", *VARIANTS, "sine+flash"] and r.seeds == [0, 1]
    assert [c["check"] for c in r.checks] == [*(f"{v} accuracy >= 0.97" for v in ("sine", "fast", "vanilla")),
                                              *(f"{v} time_vs_mlp_vit >= 1" for v in ("sine", "fast", "vanilla"))]
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    # a KAN feed-forward layer is not the MLP: same seed and batches, other training loss
    for v in ("sine", "fast", "vanilla"):
        assert r.per_seed[v]["final_train_loss"] != r.per_seed["MLP ViT"]["final_train_loss"]
    assert "accuracy" not in r.table["sine+flash"] and r.table["sine+flash"]["params"] == r.table["sine"]["params"]
