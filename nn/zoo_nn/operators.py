"""Neural-operator reference layers: the Fourier neural operator (FNO) in 1D and 2D and a small U-Net.

The FNO follows Li et al., "Fourier Neural Operator for Parametric Partial Differential Equations"
(ICLR 2021), §4 (eq. 4-5): a pointwise lifting P to ``width`` channels, ``layers`` Fourier layers
``v <- sigma(W v + K(v))`` where ``K`` multiplies the lowest ``modes`` Fourier coefficients of ``v`` by learned
complex matrices and drops the rest, and a pointwise projection Q (two linear maps with a GELU between, 128
hidden units as in the paper's code). As in the paper the grid coordinates are appended to the input
channels before lifting, and the last Fourier layer has no activation.

Choices that differ from, or are not fixed by, the paper text:

* the appended coordinates are the periodic grid ``j / s`` (the paper's code uses ``linspace(0, 1, s)``,
  endpoint included); with ``j / s`` the 2x grid contains the 1x grid, so the same coordinate means the same
  point at both resolutions. ``endpoint=True`` gives the paper's grid (for non-periodic data such as Darcy).
* ``padding`` (a fraction of each grid side, default 0) zero-pads the lifted field on the right before the
  Fourier layers, as the paper's 2D code does for non-periodic problems (it pads a fixed 9 cells; a fraction
  keeps the padded domain the same physical length at every resolution).
* on a grid too coarse for ``modes`` (``s // 2 < modes``) the spectral convolution uses the modes that exist
  and ignores the remaining weights, so the model runs at any grid size.

Every module here takes ``(B, C, *grid)`` and returns ``(B, C_out, *grid)`` at any grid size.

>>> import torch
>>> net = FNO1d(in_channels=1, out_channels=1, modes=8, width=16)
>>> net(torch.randn(2, 1, 64)).shape, net(torch.randn(2, 1, 128)).shape
(torch.Size([2, 1, 64]), torch.Size([2, 1, 128]))
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["FNO1d", "FNO2d", "SpectralConv1d", "SpectralConv2d", "UNet1d", "UNet2d", "grid_coordinates"]


SPECTRAL_INITS = ("fno", "normal")


def _complex_init(*shape: int, init: str = "fno") -> nn.Parameter:
    """The complex spectral weights (in_channels, out_channels, *modes).

    ``"fno"`` (default): real and imaginary parts uniform in [0, 1 / (in_channels * out_channels)), the FNO code's
    initialisation. ``"normal"``: complex normal with standard deviation sqrt(2 / (in_channels + out_channels)), the
    ``neuraloperator`` package's default; at width 64 its weights are about 360 times larger, which is measured to
    train faster on Burgers (benchmarks/peers/neuraloperator_fno.py), so it is offered by name.
    """
    if init not in SPECTRAL_INITS:
        raise ValueError(f"spectral_init must be one of {', '.join(SPECTRAL_INITS)}, got {init!r}")
    c_in, c_out = shape[0], shape[1]
    if init == "fno":
        return nn.Parameter((1.0 / (c_in * c_out)) * torch.rand(*shape, dtype=torch.cfloat))
    return nn.Parameter(torch.randn(*shape, dtype=torch.cfloat) * (2.0 / (c_in + c_out)) ** 0.5)


class SpectralConv1d(nn.Module):
    """The Fourier integral operator K of one FNO layer in 1D: ``irfft(R * rfft(v)[:modes])``.

    ``R`` is a learned complex tensor (in_channels, out_channels, modes), initialised as in the FNO code:
    real and imaginary parts uniform in [0, 1 / (in_channels * out_channels)). Modes at or above ``modes``
    are set to zero (the truncation is what makes the layer independent of the grid: the same weights act
    on the same frequencies at every resolution, with torch's default FFT normalisation the output of a
    band-limited input at 2s is the Fourier interpolation of the output at s).
    """

    def __init__(self, in_channels: int, out_channels: int, modes: int, *, init: str = "fno"):
        super().__init__()
        self.in_channels, self.out_channels, self.modes = in_channels, out_channels, modes
        self.weight = _complex_init(in_channels, out_channels, modes, init=init)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        k = min(self.modes, n // 2 + 1)
        x_ft = torch.fft.rfft(x, dim=-1)
        out = torch.zeros(x.shape[0], self.out_channels, n // 2 + 1, dtype=torch.cfloat, device=x.device)
        out[..., :k] = torch.einsum("bik,iok->bok", x_ft[..., :k].to(torch.cfloat), self.weight[..., :k])
        return torch.fft.irfft(out, n=n, dim=-1)

    def extra_repr(self) -> str:
        return f"{self.in_channels}, {self.out_channels}, modes={self.modes}"


class SpectralConv2d(nn.Module):
    """The 2D Fourier integral operator: the lowest ``modes1`` x ``modes2`` frequencies of ``rfft2(v)``
    (positive and negative ``modes1`` rows, each with its own weights as in the FNO code) multiplied by
    learned complex matrices, the rest set to zero."""

    def __init__(self, in_channels: int, out_channels: int, modes1: int, modes2: int | None = None, *,
                 init: str = "fno"):
        super().__init__()
        modes2 = modes1 if modes2 is None else modes2
        self.in_channels, self.out_channels, self.modes1, self.modes2 = in_channels, out_channels, modes1, modes2
        self.weight_pos = _complex_init(in_channels, out_channels, modes1, modes2, init=init)
        self.weight_neg = _complex_init(in_channels, out_channels, modes1, modes2, init=init)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h, w = x.shape[-2:]
        k1, k2 = min(self.modes1, h // 2), min(self.modes2, w // 2 + 1)  # rows: k1 positive + k1 negative <= h
        x_ft = torch.fft.rfft2(x, dim=(-2, -1)).to(torch.cfloat)
        out = torch.zeros(x.shape[0], self.out_channels, h, w // 2 + 1, dtype=torch.cfloat, device=x.device)
        if k1 > 0:
            mul = "bixy,ioxy->boxy"
            out[..., :k1, :k2] = torch.einsum(mul, x_ft[..., :k1, :k2], self.weight_pos[..., :k1, :k2])
            out[..., h - k1:, :k2] = torch.einsum(mul, x_ft[..., h - k1:, :k2], self.weight_neg[..., :k1, :k2])
        else:  # a single row: only the zero frequency along it
            out[..., :1, :k2] = torch.einsum("bixy,ioxy->boxy", x_ft[..., :1, :k2], self.weight_pos[..., :1, :k2])
        return torch.fft.irfft2(out, s=(h, w), dim=(-2, -1))

    def extra_repr(self) -> str:
        return f"{self.in_channels}, {self.out_channels}, modes=({self.modes1}, {self.modes2})"


def grid_coordinates(shape: tuple[int, ...], *, endpoint: bool = False, device: torch.device | None = None) -> torch.Tensor:
    """Coordinates (d, *shape) in [0, 1]: ``j / s`` along each axis (``endpoint=True``: ``j / (s - 1)``).

    >>> grid_coordinates((4,))[0].tolist()
    [0.0, 0.25, 0.5, 0.75]
    """
    axes = [torch.arange(s, dtype=torch.float32, device=device) / max(s - 1 if endpoint else s, 1) for s in shape]
    return torch.stack(torch.meshgrid(*axes, indexing="ij"), dim=0)


def _with_grid(x: torch.Tensor, endpoint: bool) -> torch.Tensor:
    g = grid_coordinates(tuple(x.shape[2:]), endpoint=endpoint, device=x.device).to(x.dtype)
    return torch.cat([x, g.expand(x.shape[0], *g.shape)], dim=1)


class _FNO(nn.Module):
    """FNO in ``dim`` dimensions (the module docstring): P, ``layers`` x (W + K, GELU), Q."""

    input_kind = "grid"

    def __init__(self, dim: int, in_channels: int, out_channels: int, modes: int | tuple[int, int], width: int,
                 layers: int, projection: int, padding: float, endpoint: bool, append_grid: bool,
                 spectral_init: str = "fno"):
        super().__init__()
        self.dim, self.in_channels, self.out_channels = dim, in_channels, out_channels
        self.modes, self.width, self.layers = modes, width, layers
        self.padding, self.endpoint, self.append_grid = padding, endpoint, append_grid
        self.lift = nn.Linear(in_channels + (dim if append_grid else 0), width)
        conv = nn.Conv1d if dim == 1 else nn.Conv2d
        if dim == 1:
            self.spectral = nn.ModuleList(SpectralConv1d(width, width, int(modes), init=spectral_init) for _ in range(layers))
        else:
            m1, m2 = (modes, modes) if isinstance(modes, int) else modes
            self.spectral = nn.ModuleList(SpectralConv2d(width, width, m1, m2, init=spectral_init) for _ in range(layers))
        self.pointwise = nn.ModuleList(conv(width, width, 1) for _ in range(layers))  # W: a 1x1 convolution
        self.project = nn.Sequential(nn.Linear(width, projection), nn.GELU(), nn.Linear(projection, out_channels))

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        if a.ndim != self.dim + 2 or a.shape[1] != self.in_channels:
            raise ValueError(f"{type(self).__name__}: expected (B, {self.in_channels}, {', '.join('s' * self.dim)}) input, "
                             f"got {tuple(a.shape)}")
        grid = tuple(a.shape[2:])
        x = _with_grid(a, self.endpoint) if self.append_grid else a
        x = self.lift(x.movedim(1, -1)).movedim(-1, 1)
        pads = [round(self.padding * s) for s in grid]
        if any(pads):
            x = F.pad(x, [p for s in reversed(pads) for p in (0, s)])
        for i, (k, w) in enumerate(zip(self.spectral, self.pointwise, strict=True)):
            x = k(x) + w(x)
            if i < self.layers - 1:
                x = F.gelu(x)
        if any(pads):
            x = x[(..., *(slice(0, s) for s in grid))]
        return self.project(x.movedim(1, -1)).movedim(-1, 1)


class FNO1d(_FNO):
    """The 1D FNO (Li et al. 2021, §4): ``(B, in_channels, s) -> (B, out_channels, s)`` at any ``s``.

    Paper defaults (Burgers): ``modes=16, width=64, layers=4`` (``projection=128``). ``spectral_init="normal"``
    switches the spectral weights to neuraloperator's initialisation (see ``_complex_init``).
    """

    def __init__(self, in_channels: int = 1, out_channels: int = 1, *, modes: int = 16, width: int = 64, layers: int = 4,
                 projection: int = 128, padding: float = 0.0, endpoint: bool = False, append_grid: bool = True,
                 spectral_init: str = "fno"):
        super().__init__(1, in_channels, out_channels, modes, width, layers, projection, padding, endpoint, append_grid,
                         spectral_init)


class FNO2d(_FNO):
    """The 2D FNO (Li et al. 2021, §4): ``(B, in_channels, h, w) -> (B, out_channels, h, w)`` at any grid.

    Paper defaults (Darcy): ``modes=12, width=32, layers=4`` (``projection=128``; the paper's code pads
    non-periodic domains: ``padding=0.1`` is about its 9 cells at 85x85).
    """

    def __init__(self, in_channels: int = 1, out_channels: int = 1, *, modes: int | tuple[int, int] = 12, width: int = 32,
                 layers: int = 4, projection: int = 128, padding: float = 0.0, endpoint: bool = False,
                 append_grid: bool = True, spectral_init: str = "fno"):
        super().__init__(2, in_channels, out_channels, modes, width, layers, projection, padding, endpoint, append_grid,
                         spectral_init)


class _UNet(nn.Module):
    """A small U-Net in ``dim`` dimensions: ``depth`` levels of two 3-wide convolutions with GELU, 2x average
    pooling down, linear interpolation up to the skip's size (so odd grids work), channels doubling per level.

    A plain CNN baseline: its kernels have a fixed width in grid cells, so it is not discretisation-invariant
    (at 2x resolution each kernel sees half the physical length). Grid coordinates are appended to the input
    as the FNO's are. ``circular=True`` pads periodically (Burgers), else with zeros.
    """

    input_kind = "grid"

    def __init__(self, dim: int, in_channels: int, out_channels: int, width: int, depth: int, circular: bool,
                 append_grid: bool):
        super().__init__()
        self.dim, self.in_channels, self.out_channels, self.width, self.depth = dim, in_channels, out_channels, width, depth
        self.append_grid = append_grid
        conv = nn.Conv1d if dim == 1 else nn.Conv2d
        mode = "circular" if circular else "zeros"

        def block(cin: int, cout: int) -> nn.Sequential:
            return nn.Sequential(conv(cin, cout, 3, padding=1, padding_mode=mode), nn.GELU(),
                                 conv(cout, cout, 3, padding=1, padding_mode=mode), nn.GELU())

        chans = [width * 2 ** i for i in range(depth + 1)]
        self.down = nn.ModuleList([block(in_channels + (dim if append_grid else 0), chans[0])]
                                  + [block(chans[i], chans[i + 1]) for i in range(depth)])
        self.up = nn.ModuleList(block(chans[i + 1] + chans[i], chans[i]) for i in reversed(range(depth)))
        self.out = conv(chans[0], out_channels, 1)

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        if a.ndim != self.dim + 2 or a.shape[1] != self.in_channels:
            raise ValueError(f"{type(self).__name__}: expected (B, {self.in_channels}, {', '.join('s' * self.dim)}) input, "
                             f"got {tuple(a.shape)}")
        x = _with_grid(a, False) if self.append_grid else a
        pool = F.avg_pool1d if self.dim == 1 else F.avg_pool2d
        skips = []
        for i, blk in enumerate(self.down):
            if i > 0:
                x = pool(x, 2, ceil_mode=True)
            x = blk(x)
            skips.append(x)
        mode = "linear" if self.dim == 1 else "bilinear"
        for blk, skip in zip(self.up, reversed(skips[:-1]), strict=True):
            x = F.interpolate(x, size=skip.shape[2:], mode=mode, align_corners=False)
            x = blk(torch.cat([x, skip], dim=1))
        return self.out(x)


class UNet1d(_UNet):
    """A small 1D U-Net (:class:`_UNet`): ``(B, in_channels, s) -> (B, out_channels, s)``."""

    def __init__(self, in_channels: int = 1, out_channels: int = 1, *, width: int = 16, depth: int = 3,
                 circular: bool = False, append_grid: bool = True):
        super().__init__(1, in_channels, out_channels, width, depth, circular, append_grid)


class UNet2d(_UNet):
    """A small 2D U-Net (:class:`_UNet`): ``(B, in_channels, h, w) -> (B, out_channels, h, w)``."""

    def __init__(self, in_channels: int = 1, out_channels: int = 1, *, width: int = 16, depth: int = 3,
                 circular: bool = False, append_grid: bool = True):
        super().__init__(2, in_channels, out_channels, width, depth, circular, append_grid)
