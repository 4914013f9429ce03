"""HDFE plugin: the conformance kit, the algebra of the codes, and the weighting that makes them sampling-invariant."""
from __future__ import annotations

import math

import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_hdfe.model import HDFE, HDFEOperator, hdfe, invariant_weights


def _f(x: torch.Tensor) -> torch.Tensor:
    return 0.6 * torch.sin(2 * math.pi * x) + 0.3 * torch.cos(6 * math.pi * x)


def _cos(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * b.conj()).sum(-1).real / (a.abs().norm(dim=-1) * b.abs().norm(dim=-1))


def test_conformance(hub):
    check_plugin("hdfe", overrides={"hdfe": {"dim": 64}, "hdfe_operator": {"dim": 64, "hidden": 16}})


def test_presets_and_arguments():
    assert hdfe().dim == 2048 and hdfe(preset="paper").dim == 4096 and hdfe(dim=128).dim == 128
    with pytest.raises(ValueError, match="preset"):
        hdfe(preset="huge")
    with pytest.raises(ValueError, match="weighting"):
        HDFE(weighting="median")
    with pytest.raises(ValueError, match="expects x"):
        HDFE(dim=32).encode(torch.rand(2, 5), torch.rand(2, 5, 1))


def test_binding_and_unbinding_are_exact_inverses():
    enc = HDFE(dim=256, seed=3)
    x, y = torch.rand(7, 1), torch.rand(7) * 2 - 1
    bound = enc.encode_x(x) * enc.encode_y(y)
    assert torch.allclose(bound * enc.encode_x(x).conj(), enc.encode_y(y), atol=1e-5)
    assert torch.allclose(bound.abs(), torch.ones(7, 256), atol=1e-5)  # phasors: binding keeps unit magnitude


def test_fractional_power_similarity_is_the_gaussian_kernel():
    # <E_X(x), E_X(x + d)> / D -> exp(-alpha^2 d^2 / 2): the bandwidth sets the kernel width
    enc = HDFE(dim=8192, alpha_x=20.0, seed=0)
    d = torch.tensor([0.0, 0.02, 0.05, 0.1, 0.2])
    sim = (enc.encode_x(d[:, None]) * enc.encode_x(torch.zeros(1, 1)).conj()).sum(-1).real / enc.dim
    assert sim[0] == pytest.approx(1.0, abs=1e-5)
    assert torch.allclose(sim, torch.exp(-0.5 * (20.0 * d) ** 2), atol=4 / math.sqrt(enc.dim))
    assert sim[1] > sim[2] > sim[3] and abs(sim[4]) < 0.05  # monotone decay, ~0 beyond the receptive field


def test_invariant_weights_equalise_the_similarity_to_every_sample():
    # the minimum-norm point of the samples' hull: K w = rho on the support of w, K w >= rho off it (its KKT conditions)
    x = torch.rand(1, 60, 2, generator=torch.Generator().manual_seed(0)) ** 3  # a very uneven point set
    k = torch.exp(-0.5 * torch.cdist(10 * x, 10 * x) ** 2)
    w = invariant_weights(k, iters=200)
    s = torch.einsum("bij,bj->bi", k, w)
    rho = (w * s).sum()
    assert (w >= 0).all() and w.sum().item() == pytest.approx(1.0, abs=1e-5)
    assert (s / rho).min() > 0.99 and (s / rho)[w > 0.1 / 60].max() < 1.02
    density = k.sum(-1) / 60  # the plain mean's similarity to each sample is the sample density: far from flat
    assert density.max() / density.min() > 5


def test_duplicated_samples_do_not_change_the_code_but_change_the_plain_mean():
    x = torch.rand(1, 40, 1)
    dup = torch.cat([x, x[:, :10].repeat(1, 5, 1)], 1)  # ten samples now five times denser
    for weighting, same in (("invariant", True), ("mean", False)):
        enc = HDFE(dim=512, weighting=weighting, iters=60)
        c = _cos(enc.encode(x, _f(x)), enc.encode(dup, _f(dup))).item()
        assert (c > 0.999) if same else (c < 0.95), (weighting, c)


def test_code_does_not_depend_on_the_sample_density_unlike_the_plain_sum():
    g = torch.Generator().manual_seed(0)
    uniform = torch.rand(4, 400, 1, generator=g)
    skewed = torch.rand(4, 400, 1, generator=g) ** 3  # density ~ t^(-2/3): most samples near 0
    cos = {}
    for weighting in ("invariant", "mean"):
        enc = HDFE(dim=1024, weighting=weighting)
        cos[weighting] = _cos(enc.encode(uniform, _f(uniform)), enc.encode(skewed, _f(skewed))).mean().item()
    assert cos["invariant"] > 0.97 and cos["mean"] < 0.85, cos


def test_masked_samples_do_not_change_the_code():
    enc = HDFE(dim=256)
    x = torch.rand(2, 30, 1)
    junk = torch.full((2, 20, 1), float("nan"))
    mask = torch.cat([torch.ones(2, 30), torch.zeros(2, 20)], 1).bool()
    padded = enc.encode(torch.cat([x, junk], 1), torch.cat([_f(x), junk], 1), mask)
    assert torch.allclose(padded, enc.encode(x, _f(x)), atol=1e-6)


def test_decoding_recovers_the_function_and_a_wrong_query_does_not():
    enc = HDFE(dim=2048, seed=1)
    x = torch.rand(1, 300, 1)
    z = enc.encode(x, _f(x))
    xq = torch.linspace(0, 1, 101)[None, :, None]
    err = ((enc.decode(z, xq) - _f(xq)).norm() / _f(xq).norm()).item()
    assert err < 0.15
    other = HDFE(dim=2048, seed=2)  # other phases: the code does not decode with them
    assert ((other.decode(z, xq) - _f(xq)).norm() / _f(xq).norm()).item() > 0.5


def test_operator_takes_any_sampling_and_trains_its_mlp_only():
    op = HDFEOperator(dim=128, hidden=16)
    for n in (20, 77):
        assert op(torch.randn(3, n, 1), torch.rand(3, n, 1)).shape == (3, n, 1)
    out = op(torch.randn(2, 40, 1), torch.rand(2, 40, 1))
    out.sum().backward()
    assert all(p.grad is not None for p in op.mlp.parameters())
    assert [n for n, _ in op.named_parameters() if not n.startswith("mlp.")] == []  # the encoders are fixed buffers
    lo, hi = op.out_range
    assert ((out >= lo) & (out <= hi)).all()


def test_quick_invariance_rows_separate_the_weighting_from_the_plain_mean():
    from zoo_hdfe.reproduce import invariance_row

    inv = invariance_row(seed=0, quick=True, weighting="invariant")
    mean = invariance_row(seed=0, quick=True, weighting="mean")
    assert inv["mask_cos"] == pytest.approx(1.0, abs=1e-5)
    assert inv["cos_distribution"] > 0.95 > mean["cos_distribution"]
    assert inv["cos_different"] < 0.6 and inv["decode_rel_l2"] < 0.25


@pytest.mark.slow
def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_hdfe.reproduce import REPRODUCTION

    assert len(REPRODUCTION.seeds) >= 3
    res = run_claim(REPRODUCTION, quick=True)
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")
    assert res.rows["hdfe"]["cos_distribution"]["mean"] > res.rows["hdfe_mean"]["cos_distribution"]["mean"]
    assert zoo.create("hdfe_operator").dim == 512
