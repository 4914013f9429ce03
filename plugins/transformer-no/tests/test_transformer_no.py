"""transformer-no: the conformance kit, and what tells continuum attention from plain softmax attention."""
from __future__ import annotations

import math

import pytest
import torch

from zoo.testing import check_model, check_plugin
from zoo_transformer_no.model import PRESETS, quadrature_weights, transformer_no_1d, transformer_no_2d

TINY_1D = {"width": 8, "heads": 2, "layers": 1}
TINY_2D = {"width": 8, "heads": 2, "layers": 1, "patches": 2, "modes": 2}


def test_conformance(hub):
    check_plugin("transformer-no", overrides={"transformer_no_1d": TINY_1D, "transformer_no_2d": TINY_2D})


def test_conformance_of_the_points_model(hub):
    check_model("transformer_no_1d", overrides=TINY_1D)  # real weights only: no complex tensor, takes the 1D example


def test_presets():
    assert transformer_no_1d().attn[0].heads == PRESETS["cpu"]["heads"]
    assert len(transformer_no_1d(preset="paper").attn) == PRESETS["paper"]["layers"]
    with pytest.raises(ValueError, match="preset"):
        transformer_no_1d(preset="huge")
    with pytest.raises(ValueError, match="quadrature"):
        transformer_no_1d(quadrature="simpson")


def test_cell_weights_integrate_on_scattered_points():
    x = torch.rand(1, 400, 1, generator=torch.Generator().manual_seed(0)) ** 3  # dense near 0
    w = quadrature_weights(x)
    f = torch.cos(3 * x[..., 0])
    assert abs((w * f).sum().item() - math.sin(3) / 3) < 5e-3  # the integral of cos(3x) on [0, 1]
    assert abs(f.mean().item() - math.sin(3) / 3) > 0.1  # the plain mean (softmax's implicit rule) is far off


def _skewed_and_uniform(q):
    """Two samplings of [0, 1] with the query points q in both: one dense near 0 (x = s^3), one uniform."""
    s = torch.linspace(0, 1, 301)[1:-1]
    return torch.cat([q, s ** 3]), torch.cat([q, torch.linspace(0, 1, 151)[1:-1]])


def test_attention_output_does_not_depend_on_where_the_function_was_sampled():
    torch.manual_seed(0)
    model = transformer_no_1d(width=16, heads=2, layers=2).eval()
    q = torch.tensor([0.1, 0.35, 0.6, 0.9])
    diffs = {}
    for rule in ("cell", "uniform"):
        model.quadrature = rule
        outs = []
        for x in _skewed_and_uniform(q):
            u = torch.sin(2 * math.pi * x) + x ** 2  # the same function, sampled at 2 different point sets
            with torch.no_grad():
                outs.append(model(u[None, :, None], x[None, :, None])[0, : len(q), 0])
        diffs[rule] = (outs[0] - outs[1]).abs().max().item() / outs[1].abs().max().item()
    # quadrature weights: both samplings approximate the same integral; plain softmax weights the dense region more
    assert diffs["cell"] < 0.02 and diffs["uniform"] > 5 * diffs["cell"], diffs


def test_quadrature_attention_agrees_at_n_and_2n_points():
    torch.manual_seed(1)
    model = transformer_no_1d(width=16, heads=2, layers=1).eval()
    s = torch.linspace(0, 1, 65)
    coarse, fine = s ** 2, torch.cat([s ** 2, (torch.rand(64, generator=torch.Generator().manual_seed(2)) * 0.5)])
    u = lambda x: torch.exp(-((x - 0.4) ** 2) / 0.05)  # noqa: E731
    with torch.no_grad():
        a = model(u(coarse)[None, :, None], coarse[None, :, None])[0, :, 0]
        b = model(u(fine)[None, :, None], fine[None, :, None])[0, :65, 0]
    assert (a - b).abs().max() / a.abs().max() < 0.03


def test_permutation_equivariance():
    torch.manual_seed(0)
    model = transformer_no_1d(width=16, heads=2, layers=2).eval()
    x, u = torch.rand(2, 50, 1), torch.randn(2, 50, 1)
    perm = torch.randperm(50)
    with torch.no_grad():
        out, out_p = model(u, x), model(u[:, perm], x[:, perm])
    torch.testing.assert_close(out[:, perm], out_p, atol=1e-5, rtol=1e-4)


def test_patched_2d_runs_at_any_divisible_resolution_and_scores_are_integrals():
    torch.manual_seed(0)
    model = transformer_no_2d(width=8, heads=2, layers=1, patches=4, modes=2).eval()
    a = torch.randn(2, 1, 16, 16)
    assert model(a).shape == (2, 1, 16, 16) and model(torch.randn(1, 1, 32, 32)).shape == (1, 1, 32, 32)
    with pytest.raises(ValueError, match="patches"):
        model(torch.randn(1, 1, 18, 18))
    # a patch-constant input at 16x16 and at 32x32 is the same function: the patch scores (integrals) agree
    attn = model.attn[0]
    coarse = torch.randn(1, 16, 1, 1, 8).expand(1, 16, 4, 4, 8)
    fine = coarse[:, :, :1, :1].expand(1, 16, 8, 8, 8)
    with torch.no_grad():
        torch.testing.assert_close(attn(coarse)[:, :, 0, 0], attn(fine)[:, :, 0, 0], atol=1e-5, rtol=1e-4)
