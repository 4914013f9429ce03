"""EvoNorm-B0 and EvoNorm-S0, and a tiny pre-activation ResNet for digits that uses them.

Both layers replace a ``BatchNorm2d -> ReLU`` pair on ``(B, C, H, W)`` feature maps. Their
statistics are taken over the axes the paper names, so they need the channels-first layout (the
core's ``DigitsCNN`` applies its norm channels-last, one position at a time, which has no batch or
group statistics; hence the network below). Every norm-activation layer of the network is
swappable, so BN-ReLU, GN-ReLU, B0 and S0 are compared in one architecture with the same
convolutions and the same initial weights for a given seed.

    >>> import torch
    >>> net = tiny_resnet(norm_act="evonorm_s0")
    >>> net(torch.rand(4, 1, 8, 8)).shape
    torch.Size([4, 10])
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import torch
from torch import nn
from torch.nn import functional as F

__all__ = ["EvoNormB0", "EvoNormS0", "NORM_ACTS", "norm_act_layer", "TinyPreActResNet", "tiny_resnet",
           "tinyresnet_evonorm_b0", "tinyresnet_evonorm_s0", "tinyresnet_bn_relu", "tinyresnet_gn_relu"]

EPS = 1e-5  # the epsilon inside every square root (BatchNorm's default)
# Groups of S0 and of the GN-ReLU baseline. The paper uses 32 groups at ResNet widths (64..2048 channels,
# so 2+ channels per group); with our widths 8/16/32, 4 groups give the same 2..8 channels per group.
GROUPS = 4
WIDTHS = (8, 16, 32)
MOMENTUM = 0.1  # running-average rate of B0's batch variance (BatchNorm2d's default)


def _affine(c: int) -> tuple[nn.Parameter, nn.Parameter, nn.Parameter]:
    """``v1``, ``gamma`` (ones) and ``beta`` (zeros), each of shape ``(1, C, 1, 1)``."""
    shape = (1, c, 1, 1)
    return nn.Parameter(torch.ones(shape)), nn.Parameter(torch.ones(shape)), nn.Parameter(torch.zeros(shape))


# Liu, Brock, Simonyan & Le 2020, "Evolving Normalization-Activation Layers" (arXiv:2004.02967),
# Table 1, EvoNorm-B0:  y = x / max(sqrt(s2_{b,w,h}(x) + eps), v1 * x + sqrt(s2_{w,h}(x) + eps)) * gamma + beta,
# where s2_{b,w,h} is the per-channel variance over the batch and space (a moving average of it at
# inference, as for BatchNorm) and s2_{w,h} the per-sample, per-channel variance over space.
class EvoNormB0(nn.Module):
    """EvoNorm-B0: batch-dependent; no centering and no explicit activation function.

    Args:
        num_features: channels ``C`` of the ``(B, C, H, W)`` input.
        eps: added to each variance before the square root.
        momentum: rate of the running average of the batch variance used in eval mode.
    """

    def __init__(self, num_features: int, eps: float = EPS, momentum: float = MOMENTUM):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.v1, self.weight, self.bias = _affine(num_features)
        self.register_buffer("running_var", torch.ones(1, num_features, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.training:
            batch_var = x.var(dim=(0, 2, 3), unbiased=False, keepdim=True)
            with torch.no_grad():
                n = x.numel() / x.shape[1]
                unbiased = batch_var * (n / max(n - 1, 1))  # BatchNorm's convention for the running value
                self.running_var.lerp_(unbiased, self.momentum)
        else:
            batch_var = self.running_var
        instance_var = x.var(dim=(2, 3), unbiased=False, keepdim=True)
        den = torch.maximum((batch_var + self.eps).sqrt(), self.v1 * x + (instance_var + self.eps).sqrt())
        return x / den * self.weight + self.bias

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


def group_std(x: torch.Tensor, groups: int, eps: float = EPS) -> torch.Tensor:
    """``sqrt(s2_{w,h,c/g}(x) + eps)``: per sample, the std over each group of ``C/groups`` channels
    and all positions, broadcast back to ``x``'s shape."""
    b, c, h, w = x.shape
    var = x.reshape(b, groups, c // groups, h, w).var(dim=(2, 3, 4), unbiased=False, keepdim=True)
    return (var + eps).sqrt().expand(b, groups, c // groups, h, w).reshape(b, c, h, w)


# Same paper, Table 1, EvoNorm-S0:  y = x * sigmoid(v1 * x) / sqrt(s2_{w,h,c/g}(x) + eps) * gamma + beta.
class EvoNormS0(nn.Module):
    """EvoNorm-S0: batch-independent (group statistics per sample), a Swish-like numerator.

    Args:
        num_features: channels ``C`` (a multiple of ``groups``).
        groups: channel groups of the variance (as in GroupNorm).
        eps: added to the variance before the square root.
    """

    def __init__(self, num_features: int, groups: int = GROUPS, eps: float = EPS):
        super().__init__()
        if num_features % groups:
            raise ValueError(f"EvoNormS0: num_features {num_features} is not a multiple of groups {groups}")
        self.num_features, self.groups, self.eps = num_features, groups, eps
        self.v1, self.weight, self.bias = _affine(num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(self.v1 * x) / group_std(x, self.groups, self.eps) * self.weight + self.bias

    def extra_repr(self) -> str:
        return f"{self.num_features}, groups={self.groups}, eps={self.eps}"


def _bn_relu(c: int) -> nn.Module:
    return nn.Sequential(nn.BatchNorm2d(c, eps=EPS, momentum=MOMENTUM), nn.ReLU())


def _gn_relu(c: int, groups: int = GROUPS) -> nn.Module:
    return nn.Sequential(nn.GroupNorm(groups, c, eps=EPS), nn.ReLU())


NORM_ACTS = ("bn_relu", "gn_relu", "evonorm_b0", "evonorm_s0")


def norm_act_layer(name: str, groups: int = GROUPS) -> Callable[[int], nn.Module]:
    """The ``channels -> module`` constructor of a norm-activation layer by name (one of ``NORM_ACTS``).

    ``groups`` applies to the group-statistics layers (GN-ReLU and EvoNorm-S0).

    >>> norm_act_layer("evonorm_s0", groups=2)(8)
    EvoNormS0(8, groups=2, eps=1e-05)
    """
    if name == "bn_relu":
        return _bn_relu
    if name == "gn_relu":
        return functools.partial(_gn_relu, groups=groups)
    if name == "evonorm_b0":
        return EvoNormB0
    if name == "evonorm_s0":
        return functools.partial(EvoNormS0, groups=groups)
    raise ValueError(f"unknown norm_act {name!r}; choose from {', '.join(NORM_ACTS)}")


class PreActBlock(nn.Module):
    """He et al. 2016 pre-activation block: normact -> conv3x3 -> normact -> conv3x3, plus shortcut."""

    def __init__(self, c_in: int, c_out: int, stride: int, norm_act: Callable[[int], nn.Module]):
        super().__init__()
        self.na1 = norm_act(c_in)
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
        self.na2 = norm_act(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, bias=False)
        self.shortcut = (nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False)
                         if stride != 1 or c_in != c_out else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.na1(x)
        skip = x if self.shortcut is None else self.shortcut(h)
        return skip + self.conv2(self.na2(self.conv1(h)))


class TinyPreActResNet(nn.Module):
    """Digits upsampled to ``img_size`` -> conv stem -> one pre-activation block per stage -> normact -> pool -> linear.

    Every normalization is followed by an activation in a pre-activation ResNet, so each
    BN-ReLU pair maps to exactly one norm-activation layer (BN-ReLU, GN-ReLU, B0 or S0).
    """

    reference_backbone = "cnn"

    def __init__(self, num_classes: int = 10, in_chans: int = 1, img_size: int = 16,
                 widths: tuple[int, ...] = WIDTHS, norm_act: str = "evonorm_s0", groups: int = GROUPS):
        super().__init__()
        layer = norm_act_layer(norm_act, groups)
        self.img_size = img_size
        self.stem = nn.Conv2d(in_chans, widths[0], 3, padding=1, bias=False)
        blocks, c = [], widths[0]
        for i, w in enumerate(widths):
            blocks.append(PreActBlock(c, w, 1 if i == 0 else 2, layer))
            c = w
        self.blocks = nn.Sequential(*blocks)
        self.final = layer(c)
        self.head = nn.Linear(c, num_classes)
        self.num_features = c

    def forward_features(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] != self.img_size:
            x = F.interpolate(x, size=(self.img_size, self.img_size), mode="bilinear", align_corners=False)
        return self.final(self.blocks(self.stem(x))).mean(dim=(2, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.forward_features(x))


def tiny_resnet(num_classes: int = 10, in_chans: int = 1, img_size: int = 16, widths: tuple[int, ...] = WIDTHS,
                norm_act: str = "evonorm_s0", groups: int = GROUPS) -> TinyPreActResNet:
    """The tiny pre-activation ResNet (digits upsampled to 16x16) with ``norm_act`` everywhere."""
    return TinyPreActResNet(num_classes, in_chans, img_size, tuple(widths), norm_act, groups)


def _builder(norm_act: str, doc: str) -> Callable[..., TinyPreActResNet]:
    def build(num_classes: int = 10, in_chans: int = 1, img_size: int = 16, widths: tuple[int, ...] = WIDTHS,
              groups: int = GROUPS) -> TinyPreActResNet:
        return tiny_resnet(num_classes, in_chans, img_size, widths, norm_act, groups)

    build.__name__ = build.__qualname__ = f"tinyresnet_{norm_act}"
    build.__doc__ = doc
    return build


tinyresnet_evonorm_b0 = _builder("evonorm_b0", "Tiny pre-activation ResNet with every BN-ReLU replaced by EvoNorm-B0.")
tinyresnet_evonorm_s0 = _builder("evonorm_s0", "Tiny pre-activation ResNet with every BN-ReLU replaced by EvoNorm-S0.")
tinyresnet_bn_relu = _builder("bn_relu", "Tiny pre-activation ResNet with BatchNorm2d + ReLU (the BN-ReLU baseline).")
tinyresnet_gn_relu = _builder("gn_relu", "Tiny pre-activation ResNet with GroupNorm + ReLU (the GN-ReLU baseline).")
