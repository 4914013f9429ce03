"""OFM plugin: the conformance kit, the flow-matching rule on exact toy cases, the point-set FNO, SGLD regression,
and a quick fit on a process no Gaussian process can represent."""
from __future__ import annotations

import math

import pytest
import torch
from torch import nn

import zoo
from zoo.testing import check_plugin
from zoo_ofm.flow import FunctionalFlow, GPReference, flow_matching_loss, ot_pairing
from zoo_ofm.model import CPU, PAPER, PointFNO, PointSpectralConv1d, cell_weights, ofm

TINY = {"width": 8, "modes": 4, "layers": 2}


def test_conformance(hub):
    check_plugin("ofm", overrides={"ofm": TINY})


def test_presets_and_contract():
    assert ofm().velocity.lift.out_features == CPU["width"]
    assert ofm(preset="paper").velocity.spectral[0].modes == PAPER["modes"]
    assert ofm(preset="paper", width=16).velocity.lift.out_features == 16
    assert ofm().input_kind == "generative"
    with pytest.raises(ValueError, match="preset"):
        ofm(preset="huge")
    with pytest.raises(ValueError, match="1D"):
        PointFNO(d=2)


def test_point_spectral_conv_is_fno_spectral_conv_on_a_uniform_grid():
    # on N uniform points the non-uniform DFT is the rfft: the layer equals rfft -> truncate -> multiply -> irfft
    torch.manual_seed(0)
    conv = PointSpectralConv1d(3, 4, modes=5).double()
    n = 16
    x = (torch.arange(n, dtype=torch.float64) / n).view(1, n, 1)
    h = torch.randn(2, n, 3, dtype=torch.float64)
    spec = torch.fft.rfft(h, dim=1)[:, :5]
    full = torch.zeros(2, n // 2 + 1, 4, dtype=torch.complex128)
    full[:, :5] = torch.einsum("bki,iok->bko", spec, torch.complex(conv.weight[0], conv.weight[1]))
    assert torch.allclose(conv(h, x.expand(2, n, 1)), torch.fft.irfft(full, n=n, dim=1), atol=1e-12)


def test_cell_weights_make_the_transform_accurate_on_random_points():
    # the Fourier coefficient a_3 of cos(2 pi 3 x) is 1/2: cell weights recover it on 64 random points better
    # than the plain mean (a Monte-Carlo estimate); on a uniform grid both are 1/N
    x = torch.rand(200, 64, 1, generator=torch.Generator().manual_seed(0))
    h = torch.cos(6 * math.pi * x[..., 0])
    basis = torch.cos(6 * math.pi * x[..., 0])
    cells = ((h * basis * cell_weights(x)).sum(-1) - 0.5).abs().mean()
    plain = ((h * basis).mean(-1) - 0.5).abs().mean()
    assert float(cells) < 0.5 * float(plain), (float(cells), float(plain))
    grid = torch.arange(16.0).view(1, 16, 1) / 16
    assert torch.allclose(cell_weights(grid), torch.full((1, 16), 1 / 16))


def test_velocity_is_permutation_equivariant_over_points():
    torch.manual_seed(0)
    net = PointFNO(width=8, modes=4, layers=2)
    f, x, t = torch.randn(2, 20, 1), torch.rand(2, 20, 1), torch.rand(2)
    perm = torch.randperm(20)
    assert torch.allclose(net(f, x, t)[:, perm], net(f[:, perm], x[:, perm], t), atol=1e-5)


class DoublingVelocity(nn.Module):
    """The exact velocity of the coupling f1 = 2 f0 on the straight path: f_t = (1 + t) f0, so v(f, t) = f / (1 + t)."""

    def forward(self, f, coords, t):
        return f / (1 + t.view(-1, 1, 1))


def test_flow_matching_loss_is_zero_at_the_exact_velocity():
    ref = GPReference("rbf", lengthscale=0.2)
    x = torch.rand(4, 12, 1)
    f0 = ref.sample(x, 1, torch.Generator().manual_seed(0))
    t = torch.rand(4)
    assert float(flow_matching_loss(DoublingVelocity(), f0, 2 * f0, x, t)) < 1e-12
    wrong = lambda f, c, s: f  # noqa: E731 - the velocity of the doubling ODE at t = 0 only
    assert float(flow_matching_loss(wrong, f0, 2 * f0, x, t)) > 1e-3


def test_sampler_integrates_the_exact_flow_to_the_pushed_forward_gp():
    model = FunctionalFlow(DoublingVelocity(), reference={"kernel": "rbf", "lengthscale": 0.2}, ode_steps=16)
    x = torch.linspace(0, 1, 10).unsqueeze(-1)
    s = model.sample(x, 4000, seed=0)[..., 0]
    assert s.shape == (4000, 10)
    cov = model.reference.cov(x).float()
    assert float((torch.cov(s.T) - 4 * cov).norm() / (4 * cov).norm()) < 0.06  # 4000 samples: ~0.03 noise


def test_ot_pairing_recovers_a_shuffled_coupling():
    ref = GPReference("rbf", lengthscale=0.2)
    x = torch.rand(1, 10, 1).expand(6, 10, 1)
    chol = ref.chol(x)
    white = torch.randn(6, 10, 1, generator=torch.Generator().manual_seed(0))
    perm = torch.tensor([3, 0, 5, 1, 4, 2])
    assert torch.equal(ot_pairing(chol, white, chol @ white[perm]), perm)


def test_sgld_regression_matches_the_exact_posterior_of_the_pushed_forward_gp():
    # the doubling flow makes the learned process exactly GP(0, 4 k): its posterior is known in closed form
    model = FunctionalFlow(DoublingVelocity(), reference={"kernel": "rbf", "lengthscale": 0.3})
    xo, xq = torch.tensor([[0.1], [0.5], [0.8]]), torch.tensor([[0.3], [0.95]])
    yo, noise = torch.tensor([[1.0], [-0.5], [0.8]]), 0.1
    post = model.condition(xo, yo, xq, 256, seed=0, noise=noise, sgld_steps=300, ode_steps=4)[..., 0]
    k = lambda a, b: 4 * torch.exp(-0.5 * torch.cdist(a, b) ** 2 / 0.09)  # noqa: E731
    koo = k(xo, xo) + noise ** 2 * torch.eye(3)
    mean = (k(xq, xo) @ torch.linalg.solve(koo, yo))[:, 0]
    var = torch.diagonal(k(xq, xq) - k(xq, xo) @ torch.linalg.solve(koo, k(xo, xq)))
    assert torch.allclose(post.mean(0), mean, atol=0.15), (post.mean(0), mean)
    assert torch.allclose(post.std(0), var.sqrt(), rtol=0.3, atol=0.05), (post.std(0), var.sqrt())


def test_ofm_learns_a_bimodal_process_a_gp_cannot():
    # f = s sin(2 pi x) + noise, s = +-1: the value at x = 1/4 is bimodal (+-1) and has the opposite sign at x = 3/4.
    # A Gaussian process with this covariance puts ~45% of its mass at |f(1/4)| < 0.5; OFM puts almost none there.
    x = (torch.arange(16) / 16.0).view(16, 1)
    g = torch.Generator().manual_seed(0)
    s = torch.where(torch.rand(256, generator=g) < 0.5, -1.0, 1.0)
    values = s.view(-1, 1, 1) * torch.sin(2 * math.pi * x) + 0.05 * torch.randn(256, 16, 1, generator=g)
    torch.manual_seed(0)
    model = zoo.create("ofm", width=16, modes=4, layers=2, ode_steps=8, lr=1e-2)
    model.fit(values, x, steps=150, seed=0)
    out = model.sample(x, 200, seed=1)[..., 0][:, [4, 12]]
    assert float((out[:, 0].abs() > 0.5).float().mean()) > 0.85
    assert float((out[:, 0] * out[:, 1] < 0).float().mean()) > 0.9
    gauss = torch.randn(200, generator=g) * values[:, 4, 0].std()  # the exact Gaussian with the data's variance
    assert float((gauss.abs() > 0.5).float().mean()) < 0.75


@pytest.mark.slow
def test_quick_reproduction_runs_and_rows_differ():
    from zoo.claims import run_claim
    from zoo_ofm.reproduce import REPRODUCTION

    res = run_claim(REPRODUCTION, quick=True)
    assert res.verdict in ("reproduced", "not reproduced", "inconclusive")
    table = res.table
    assert table["ofm_warped"]["energy_distance"] != table["gp_warped"]["energy_distance"]
    assert table["ofm_rbf"]["params"] == sum(p.numel() for p in ofm().parameters())
