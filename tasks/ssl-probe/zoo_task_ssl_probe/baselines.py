"""``ssl_probe``'s reference encoders and baselines (images and series; the Pong mode's are in ``pong.py``).

Reference encoders (``ConvEncoder``): a small BatchNorm CNN, 2-D for images and 1-D for series, four conv blocks
(conv -> BN -> ReLU; channels w, 2w, 4w, 4w; strides 1, 2, 2, 1; kernels 3x3, or 7, 5, 5, 3 for series) and a
global average pool: features of size 4w for any input size (28x28, 8x8, any series length). BatchNorm as in the
ResNets of the SSL literature; zoo_nn's ``DigitsCNN`` is LayerNorm-only and twice as costly at 28x28.

Baselines (``BASELINES``):

- ``supervised``: the reference encoder plus a linear head trained by cross-entropy on the probe-training labels
  (one augmented view per step), for the same steps and batch as the model's pretraining; the head is dropped and
  its features probed like the model's.
- ``random_init``: the same encoder untrained (its features at initialisation).
- ``raw``: the inputs themselves, flattened, as features (no parameters).
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

BASELINES = ("supervised", "random_init", "raw")
DEFAULT_WIDTH = 16


class ConvEncoder(nn.Module):
    """The task's reference encoder: ``encode(x) -> (B, 4 * width)``; images (B, C, H, W) for ``dims=2``, series
    (B, L) or (B, C, L) for ``dims=1``.

    >>> ConvEncoder(width=4).encode(torch.zeros(2, 1, 28, 28)).shape
    torch.Size([2, 16])
    """

    def __init__(self, width: int = DEFAULT_WIDTH, in_chans: int = 1, dims: int = 2):
        super().__init__()
        if dims not in (1, 2):
            raise ValueError(f"ConvEncoder: dims={dims!r}; choose 1 (series) or 2 (images)")
        conv, bn = (nn.Conv2d, nn.BatchNorm2d) if dims == 2 else (nn.Conv1d, nn.BatchNorm1d)
        kernels = (3, 3, 3, 3) if dims == 2 else (7, 5, 5, 3)
        chans = (width, 2 * width, 4 * width, 4 * width)
        layers: list[nn.Module] = []
        c_in = in_chans
        for c, k, s in zip(chans, kernels, (1, 2, 2, 1), strict=True):
            layers += [conv(c_in, c, k, stride=s, padding=k // 2, bias=False), bn(c), nn.ReLU(inplace=True)]
            c_in = c
        self.body = nn.Sequential(*layers)
        self.dims, self.num_features = dims, c_in
        self.ssl_input = "image" if dims == 2 else "series"

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        if self.dims == 1 and x.ndim == 2:
            x = x.unsqueeze(1)
        h = self.body(x)
        return h.flatten(2).mean(-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encode(x)


class Supervised(nn.Module):
    """The ``supervised`` baseline: ``encoder`` + a linear head; ``ssl_loss(x, y)`` is cross-entropy (the task passes
    one augmented view and its labels, ``uses_labels``); ``encode`` gives the encoder's features."""

    ssl_views = 1
    uses_labels = True

    def __init__(self, encoder: ConvEncoder, n_classes: int = 10):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Linear(encoder.num_features, n_classes)
        self.ssl_input = encoder.ssl_input

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder.encode(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encode(x)

    def ssl_loss(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.head(self.encoder.encode(x)), y)


class Raw(nn.Module):
    """The ``raw`` baseline: the flattened input is the feature vector (no parameters, nothing to train)."""

    ssl_views = 0  # nothing to pretrain

    def __init__(self, kind: str = "image"):
        super().__init__()
        self.ssl_input = kind

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1).float()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encode(x)


class RandomInit(nn.Module):
    """``random_init``: the reference encoder, never trained (``ssl_views = 0``)."""

    ssl_views = 0

    def __init__(self, encoder: ConvEncoder):
        super().__init__()
        self.encoder = encoder
        self.ssl_input = encoder.ssl_input

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.encoder.encode(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.encode(x)


def encoder_for(kind: str, width: int = DEFAULT_WIDTH) -> ConvEncoder:
    """The reference encoder for inputs of ``kind`` ("image" or "series")."""
    if kind not in ("image", "series"):
        raise ValueError(f"ssl_probe: input kind {kind!r}; choose from ['image', 'series']")
    return ConvEncoder(width=width, dims=2 if kind == "image" else 1)


def build_baseline(name: str, *, params: int | None = None, seed: int = 0, mode: str = "fashion_mnist",
                   n_classes: int | None = None, **options) -> nn.Module:
    """Baseline ``name`` (``BASELINES``) for ``mode``, seeded. ``params`` sizes the reference encoder of ``supervised``
    and ``random_init`` (``zoo.task.match_width`` over its width; the head is not counted); ``width=`` sets it
    directly. ``mode="pong"`` asks ``pong.build_baseline``.

    >>> from zoo.task import count_params
    >>> count_params(build_baseline("random_init", params=30_000).encoder)
    28655
    """
    from .task import MODES, mode_kind

    if mode not in MODES:
        raise ValueError(f"ssl_probe: mode={mode!r}; choose from {list(MODES)}")
    if mode == "pong":
        from .task import pong_module

        return pong_module().build_baseline(name, params=params, seed=seed, **options)
    if name not in BASELINES:
        raise ValueError(f"unknown ssl_probe baseline {name!r}; choose from {list(BASELINES)}")
    kind = mode_kind(mode)
    unknown = set(options) - {"width"}
    if unknown:
        raise ValueError(f"ssl_probe.build_baseline: unknown option(s) {sorted(unknown)}; choose from ['width']")
    if name == "raw":
        return Raw(kind)
    width = options.get("width", DEFAULT_WIDTH)
    if params is not None:
        if "width" in options:
            raise ValueError("ssl_probe.build_baseline: params= and width= both size the encoder; pass one of them")
        from zoo.task import match_width

        width = match_width(lambda w: encoder_for(kind, w), params)
    torch.manual_seed(seed)
    enc = encoder_for(kind, width)
    if name == "random_init":
        return RandomInit(enc)
    return Supervised(enc, n_classes or 10)

