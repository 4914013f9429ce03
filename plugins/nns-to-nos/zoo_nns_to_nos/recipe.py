"""The NNs-to-NOs recipe: the layers that turn a grid network into a discretisation-agnostic neural operator.

Berner et al. 2025 ("Principled approaches for extending neural architectures to function spaces"; the recipe as
the authors' code implements it for the U-Net, ``models/unet_kernel_interp.py``) read every layer of a network
as an operator on functions and replace the layers tied to one grid:

- a convolution with a fixed stencil of ``k`` pixels shrinks physically when the grid is refined. The recipe
  keeps its kernel fixed *in physical space*: the stencil is the kernel sampled on the training grid; on a grid
  ``s`` times finer the kernel is interpolated to the finer spacing and weighted by the quadrature weight ``1/s``
  per axis, so the layer computes the same integral ``int k(x - y) v(y) dy`` at any resolution
  (:class:`KernelInterpConv`, :func:`kernel_taps`);
- pooling and upsampling by pixels become resampling of the function to the coarser or finer grid:
  band-limited Fourier interpolation (:func:`fourier_resample`, periodic functions) or linear interpolation
  between the grid points (:func:`linear_resample`, the authors' bilinear option);
- pointwise layers (1x1 convolutions, activations, residual sums, channel concatenation) need no change.

:class:`zoo_nns_to_nos.model.OperatorUNet` applies them to the ``operator_learn`` task's U-Net.

>>> import torch
>>> conv = torch.nn.Conv1d(1, 1, 3, padding=1, bias=False)
>>> _ = conv.weight.data.copy_(torch.tensor([[[-32.0, 0.0, 32.0]]]))  # central difference at h = 1/64
>>> op = KernelInterpConv(conv, GridScale(1))
>>> x = lambda n: torch.sin(2 * torch.pi * torch.arange(n) / n).reshape(1, 1, n)
>>> torch.equal(op(x(64)), conv(x(64)))  # the original layer on its training grid
True
>>> op.scale.value = (4.0,)  # a grid 4x finer: the same physical kernel
>>> round(op(x(256)).abs().max().item(), 1), round(conv(x(256)).abs().max().item(), 1)  # 2*pi vs a quarter of it
(6.3, 1.6)
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["fourier_resample", "linear_resample", "GridScale", "kernel_taps", "KernelInterpConv"]


def _resample_axis(x: torch.Tensor, size: int, dim: int) -> torch.Tensor:
    """Band-limited interpolation of ``x`` along ``dim`` (periodic samples) to ``size`` points."""
    n = x.shape[dim]
    if n == size:
        return x
    spec = torch.fft.rfft(x, dim=dim, norm="forward")
    keep = min(n, size) // 2 + 1
    out_shape = list(spec.shape)
    out_shape[dim] = size // 2 + 1
    out = spec.new_zeros(out_shape)
    idx = [slice(None)] * x.dim()
    idx[dim] = slice(0, keep)
    out[tuple(idx)] = spec[tuple(idx)]
    # the Nyquist bin of an even grid holds the +N/2 and -N/2 modes at once: split it when refining, fold it
    # (real part, twice) when coarsening, so that coarse -> fine -> coarse is the identity
    if size > n and n % 2 == 0:
        idx[dim] = n // 2
        out[tuple(idx)] = out[tuple(idx)] * 0.5
    elif size < n and size % 2 == 0:
        idx[dim] = size // 2
        out[tuple(idx)] = 2 * out[tuple(idx)].real.to(out.dtype)
    return torch.fft.irfft(out, n=size, dim=dim, norm="forward")


def fourier_resample(x: torch.Tensor, size: int | Sequence[int]) -> torch.Tensor:
    """Resample ``x`` (B, C, *grid) to ``size`` by zero-padding or truncating its Fourier series.

    Exact for functions band-limited below both grids' Nyquist frequencies; coarse -> fine -> coarse is the
    identity.

    >>> x = torch.cos(2 * torch.pi * 3 * torch.arange(16) / 16).reshape(1, 1, 16)
    >>> y = fourier_resample(x, 32)
    >>> torch.allclose(y[..., ::2], x, atol=1e-6)
    True
    """
    dims = x.dim() - 2
    sizes = [size] * dims if isinstance(size, int) else list(size)
    if len(sizes) != dims:
        raise ValueError(f"fourier_resample: {len(sizes)} sizes for a {dims}-D grid (x has shape {tuple(x.shape)})")
    for axis, s in enumerate(sizes):
        x = _resample_axis(x, int(s), dim=2 + axis)
    return x


def _linear_axis(x: torch.Tensor, size: int, dim: int, periodic: bool) -> torch.Tensor:
    n = x.shape[dim]
    if n == size:
        return x
    pos = torch.arange(size, dtype=torch.float64) * (n / size)  # the target point i/size in source pixels
    left = pos.floor().long()
    frac = (pos - left).to(x.dtype).to(x.device)
    right = (left + 1) % n if periodic else (left + 1).clamp(max=n - 1)
    shape = [1] * x.dim()
    shape[dim] = size
    a = x.index_select(dim, left.to(x.device))
    b = x.index_select(dim, right.to(x.device))
    return a + (b - a) * frac.reshape(shape)


def linear_resample(x: torch.Tensor, size: int | Sequence[int], *, periodic: bool = False) -> torch.Tensor:
    """Resample ``x`` (B, C, *grid) to ``size`` by (multi)linear interpolation between the grid points ``j / n``.

    The points are those of the task's grids (``j / n``, ``j < n``), so halving an even grid keeps every
    other point exactly and doubling it keeps the old points; past the last point the value wraps around
    (``periodic``) or is held constant. The resampling for non-periodic functions, where the Fourier series
    of :func:`fourier_resample` would ring at the boundary.

    >>> x = torch.arange(8.).reshape(1, 1, 8)
    >>> linear_resample(x, 4).flatten().tolist(), linear_resample(x, 16).flatten().tolist()[:4]
    ([0.0, 2.0, 4.0, 6.0], [0.0, 0.5, 1.0, 1.5])
    """
    dims = x.dim() - 2
    sizes = [size] * dims if isinstance(size, int) else list(size)
    for axis, s in enumerate(sizes):
        x = _linear_axis(x, int(s), 2 + axis, periodic)
    return x


class GridScale:
    """The ratio (per axis) of the current input grid to the training grid, shared by one operator's layers."""

    def __init__(self, dims: int) -> None:
        self.value: tuple[float, ...] = (1.0,) * dims

    def __repr__(self) -> str:
        return f"GridScale({self.value})"


