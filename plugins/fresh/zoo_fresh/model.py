"""FreSh (frequency shifting): pick an INR's embedding hyperparameter before training by matching spectra.

Kania, Mihajlovic, Prokudin, Tabor, Spurek, "FreSh: Frequency Shifting for Accelerated Neural
Representation Learning", ICLR 2025 (arXiv 2410.05050), Sec. 3-4. The untrained model's output
spectrum predicts how well a configuration will fit a signal, so instead of training every
configuration of a grid, FreSh:

1. takes the DFT magnitude of the target and of the untrained model's output on the same grid
   (summed over channels) and sums it along the diagonals ``|k_1| + ... + |k_d| = b`` (one bin per
   frequency, all directions together), dropping the constant (b = 0) bin: the spectrum ``s``;
2. normalises both spectra to sum 1 and measures their 1-D Wasserstein distance over the bins
   (``W_1 = sum_b |CDF_target(b) - CDF_model(b)|``), averaged over several random initialisations;
3. trains only the configuration with the smallest distance.

The paper's grids: SIREN ``omega_0`` of the first (embedding) layer in 10, 20, ..., 200; Fourier
features ``sigma`` in 1, 2, ..., 20; 10 untrained outputs per configuration; spectra cropped to the
first 64 bins for SIREN and 128 for the others.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from zoo_nn.inr import FourierFeatures, SineLayer
from zoo_task_image_fit.image_fit import mse_loop

log = logging.getLogger(__name__)

__all__ = ["spectrum", "wasserstein_1d", "spectrum_distance", "select", "FreshSiren", "FreshFourierMLP",
           "fresh_siren", "fresh_relu_ff", "SIREN_OMEGAS", "FF_SIGMAS"]

SIREN_OMEGAS = tuple(float(w) for w in range(10, 201, 10))
FF_SIGMAS = tuple(float(s) for s in range(1, 21))


def spectrum(signal: torch.Tensor, size: int | None = None) -> torch.Tensor:
    """FreSh's spectrum of a (H, W, C) image (or any (*grid, C) signal): DFT magnitudes summed over
    channels and along the diagonals ``sum_d |k_d| = b``, for b = 1, 2, ... (the constant term dropped).

    ``size`` keeps the first ``size`` bins (the lowest frequencies).

    >>> x = torch.linspace(-1, 1, 17)[:16]
    >>> img = torch.cos(2 * torch.pi * 3 * x / 2)[None, :, None].expand(16, 16, 1)  # 3 periods along x
    >>> int(spectrum(img).argmax()) + 1
    3
    """
    grid_dims = tuple(range(signal.ndim - 1))
    mag = torch.fft.fftn(signal.double(), dim=grid_dims).abs().sum(-1)
    # |k| per axis: min(i, n - i), the magnitude of the signed frequency of FFT index i
    band = torch.zeros(mag.shape, dtype=torch.long)
    for d, n in enumerate(mag.shape):
        i = torch.arange(n)
        shape = [1] * mag.ndim
        shape[d] = n
        band = band + torch.minimum(i, n - i).reshape(shape)
    s = torch.zeros(int(band.max()) + 1, dtype=torch.float64).index_add_(0, band.flatten(), mag.flatten())[1:]
    return s[:size] if size is not None else s


def wasserstein_1d(u: torch.Tensor, v: torch.Tensor) -> float:
    """W_1 between two histograms on the same unit-spaced bins (each normalised to sum 1).

    >>> wasserstein_1d(torch.tensor([1.0, 0, 0]), torch.tensor([0, 0, 1.0]))
    2.0
    """
    if u.shape != v.shape:
        raise ValueError(f"spectra must have the same length, got {tuple(u.shape)} and {tuple(v.shape)}")
    u, v = u.double() / u.double().sum(), v.double() / v.double().sum()
    return float((torch.cumsum(u, 0) - torch.cumsum(v, 0)).abs().sum())


def spectrum_distance(output: torch.Tensor, target: torch.Tensor, size: int | None = None) -> float:
    """FreSh's score of one untrained output against the target (both (*grid, C)): W_1 of their spectra."""
    return wasserstein_1d(spectrum(output, size), spectrum(target, size))


