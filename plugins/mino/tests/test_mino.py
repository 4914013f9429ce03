"""MINO plugin: the conformance kit, the GNO encoder's invariances, sampling at any point set, and the shared
flow-matching rule (OFM's) on an exact toy case."""
from __future__ import annotations

import math

import pytest
import torch

from zoo.testing import check_plugin
from zoo_mino.model import CPU, PAPER, GNOEncoder, MINOVelocity, mino, pointwise_mlp_flow, token_grid
from zoo_ofm.flow import FunctionalFlow, flow_matching_loss

TINY = {"tokens": 4, "width": 8, "blocks": 1}


def test_conformance(hub):
    check_plugin("mino", overrides={"mino": TINY})


def test_presets_and_the_shared_training_loop():
    m = mino()
    assert isinstance(m, FunctionalFlow) and m.input_kind == "generative"  # OFM's flow matching, not a copy
    assert m.velocity.encoder.positions.shape == (CPU["tokens"], 1)
    assert mino(preset="paper").velocity.encoder.positions.shape == (PAPER["tokens"], 1)
    assert mino(d=2, tokens=9).velocity.encoder.positions.shape == (9, 2)
    with pytest.raises(ValueError, match="preset"):
        mino(preset="huge")
    with pytest.raises(ValueError, match="perfect"):
        token_grid(10, 2)


def test_gno_encoder_is_permutation_invariant_over_input_points():
    torch.manual_seed(0)
    enc = GNOEncoder(2, 8, token_grid(8, 1), radius=0.2)
    v, x = torch.randn(3, 40, 2), torch.rand(3, 40, 1)
    perm = torch.randperm(40)
    assert torch.allclose(enc(v, x), enc(v[:, perm], x[:, perm]), atol=1e-6)
    # the radius graph: a point farther than the radius from every token changes nothing
    enc_far = GNOEncoder(2, 8, torch.tensor([[0.2], [0.4]]), radius=0.1)
    far = torch.cat([x.clamp(0.15, 0.45), torch.full((3, 1, 1), 0.9)], dim=1)
    assert torch.allclose(enc_far(torch.cat([v, torch.randn(3, 1, 2)], 1), far), enc_far(v, far[:, :40]), atol=1e-6)


def test_gno_encoder_is_discretisation_agnostic_for_smooth_inputs():
    # the quadrature-weighted mean over each ball estimates an integral: dense uniform and dense skewed samplings of
    # the same smooth function give nearly the same tokens; a plain mean over the ball weights the dense side more
    xu = ((torch.arange(1000) + 0.5) / 1000).view(1, -1, 1)
    xs = (((torch.arange(1500) + 0.5) / 1500) ** 2).view(1, -1, 1)  # skewed towards 0, another size
    f = lambda x: torch.sin(2 * math.pi * x)  # noqa: E731
    gaps = {}
    for quadrature in ("knn", "mean"):
        torch.manual_seed(0)
        enc = GNOEncoder(1, 8, token_grid(8, 1), radius=0.1, quadrature=quadrature)
        with torch.no_grad():
            hu, hs = enc(f(xu), xu), enc(f(xs), xs)
        gaps[quadrature] = float((hu - hs).norm() / hu.norm())
    assert gaps["knn"] < 0.02 and gaps["mean"] > 0.1, gaps


def test_mino_samples_at_any_number_of_points_and_in_2d():
    torch.manual_seed(0)
    m = mino(**TINY)
    for n in (1, 7, 50):
        out = m.sample(torch.rand(n, 1), 3, seed=0)
        assert out.shape == (3, n, 1) and torch.isfinite(out).all()
    m2 = mino(d=2, tokens=4, width=8, blocks=1, radius=0.5)
    assert m2.sample(torch.rand(30, 2), 2, seed=0).shape == (2, 30, 1)
    # the velocity itself, at two point sets of different sizes in one model
    vel = MINOVelocity(tokens=4, width=8, blocks=1)
    assert vel(torch.randn(2, 11, 1), torch.rand(2, 11, 1), torch.rand(2)).shape == (2, 11, 1)


def test_flow_matching_loss_is_zero_at_the_exact_velocity():
    # toy case: the reference is the point mass at 0 and the data c phi(x), c random: f_t = t c phi, so the exact
    # velocity is f / t; MINO's training minimises this loss (zoo_ofm.flow), which vanishes only there
    x = torch.rand(5, 9, 1)
    f1 = torch.randn(5, 1, 1) * torch.cos(3 * x)
    t = torch.rand(5) * 0.9 + 0.1
    exact = lambda f, c, s: f / s.view(-1, 1, 1)  # noqa: E731
    assert float(flow_matching_loss(exact, torch.zeros_like(f1), f1, x, t)) < 1e-10
    assert float(flow_matching_loss(lambda f, c, s: 0.9 * exact(f, c, s), torch.zeros_like(f1), f1, x, t)) > 1e-4


def test_pointwise_baseline_cannot_mix_points():
    # the claim's baseline: its velocity at a point ignores every other point (so it cannot change correlations)
    torch.manual_seed(0)
    base = pointwise_mlp_flow(width=16).velocity
    f, x, t = torch.randn(1, 6, 1), torch.rand(1, 6, 1), torch.rand(1)
    g = f.clone()
    g[0, 3] += 1.0
    assert torch.allclose(base(f, x, t)[0, :3], base(g, x, t)[0, :3])
    vel = MINOVelocity(tokens=4, width=8, blocks=1, radius=0.5)
    assert not torch.allclose(vel(f, x, t)[0, :3], vel(g, x, t)[0, :3])


@pytest.mark.slow
def test_quick_reproduction_runs_at_matched_parameters():
    from zoo.claims import run_claim
    from zoo_mino.reproduce import REPRODUCTION

    res = run_claim(REPRODUCTION, quick=True)
    table = res.table
    assert abs(table["mlp_pointwise"]["params"] / table["mino"]["params"] - 1) < 0.1  # matched within 10%
    assert table["mino"]["cov_error_skewed"] != table["mlp_pointwise"]["cov_error_skewed"]
