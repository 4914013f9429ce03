"""Coordinate networks shared by the INR plugins and the ``image_fit`` baselines.

- ``Siren``: sine activations with SIREN's initialisation (Sitzmann et al. 2020, Sec. 3.2 and
  supplement Sec. 1.5), the first layer's frequency ``w0_initial`` apart from the others' ``w0``.
- ``FourierFeatureMLP``: Gaussian random Fourier features followed by a ReLU MLP (Tancik et al. 2020,
  Sec. 6 "Gaussian" mapping).

Learning rates that work with Adam on full-batch image fitting (the paper defaults, used by the
``image_fit`` task through each model's ``default_lr`` attribute): SIREN 1e-4, Fourier features 1e-3.
"""
from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["SineLayer", "Siren", "FourierFeatures", "FourierFeatureMLP"]


class SineLayer(nn.Module):
    """``sin(w0 * (W x + b))`` with SIREN's initialisation.

    The first layer draws ``W ~ U(-1/in, 1/in)`` so that ``w0 * W x`` spans several periods over
    [-1, 1]; later layers draw ``W ~ U(-sqrt(6/in)/w0, sqrt(6/in)/w0)`` so that pre-activations stay
    standard-normal-like through depth (SIREN, Sec. 3.2). Biases keep PyTorch's default init, as in
    the authors' code.
    """

    def __init__(self, in_features: int, out_features: int, w0: float = 30.0, is_first: bool = False):
        super().__init__()
        self.w0, self.is_first = float(w0), is_first
        self.linear = nn.Linear(in_features, out_features)
        bound = 1.0 / in_features if is_first else math.sqrt(6.0 / in_features) / self.w0
        with torch.no_grad():
            self.linear.weight.uniform_(-bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sin(self.w0 * self.linear(x))


class Siren(nn.Module):
    """SIREN: ``layers`` sine layers of width ``hidden``, then a linear output layer.

    ``w0_initial`` is the first layer's frequency, ``w0`` the later layers' (it also scales their
    initialisation, ``U(-sqrt(6/in)/w0, sqrt(6/in)/w0)``, and the output layer's). The paper uses
    30 for both (Sec. 3.2 and supplement Sec. 1.5), the defaults here; ``siren-pytorch`` names the
    same two knobs ``w0_initial`` (30) and ``w0`` (1 by default there).

    >>> m = Siren(in_features=2, out_features=1, hidden=32, layers=2)
    >>> m(torch.zeros(5, 2)).shape
    torch.Size([5, 1])
    >>> [layer.w0 for layer in Siren(hidden=8, layers=3, w0=1.0, w0_initial=30.0).body]
    [30.0, 1.0, 1.0]
    """

    default_lr = 1e-4

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 256, layers: int = 3,
                 w0: float = 30.0, w0_initial: float = 30.0):
        super().__init__()
        if layers < 1:
            raise ValueError(f"Siren needs layers >= 1, got {layers}")
        body = [SineLayer(in_features, hidden, w0_initial, is_first=True)]
        body += [SineLayer(hidden, hidden, w0) for _ in range(layers - 1)]
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(hidden, out_features)
        bound = math.sqrt(6.0 / hidden) / w0  # the authors' init of the final linear layer
        with torch.no_grad():
            self.head.weight.uniform_(-bound, bound)

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(coords))


class FourierFeatures(nn.Module):
    """``[cos(2 pi B x), sin(2 pi B x)]`` with a fixed ``B ~ N(0, sigma^2)`` of shape (n_features, in_features).

    ``B`` is a buffer (saved with the model, not trained), drawn from its own generator seeded by
    ``seed`` so that it does not depend on the global RNG.
    """

    def __init__(self, in_features: int = 2, n_features: int = 256, sigma: float = 10.0, seed: int = 0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("B", torch.randn(n_features, in_features, generator=g) * sigma)
        self.out_features = 2 * n_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        proj = 2 * math.pi * x @ self.B.T
        return torch.cat([torch.cos(proj), torch.sin(proj)], dim=-1)


class FourierFeatureMLP(nn.Module):
    """Gaussian Fourier features, then ``layers`` ReLU layers of width ``hidden``, then a linear output.

    Tancik et al. draw ``B ~ N(0, 10^2)`` for image coordinates in [0, 1]; for coordinates in [-1, 1]
    (this project's convention, twice as long) the same frequencies are ``sigma=5``.

    >>> m = FourierFeatureMLP(hidden=32, layers=2, n_features=16)
    >>> m(torch.zeros(5, 2)).shape
    torch.Size([5, 1])
    """

    default_lr = 1e-3

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 256, layers: int = 3,
                 n_features: int = 256, sigma: float = 10.0, seed: int = 0):
        super().__init__()
        self.features = FourierFeatures(in_features, n_features, sigma, seed)
        body: list[nn.Module] = []
        d = self.features.out_features
        for _ in range(layers):
            body += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(d, out_features)

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(self.features(coords)))

