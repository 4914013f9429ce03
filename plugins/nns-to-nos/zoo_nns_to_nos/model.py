"""Builders for the OPERATOR family's FNOs and the NNs-to-NOs U-Net conversion (Berner et al. 2025).

* ``fno_1d`` / ``fno_2d``: the Fourier neural operator of Li et al. 2021, the recipe's reference example of a
  network built from operators (spectral convolutions, pointwise layers). Thin builders over
  :class:`zoo_nn.operators.FNO1d` / ``FNO2d``; ``preset="paper"`` gives the FNO paper's sizes (1D Burgers:
  modes 16, width 64, 4 layers; 2D Darcy: modes 12, width 32, 4 layers), the default ``"cpu"`` preset the
  ``operator_learn`` task's baseline sizes (1D: modes 16, width 32; 2D: modes 8, width 24).
* ``unet_operator_1d`` / ``unet_operator_2d``: the task's U-Net (:class:`zoo_nn.operators.UNet1d` / ``UNet2d``)
  converted by the paper's recipe (:mod:`zoo_nns_to_nos.recipe`): every 3-point convolution becomes a
  kernel fixed in physical space (interpolated and quadrature-weighted on finer grids), the 2x average pooling
  becomes resampling to half the grid, the linear upsampling resampling to the skip's grid (Fourier for a periodic,
  circular-padded U-Net; linear interpolation between grid points otherwise, the authors' bilinear option).
  Same modules, same parameters (the original U-Net's ``state_dict`` loads into ``model.unet``), so the two
  are compared at exactly matched parameter counts.

Deviations from the paper (whose experiments are on 2D Navier-Stokes with a PDE-Arena U-Net, kernel size 9,
trained at 128x128 for 300 epochs on a GPU): the U-Net is the task's small one (3-point kernels, average
pooling, width 16 by default); the kernel is interpolated linearly with an explicit zero at one pixel beyond
the stencil (the authors' code resizes the stencil bilinearly and divides by the ratio of stencil sizes) so
that the stencil at the training grid is the kernel's exact sampling and its total weight is kept; only the
U-Net is converted here: the continuum ViT / OFormer conversions of the paper are not implemented. The paper's
full text was not read for this plugin: the recipe comes from its abstract, the catalog entry and the authors'
code (``models/unet_kernel_interp.py``, ``configs/unet_kernel_interp.yaml`` in neuraloperator/NNs-to-NOs).

Pretrained weights are stored as real tensors (complex spectral weights as their real and imaginary parts)
and, with ``weights_dtype="float16"``, in half precision; compute is always float32.

>>> import torch
>>> net = unet_operator_1d(width=4, base_res=64)
>>> [tuple(net(torch.zeros(1, 1, n)).shape) for n in (64, 128, 256)]
[(1, 1, 64), (1, 1, 128), (1, 1, 256)]
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn

from zoo_nn.operators import FNO1d, FNO2d, UNet1d, UNet2d, grid_coordinates

from .recipe import GridScale, KernelInterpConv, fourier_resample, linear_resample

__all__ = ["fno_1d", "fno_2d", "unet_operator_1d", "unet_operator_2d", "OperatorUNet", "convert_unet", "PRESETS",
           "store_weights_as"]

PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "fno_1d": {"cpu": {"modes": 16, "width": 32, "layers": 4}, "paper": {"modes": 16, "width": 64, "layers": 4}},
    "fno_2d": {"cpu": {"modes": 8, "width": 24, "layers": 4}, "paper": {"modes": 12, "width": 32, "layers": 4}},
}
BASE_RES = {1: 64, 2: 32}
RESAMPLE = ("fourier", "linear")  # operator_learn's training grids: Burgers 64, Darcy 32x32
WEIGHTS_DTYPES = ("float32", "float16")


def _preset(name: str, preset: str) -> dict[str, Any]:
    if preset not in PRESETS[name]:
        raise ValueError(f"{name}: unknown preset {preset!r}; choose one of {sorted(PRESETS[name])}")
    return dict(PRESETS[name][preset])


def store_weights_as(model: nn.Module, dtype: str = "float32") -> nn.Module:
    """Make ``model.state_dict()`` hold real tensors of ``dtype`` (complex ones as (..., 2) real/imag pairs) and
    ``load_state_dict`` accept them back into the model's own dtypes.

    zoo's safetensors reader knows no complex dtype, and the half-precision snapshot of a pretrained tag is
    loaded without ``cast_weights``: both only change how the weights are *stored*; the module computes in
    float32.
    """
    if dtype not in WEIGHTS_DTYPES:
        raise ValueError(f"weights_dtype must be one of {WEIGHTS_DTYPES}, got {dtype!r}")
    store = getattr(torch, dtype)

    def to_storage(module: nn.Module, state: dict, prefix: str, local_metadata: dict) -> None:
        for k, v in state.items():
            if v.is_complex():
                v = torch.view_as_real(v)
            state[k] = v.to(store) if v.is_floating_point() else v

    def from_storage(state: dict, prefix: str, *args: Any) -> None:
        own = dict(model.named_parameters())
        own.update(model.named_buffers())
        for name, t in own.items():
            k = prefix + name
            if k not in state:
                continue
            v = state[k]
            if t.is_complex() and not v.is_complex():
                v = torch.view_as_complex(v.to(torch.float32).contiguous())
            state[k] = v.to(t.dtype)

    model._register_state_dict_hook(to_storage)
    model._register_load_state_dict_pre_hook(from_storage)
    model.weights_dtype = dtype
    return model


def fno_1d(in_channels: int = 1, out_channels: int = 1, *, preset: str = "cpu", weights_dtype: str = "float32",
           **overrides: Any) -> FNO1d:
    """The 1D FNO (:class:`zoo_nn.operators.FNO1d`): ``(B, C_in, s) -> (B, C_out, s)`` at any ``s``.

    ``preset``: ``"cpu"`` (modes 16, width 32, 4 layers) or ``"paper"`` (modes 16, width 64, 4 layers);
    keyword overrides (``modes``, ``width``, ``layers``, ``projection``, ``padding``, ``endpoint``,
    ``spectral_init``) win.

    >>> import torch
    >>> fno_1d(preset="paper").width, fno_1d()(torch.zeros(2, 1, 128)).shape
    (64, torch.Size([2, 1, 128]))
    """
    kw = {**_preset("fno_1d", preset), **overrides}
    return store_weights_as(FNO1d(in_channels, out_channels, **kw), weights_dtype)


def fno_2d(in_channels: int = 1, out_channels: int = 1, *, preset: str = "cpu", weights_dtype: str = "float32",
           **overrides: Any) -> FNO2d:
    """The 2D FNO (:class:`zoo_nn.operators.FNO2d`): ``(B, C_in, h, w) -> (B, C_out, h, w)`` at any grid.

    ``preset``: ``"cpu"`` (modes 8, width 24, 4 layers) or ``"paper"`` (modes 12, width 32, 4 layers).

    >>> import torch
    >>> fno_2d(preset="paper").modes, fno_2d()(torch.zeros(1, 1, 32, 32)).shape
    (12, torch.Size([1, 1, 32, 32]))
    """
    kw = {**_preset("fno_2d", preset), **overrides}
    net = FNO2d(in_channels, out_channels, **kw)
    net.problem = "darcy"  # operator_learn's default problem for this model (its only 2D grid problems are Darcy's)
    return store_weights_as(net, weights_dtype)


class OperatorUNet(nn.Module):
    """A :class:`zoo_nn.operators.UNet1d` / ``UNet2d`` converted by the NNs-to-NOs recipe (see the module docstring).

    ``unet`` is the original network (its modules and parameters are kept; its convolutions are swapped for
    :class:`~zoo_nns_to_nos.recipe.KernelInterpConv` holding the same weights); ``base_res`` is the grid
    (points per axis) on which its stencils are the kernel's samples. ``forward`` is the U-Net's forward
    with pooling and upsampling replaced by Fourier resampling.
    """

    input_kind = "grid"

    def __init__(self, unet: UNet1d | UNet2d, base_res: int, resample: str | None = None) -> None:
        super().__init__()
        periodic = any(getattr(m, "padding_mode", "zeros") == "circular" for m in unet.modules())
        resample = ("fourier" if periodic else "linear") if resample is None else resample
        if resample not in RESAMPLE:
            raise ValueError(f"{type(self).__name__}: resample must be one of {RESAMPLE}, got {resample!r}")
        self.dim, self.base_res, self.resample, self.periodic = unet.dim, int(base_res), resample, periodic
        self.in_channels, self.out_channels = unet.in_channels, unet.out_channels
        self._scale = GridScale(self.dim)
        conv = nn.Conv1d if self.dim == 1 else nn.Conv2d
        for module in list(unet.modules()):
            for name, child in list(module.named_children()):
                if isinstance(child, conv):
                    setattr(module, name, KernelInterpConv(child, self._scale))
        self.unet = unet

    def extra_repr(self) -> str:
        return f"base_res={self.base_res}, resample={self.resample!r}"

    def _resample(self, x: torch.Tensor, size: list[int]) -> torch.Tensor:
        if self.resample == "fourier":
            return fourier_resample(x, size)
        return linear_resample(x, size, periodic=self.periodic)

    def forward(self, a: torch.Tensor) -> torch.Tensor:
        u = self.unet
        if a.ndim != self.dim + 2 or a.shape[1] != self.in_channels:
            raise ValueError(f"{type(self).__name__}: expected (B, {self.in_channels}, {', '.join('s' * self.dim)}) "
                             f"input, got {tuple(a.shape)}")
        self._scale.value = tuple(n / self.base_res for n in a.shape[2:])
        x = a
        if u.append_grid:
            g = grid_coordinates(tuple(a.shape[2:]), device=a.device).to(a.dtype)
            x = torch.cat([a, g.expand(a.shape[0], *g.shape)], dim=1)
        skips = []
        for i, blk in enumerate(u.down):
            if i > 0:  # the original's 2x average pooling: resample the function to half the grid
                x = self._resample(x, [(n + 1) // 2 for n in x.shape[2:]])
            x = blk(x)
            skips.append(x)
        for blk, skip in zip(u.up, reversed(skips[:-1]), strict=True):
            x = self._resample(x, list(skip.shape[2:]))  # the original's linear upsampling to the skip's grid
            x = blk(torch.cat([x, skip], dim=1))
        return u.out(x)


def _unet_operator(cls: type, in_channels: int, out_channels: int, width: int, depth: int, circular: bool,
                   base_res: int | None, resample: str | None, weights_dtype: str) -> OperatorUNet:
    unet = cls(in_channels, out_channels, width=width, depth=depth, circular=circular)
    op = OperatorUNet(unet, BASE_RES[unet.dim] if base_res is None else base_res, resample)
    if unet.dim == 2:
        op.problem = "darcy"  # operator_learn's default problem for this model
    return store_weights_as(op, weights_dtype)


def unet_operator_1d(in_channels: int = 1, out_channels: int = 1, *, width: int = 16, depth: int = 3,
                     circular: bool = False, base_res: int | None = None, resample: str | None = None,
                     weights_dtype: str = "float32") -> OperatorUNet:
    """The task's 1D U-Net converted to a neural operator; ``base_res`` (default 64, Burgers) is its training grid."""
    return _unet_operator(UNet1d, in_channels, out_channels, width, depth, circular, base_res, resample, weights_dtype)


def unet_operator_2d(in_channels: int = 1, out_channels: int = 1, *, width: int = 16, depth: int = 3,
                     circular: bool = False, base_res: int | None = None, resample: str | None = None,
                     weights_dtype: str = "float32") -> OperatorUNet:
    """The task's 2D U-Net converted to a neural operator; ``base_res`` (default 32, Darcy) is its training grid."""
    return _unet_operator(UNet2d, in_channels, out_channels, width, depth, circular, base_res, resample, weights_dtype)


def convert_unet(unet: UNet1d | UNet2d, base_res: int, resample: str | None = None) -> OperatorUNet:
    """Convert a built (e.g. the task's ``build_baseline("unet")``) U-Net in place: same parameters, same count.

    ``resample``: ``"fourier"`` (the default for a periodic, circular-padded U-Net) or ``"linear"`` (the default
    otherwise: interpolation between grid points, as the authors' bilinear option, free of Gibbs ringing at a
    non-periodic boundary).
    """
    return OperatorUNet(unet, base_res, resample)
