"""The reference DigitsMLP with one catalogued activation as its ``act_layer``.

    >>> import torch
    >>> net = act_mlp("serf")
    >>> net(torch.rand(3, 1, 8, 8)).shape
    torch.Size([3, 10])
"""
from __future__ import annotations

from zoo_nn.backbones import DigitsMLP

from .layers import get


def act_mlp(activation: str = "relu", num_classes: int = 10, in_chans: int = 1, img_size: int = 8,
            hidden: int = 128, depth: int = 2) -> DigitsMLP:
    """``zoo_nn.backbones.DigitsMLP`` (LayerNorm, ``depth`` hidden layers) with ``act_layer=get(activation)``."""
    return DigitsMLP(num_classes=num_classes, in_chans=in_chans, img_size=img_size, hidden=hidden, depth=depth,
                     act_layer=get(activation))