@torch.no_grad()
def select(make: Callable[[float], nn.Module], candidates: Sequence[float], coords: torch.Tensor,
           target: torch.Tensor, *, n_inits: int = 10, spectrum_size: int | None = None,
           seed: int = 0) -> tuple[float, dict[float, float]]:
    """The candidate whose untrained outputs' spectrum is closest to ``target``'s, and every candidate's distance.

    ``make(value)`` builds an untrained model; ``coords`` are the grid's coordinates in the
    row-major order of ``target`` (shape (*grid, C)). Each candidate is scored by the mean
    distance over ``n_inits`` initialisations (seeds ``seed``, ``seed + 1``, ...).

    >>> from zoo_task_image_fit.image_fit import make_signal
    >>> s = make_signal("text", 32)
    >>> best, dist = select(lambda w: fresh_siren(hidden=16, w0_first=w), [1.0, 60.0, 1000.0], s.coords,
    ...                     s.values.reshape(s.shape), n_inits=2)
    >>> best
    60.0
    """
    target_spec = spectrum(target, spectrum_size)
    dist: dict[float, float] = {}
    for value in candidates:
        scores = []
        for k in range(n_inits):
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(seed + k)
                net = make(value).eval()
                out = net(coords).reshape(*target.shape[:-1], -1)
            scores.append(wasserstein_1d(spectrum(out, spectrum_size), target_spec))
        dist[value] = sum(scores) / len(scores)
    best = min(dist, key=dist.get)
    return best, dist


class _FreshSelected:
    """Mixin: ``fit`` runs FreSh's selection, re-initialises the model with the pick, then trains it
    like ``image_fit`` does (full-batch Adam on the MSE)."""

    candidates: tuple[float, ...]
    n_inits: int
    spectrum_size: int | None
    default_lr: float

    def fresh_select(self, signal, seed: int = 0) -> tuple[float, dict[float, float]]:
        """Run the selection on ``signal``'s training grid; returns (pick, distance of every candidate)."""
        coords, target = _grid_target(signal)
        return select(self.variant, self.candidates, coords, target, n_inits=self.n_inits,
                      spectrum_size=self.spectrum_size, seed=seed)

    def fit(self, signal, *, steps: int | None, budget_s: float | None = None, seed: int = 0,
            progress: str | None = None) -> dict[str, Any]:
        t0 = time.perf_counter()
        pick, dist = self.fresh_select(signal, seed)
        select_s = time.perf_counter() - t0
        log.info("FreSh picked %s=%g (W1 %.4f) in %.2f s", self.knob, pick, dist[pick], select_s)
        torch.manual_seed(seed)
        self.configure(pick)
        opt = torch.optim.Adam(self.parameters(), lr=self.default_lr)
        out = mse_loop(self, signal, opt, steps=steps, budget_s=budget_s, progress=progress)
        return {**out, "fresh_pick": pick, "fresh_seconds": select_s,
                "fresh_distance": dist[pick]}


def _grid_target(signal) -> tuple[torch.Tensor, torch.Tensor]:
    """Training-grid coordinates and the target on that grid (held-out pixels of ``inpaint`` set to the mean)."""
    coords, values = signal.grid()
    target = values.reshape(signal.shape).clone()
    if signal.mode == "inpaint":
        known = torch.zeros(coords.shape[0], dtype=torch.bool)
        lookup = {tuple(c.tolist()): i for i, c in enumerate(coords)}
        known[[lookup[tuple(c.tolist())] for c in signal.coords]] = True
        flat = target.reshape(-1, target.shape[-1])
        flat[~known] = signal.values.mean(0)
    return coords, target


class FreshSiren(_FreshSelected, nn.Module):
    """SIREN whose first-layer frequency ``omega_0`` (its embedding) FreSh picks before training.

    ``w0_first`` is kept as a buffer, so a trained model saves the value FreSh chose; the hidden
    layers keep ``w0`` (30).
    """

    knob = "omega_0"

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 64, layers: int = 3,
                 w0: float = 30.0, w0_first: float = 30.0, candidates: Sequence[float] = SIREN_OMEGAS,
                 n_inits: int = 10, spectrum_size: int | None = 64, lr: float = 1e-4):
        super().__init__()
        self.shape_args = (in_features, out_features, hidden, layers, w0)
        self.candidates, self.n_inits, self.spectrum_size = tuple(float(c) for c in candidates), n_inits, spectrum_size
        self.default_lr = lr
        self.first = SineLayer(in_features, hidden, 1.0, is_first=True)
        self.body = nn.Sequential(*[SineLayer(hidden, hidden, w0) for _ in range(layers - 1)])
        self.head = nn.Linear(hidden, out_features)
        self.register_buffer("w0_first", torch.tensor(float(w0_first)))
        self._init_head()

    def _init_head(self) -> None:
        bound = math.sqrt(6.0 / self.head.in_features) / self.shape_args[4]
        with torch.no_grad():
            self.head.weight.uniform_(-bound, bound)

    def variant(self, value: float) -> FreshSiren:
        """An untrained copy of this architecture with first-layer ``omega_0 = value``."""
        i, o, h, n, w0 = self.shape_args
        return FreshSiren(i, o, h, n, w0, value, self.candidates, self.n_inits, self.spectrum_size, self.default_lr)

    def configure(self, value: float) -> None:
        """Set ``omega_0`` and re-initialise every layer (SIREN's init) at the current RNG state."""
        fresh = self.variant(value)
        self.load_state_dict(fresh.state_dict())

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        h = torch.sin(self.w0_first * self.first.linear(coords))
        return self.head(self.body(h))


