"""The FNO's spectral convolution and the operator networks of zoo_nn.operators (issue 16)."""
import math

import pytest
import torch

from zoo_nn.operators import FNO1d, FNO2d, SpectralConv1d, SpectralConv2d, UNet1d, UNet2d, grid_coordinates


def _fourier_upsample(y: torch.Tensor, n: int) -> torch.Tensor:
    """Trigonometric interpolation of a periodic signal (last axis) onto n points."""
    c = torch.fft.rfft(y, dim=-1)
    out = torch.zeros(*c.shape[:-1], n // 2 + 1, dtype=c.dtype)
    out[..., :c.shape[-1]] = c
    return torch.fft.irfft(out, n=n, dim=-1) * (n / y.shape[-1])


def test_a_single_mode_is_multiplied_by_its_complex_weight():
    torch.manual_seed(0)
    conv = SpectralConv1d(1, 1, modes=6)
    n, k = 64, 3
    x = torch.arange(n) / n
    y = conv(torch.cos(2 * math.pi * k * x)[None, None])[0, 0]
    w = conv.weight[0, 0, k].detach()
    # cos = (e^{ikx} + e^{-ikx}) / 2, the layer multiplies mode k by w (and -k by conj w): |w| cos(kx + arg w)
    expected = w.abs() * torch.cos(2 * math.pi * k * x + torch.angle(w))
    assert torch.allclose(y, expected, atol=1e-5)
    assert not torch.allclose(y, torch.cos(2 * math.pi * k * x) * w.real, atol=1e-3)  # the phase acts too


def test_channels_mix_as_a_complex_matrix():
    torch.manual_seed(1)
    conv = SpectralConv1d(2, 3, modes=4)
    n, k = 32, 2
    x = torch.arange(n) / n
    a = torch.tensor([0.7, -1.3])
    inp = a[None, :, None] * torch.cos(2 * math.pi * k * x)[None, None]
    out = conv(inp)[0]
    z = (a.to(torch.cfloat)[:, None] * conv.weight[:, :, k].detach()).sum(0)  # (out,)
    expected = z.abs()[:, None] * torch.cos(2 * math.pi * k * x[None] + torch.angle(z)[:, None])
    assert torch.allclose(out, expected, atol=1e-5)


def test_modes_at_or_above_the_cutoff_are_removed():
    torch.manual_seed(0)
    conv = SpectralConv1d(1, 1, modes=5)
    x = torch.arange(64) / 64
    high = torch.sin(2 * math.pi * 5 * x) + torch.cos(2 * math.pi * 17 * x)
    assert conv(high[None, None]).abs().max() < 1e-5
    low = torch.sin(2 * math.pi * 4 * x)
    assert conv((low + high)[None, None]).sub(conv(low[None, None])).abs().max() < 1e-5
    assert conv(low[None, None]).abs().max() > 1e-3


def test_2d_truncation_keeps_positive_and_negative_rows():
    torch.manual_seed(0)
    conv = SpectralConv2d(1, 1, 4, 4)
    n = 32
    g = grid_coordinates((n, n))
    yy, xx = g[0], g[1]
    low = torch.cos(2 * math.pi * (3 * yy - 2 * xx))  # mode (-3, 2) after conjugation: the negative-row weights
    high = torch.cos(2 * math.pi * (6 * yy + xx)) + torch.cos(2 * math.pi * (yy + 9 * xx))
    assert conv(high[None, None]).abs().max() < 1e-5
    assert conv(low[None, None]).abs().max() > 1e-3
    assert torch.allclose(conv((low + high)[None, None]), conv(low[None, None]), atol=1e-5)


@pytest.mark.parametrize("n", [32, 64])
def test_output_at_twice_the_resolution_is_the_interpolated_output(n):
    torch.manual_seed(0)
    conv = SpectralConv1d(2, 2, modes=8)
    coef = torch.randn(2, 10, 2)

    def signal(m: int) -> torch.Tensor:  # band-limited: modes 0..9 < n / 2
        x = torch.arange(m) / m
        k = torch.arange(10)[:, None]
        return (coef[..., :1] * torch.cos(2 * math.pi * k * x) + coef[..., 1:] * torch.sin(2 * math.pi * k * x)).sum(1)

    y1, y2 = conv(signal(n)[None])[0], conv(signal(2 * n)[None])[0]
    assert torch.allclose(y2, _fourier_upsample(y1, 2 * n), atol=1e-5)
    assert torch.allclose(y2[:, ::2], y1, atol=1e-5)


def test_2d_output_at_twice_the_resolution_matches_the_coarse_one():
    torch.manual_seed(0)
    conv = SpectralConv2d(1, 2, 5, 5)

    def signal(m: int) -> torch.Tensor:
        g = grid_coordinates((m, m))
        return (torch.sin(2 * math.pi * (g[0] + 2 * g[1])) + torch.cos(2 * math.pi * (3 * g[0] - g[1])))[None, None]

    y1, y2 = conv(signal(16)), conv(signal(32))
    assert torch.allclose(y2[..., ::2, ::2], y1, atol=1e-5)


def test_fno_is_nearly_consistent_across_resolutions_unlike_the_unet():
    """The whole FNO at 2x on a smooth input stays close to its 1x output (GELU creates high modes, so not
    exactly); the U-Net's fixed 3-cell kernels see half the physical length at 2x and change much more."""
    torch.manual_seed(0)
    fno, unet = FNO1d(modes=8, width=16), UNet1d(width=8, circular=True)

    def signal(m: int) -> torch.Tensor:
        x = torch.arange(m) / m
        return (torch.sin(2 * math.pi * x) + 0.5 * torch.cos(2 * math.pi * 3 * x))[None, None]

    with torch.no_grad():
        def gap(net):
            y1, y2 = net(signal(64)), net(signal(128))
            return float((y2[..., ::2] - y1).norm() / y1.norm())
        fno_gap, unet_gap = gap(fno), gap(unet)
    assert fno_gap < 0.02
    assert unet_gap > 3 * fno_gap


def test_weights_initialised_as_in_the_fno_code():
    torch.manual_seed(0)
    conv = SpectralConv1d(8, 4, modes=16)
    w = conv.weight.detach()
    scale = 1 / (8 * 4)
    for part in (w.real, w.imag):
        assert part.min() >= 0 and part.max() < scale
        assert abs(float(part.mean()) - scale / 2) < scale * 0.05


def test_normal_spectral_init_is_neuraloperators_scheme_and_the_default_stays_the_papers():
    torch.manual_seed(0)
    w = SpectralConv2d(32, 32, 12, init="normal").weight_pos.detach()
    std = (2 / 64) ** 0.5  # complex normal: E|w|^2 = std^2, real and imaginary parts each std / sqrt(2)
    assert abs(float(w.abs().pow(2).mean().sqrt()) - std) < 0.02 * std
    assert abs(float(w.real.mean())) < 0.02 * std and float(w.real.min()) < 0  # centred, unlike the paper's
    torch.manual_seed(0)
    a = FNO1d(modes=4, width=8).spectral[0].weight
    torch.manual_seed(0)
    b = FNO1d(modes=4, width=8, spectral_init="fno").spectral[0].weight
    assert torch.equal(a, b) and float(a.real.min()) >= 0
    assert FNO1d(modes=4, width=8, spectral_init="normal").spectral[0].weight.real.min() < 0
    with pytest.raises(ValueError, match="spectral_init must be one of fno, normal"):
        FNO2d(modes=4, width=8, spectral_init="xavier")


@pytest.mark.parametrize("n", [7, 16, 33, 64, 100])
def test_shapes_at_several_grid_sizes(n):
    torch.manual_seed(0)
    assert FNO1d(2, 3, modes=12, width=8)(torch.randn(2, 2, n)).shape == (2, 3, n)
    assert UNet1d(2, 3, width=4)(torch.randn(2, 2, n)).shape == (2, 3, n)
    assert FNO2d(1, 1, modes=6, width=8, padding=0.1)(torch.randn(2, 1, n, n // 2 + 1)).shape == (2, 1, n, n // 2 + 1)
    assert UNet2d(1, 2, width=4)(torch.randn(1, 1, n, n)).shape == (1, 2, n, n)


def test_grid_coordinates_are_appended_and_matter():
    torch.manual_seed(0)
    with_grid, without = FNO1d(modes=4, width=8), FNO1d(modes=4, width=8, append_grid=False)
    assert with_grid.lift.in_features == 2 and without.lift.in_features == 1
    const = torch.ones(1, 1, 32)
    with torch.no_grad():  # a constant input gives a varying output only through the coordinates
        assert with_grid(const).std() > 1e-5
        assert without(const).std() < 1e-7


def test_paper_defaults_and_errors():
    net = FNO1d()
    assert (net.modes, net.width, net.layers) == (16, 64, 4)
    assert sum(p.numel() for p in net.spectral[0].parameters()) == 64 * 64 * 16  # complex counted once per entry
    assert (FNO2d().modes, FNO2d().width) == (12, 32)
    with pytest.raises(ValueError, match=r"expected \(B, 1, s\)"):
        net(torch.randn(2, 3, 16))
    assert grid_coordinates((3,), endpoint=True)[0].tolist() == [0.0, 0.5, 1.0]
