import math

import torch

import zoo
from zoo.claims import run_claim
from zoo.testing import check_plugin
from zoo_poly_inr.model import PolyINR
from zoo_poly_inr.reproduce import REPRODUCTION


def test_conformance(hub):
    check_plugin("poly-inr", overrides={"poly_inr": {"hidden": 8, "levels": 2}})


def test_forward_follows_the_level_equations():
    m = PolyINR(hidden=6, levels=3).eval()
    x = torch.rand(5, 2) * 2 - 1
    act = lambda z: torch.nn.functional.leaky_relu(z, 0.2)
    z = act(m.linear[0](m.affine[0](x)))
    z = act(m.linear[1](z * m.affine[1](x)))
    z = act(m.linear[2](z * m.affine[2](x)))
    assert torch.allclose(m(x), m.head(z), atol=1e-6)


def test_degree_grows_with_levels_without_activation():
    # with a linear activation (slope 1) the network is exactly a polynomial of degree `levels` in x
    for levels in (1, 2, 3):
        m = PolyINR(in_features=1, hidden=4, levels=levels, slope=1.0, clamp=None).double()
        x = torch.linspace(-1, 1, 9, dtype=torch.float64).unsqueeze(1)
        with torch.no_grad():
            y = m(x)[:, 0]
        for deg, expect_exact in ((levels, True), (levels - 1, False)):
            v = torch.vander(x[:, 0], deg + 1)
            resid = y - v @ torch.linalg.lstsq(v, y).solution
            assert (float(resid.abs().max()) < 1e-9) == expect_exact


def test_clamp_and_no_positional_encoding():
    m = zoo.create("poly_inr")
    assert m.affine[0].in_features == 2  # coordinates go in raw
    assert not any("fourier" in type(x).__name__.lower() for x in m.modules())
    with torch.no_grad():
        m.head.weight.fill_(0)
        m.head.bias.fill_(0)
        m.linear[-1].bias.fill_(1e6)
        m.head.weight[0, 0] = 1.0
    assert float(m(torch.zeros(1, 2))[0, 0]) == 256.0


def test_quick_reproduction_measures_poly_inr_against_relu_ff():
    r = run_claim(REPRODUCTION, quick=True, seeds=(0, 1))
    assert set(r.table) == {"poly_inr (no PE)", "relu-ff", "siren", "relu-mlp (no PE)"} and r.seeds == [0, 1]
    p = r.table["poly_inr (no PE)"]["params"]
    assert all(abs(row["params"] - p) / p < 0.1 for row in r.table.values())  # equal parameter counts
    assert all(math.isfinite(v) for row in r.per_seed.values() for vals in row.values() for v in vals)
    # different networks on the same signal: a swap of Poly-INR for its baseline would show here
    assert r.per_seed["poly_inr (no PE)"]["psnr_train"] != r.per_seed["relu-ff"]["psnr_train"]
    assert [c["check"] for c in r.checks] == ["psnr_train: poly_inr (no PE) - relu-ff >= 0"]
    assert all(math.isfinite(v) for v in r.checks[0]["ci95"]) and r.verdict in ("reproduced", "not reproduced", "inconclusive")