class FreshFourierMLP(_FreshSelected, nn.Module):
    """ReLU MLP on Gaussian Fourier features whose scale ``sigma`` FreSh picks before training.

    The frequency matrix ``B ~ N(0, sigma^2)`` is a buffer, so a trained model saves the chosen scale.
    """

    knob = "sigma"

    def __init__(self, in_features: int = 2, out_features: int = 1, hidden: int = 16, layers: int = 3,
                 n_features: int = 256, sigma: float = 5.0, candidates: Sequence[float] = FF_SIGMAS,
                 n_inits: int = 10, spectrum_size: int | None = 128, lr: float = 1e-3):
        super().__init__()
        self.shape_args = (in_features, out_features, hidden, layers, n_features)
        self.candidates, self.n_inits, self.spectrum_size = tuple(float(c) for c in candidates), n_inits, spectrum_size
        self.default_lr = lr
        self.sigma = float(sigma)
        # B drawn from the global RNG (seeded per initialisation), unlike the task baseline's fixed seed
        self.features = FourierFeatures(in_features, n_features, 1.0, seed=0)
        with torch.no_grad():
            self.features.B.normal_(0.0, self.sigma)
        body: list[nn.Module] = []
        d = self.features.out_features
        for _ in range(layers):
            body += [nn.Linear(d, hidden), nn.ReLU()]
            d = hidden
        self.body = nn.Sequential(*body)
        self.head = nn.Linear(d, out_features)

    def variant(self, value: float) -> FreshFourierMLP:
        """An untrained copy of this architecture with Fourier-feature scale ``sigma = value``."""
        i, o, h, n, m = self.shape_args
        return FreshFourierMLP(i, o, h, n, m, value, self.candidates, self.n_inits, self.spectrum_size,
                               self.default_lr)

    def configure(self, value: float) -> None:
        """Set ``sigma``, redraw ``B`` and re-initialise the MLP at the current RNG state."""
        self.load_state_dict(self.variant(value).state_dict())
        self.sigma = float(value)

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(self.features(coords)))


def fresh_siren(in_features: int = 2, out_features: int = 1, hidden: int = 64, layers: int = 3, w0: float = 30.0,
                w0_first: float = 30.0, candidates: Sequence[float] = SIREN_OMEGAS, n_inits: int = 10,
                spectrum_size: int | None = 64, lr: float = 1e-4) -> FreshSiren:
    """SIREN + FreSh over the first layer's omega_0 (paper grid 10..200, 10 inits, 64 bins).

    >>> fresh_siren(hidden=8)(torch.zeros(3, 2)).shape
    torch.Size([3, 1])
    """
    return FreshSiren(in_features, out_features, hidden, layers, w0, w0_first, candidates, n_inits, spectrum_size, lr)


def fresh_relu_ff(in_features: int = 2, out_features: int = 1, hidden: int = 16, layers: int = 3,
                  n_features: int = 256, sigma: float = 5.0, candidates: Sequence[float] = FF_SIGMAS,
                  n_inits: int = 10, spectrum_size: int | None = 128, lr: float = 1e-3) -> FreshFourierMLP:
    """ReLU + Fourier features + FreSh over sigma (paper grid 1..20, 10 inits, 128 bins).

    >>> fresh_relu_ff(hidden=8, n_features=16)(torch.zeros(3, 2)).shape
    torch.Size([3, 1])
    """
    return FreshFourierMLP(in_features, out_features, hidden, layers, n_features, sigma, candidates, n_inits,
                           spectrum_size, lr)