def kernel_taps(k: int, scale: float, *, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The (taps, k) matrix that resamples a ``k``-point stencil to a grid ``scale`` times finer.

    The stencil's entries are the values of a continuous, piecewise-linear kernel at the training grid's
    offsets ``j - (k-1)/2`` (in training pixels), falling to 0 one pixel beyond the outermost entry. On a
    grid with spacing ``1/scale`` training pixels the kernel is sampled at every offset strictly inside
    that support and weighted by the quadrature weight ``1/scale``. ``scale=1`` gives the identity.

    >>> kernel_taps(3, 1.0)
    tensor([[1., 0., 0.],
            [0., 1., 0.],
            [0., 0., 1.]])
    >>> kernel_taps(3, 2.0).sum(0)  # each stencil entry is spread over the finer taps, total weight kept
    tensor([1., 1., 1.])
    """
    if k % 2 == 0:
        raise ValueError(f"kernel_taps: the recipe centres the stencil on the output point, so k must be odd (got {k})")
    half = (k - 1) / 2 + 1  # support radius in training pixels
    r = math.ceil(half * scale) - 1
    t = torch.arange(-r, r + 1, dtype=torch.float64) / scale
    centres = torch.arange(k, dtype=torch.float64) - (k - 1) / 2
    taps = (1 - (t[:, None] - centres[None, :]).abs()).clamp(min=0) / scale
    return taps.to(dtype)


class KernelInterpConv(nn.Module):
    """A convolution whose kernel lives in physical space: the recipe's kernel interpolation.

    Holds the original layer's ``weight`` and ``bias`` unchanged. At the training resolution it is the
    original convolution; on a grid ``s`` times finer (per axis) the stencil is resampled by
    :func:`kernel_taps` and the padding grows with it, so the output is the same integral operator
    evaluated on the new grid. A strided layer keeps its stride in pixels of the current grid (the output
    grid scales with the input), as in the authors' conversion.
    """

    def __init__(self, conv: nn.Conv1d | nn.Conv2d, scale: GridScale) -> None:
        super().__init__()
        self.dims = 1 if isinstance(conv, nn.Conv1d) else 2
        if any(d != 1 for d in conv.dilation):
            raise ValueError(f"KernelInterpConv: dilated convolutions are not converted (dilation {conv.dilation})")
        if isinstance(conv.padding, str):
            raise ValueError("KernelInterpConv: give the original convolution integer padding, not "
                             f"padding={conv.padding!r}")
        self.weight = conv.weight
        self.bias = conv.bias
        self.kernel_size, self.stride, self.padding = tuple(conv.kernel_size), tuple(conv.stride), tuple(conv.padding)
        self.groups, self.padding_mode = conv.groups, conv.padding_mode
        self.scale = scale

    def extra_repr(self) -> str:
        return (f"{self.weight.shape[1] * self.groups}, {self.weight.shape[0]}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding} (at the training grid), padding_mode={self.padding_mode}")

    def resampled(self) -> tuple[torch.Tensor, tuple[int, ...]]:
        """The stencil and padding for the current grid."""
        w, pads = self.weight, []
        for axis, (k, s, p) in enumerate(zip(self.kernel_size, self.scale.value, self.padding, strict=True)):
            if s == 1.0 or k == 1:
                pads.append(p)
                continue
            taps = kernel_taps(k, s, dtype=w.dtype).to(w.device)
            w = torch.movedim(torch.movedim(w, 2 + axis, -1) @ taps.T, -1, 2 + axis)
            # the original pads by p pixels around a k-point stencil; keep the same overhang in physical length
            pads.append((taps.shape[0] - 1) // 2 - round(((k - 1) // 2 - p) * s))
        return w, tuple(pads)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w, pads = self.resampled()
        conv = F.conv1d if self.dims == 1 else F.conv2d
        if self.padding_mode != "zeros":
            x = F.pad(x, [q for p in reversed(pads) for q in (p, p)], mode=self.padding_mode)
            pads = (0,) * self.dims
        return conv(x, w, self.bias, self.stride, pads, 1, self.groups)
