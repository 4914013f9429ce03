"""HDFE (Yuan et al., ICLR 2024, arXiv 2311.00187): sampling-invariant, decodable vectors of continuous functions.

A function f: R^d_in -> R^d_out given by samples (x_i, y_i = f(x_i)) becomes one complex vector
(the paper's §3, fractional power encoding of inputs and outputs, binding, sample-invariant aggregation):

* inputs and values are mapped by fractional power encoding, E_X(x) = exp(i x Theta_x) and
  E_Y(y) = exp(i y theta_y), with Theta_x ~ N(0, alpha_x^2) and theta_y ~ N(0, alpha_y^2) drawn once, so that
  <E_X(x), E_X(x')>/D -> exp(-alpha_x^2 |x - x'|^2 / 2) (a Gaussian kernel whose width is set by the bandwidth);
* a sample is the binding (elementwise product) G_i = E_X(x_i) * E_Y(y_i);
* the function is the weighted superposition F = sum_i w_i G_i, normalised to unit norm. The weights are the
  paper's sample-invariance condition: F has the SAME similarity with every sample, (K w)_i = const with
  K_ij = |<G_i, G_j>| / D, w >= 0, sum w = 1 -- the minimum-norm point of the samples' convex hull (the official
  code solves it with a one-class SVM). Then w_i is inversely proportional to the local sample density, and F
  converges to the encoding of the function itself as the samples grow, whatever their distribution;
* decoding unbinds with a query position, z = F * conj(E_X(x_q)), which leaves a superposition of E_Y over the
  values near x_q, and matches it against a codebook of E_Y over a grid of values (argmax, refined by a
  parabola through the three best levels).

``HDFEOperator`` is the paper's function-to-function use (§5.1): an MLP maps the input function's encoding to
the output function's encoding, decoded at the query points. Its decoding is the codebook match made soft
(softmax over the levels at a fixed temperature) so that the task's relative-L2 loss trains it end to end.

Deviations from the paper: the weights solve the equal-similarity condition by a fixed number of multiplicative
updates (w <- w / (K w), renormalised), not a one-class SVM (no scikit-learn); vectors stay in the Fourier
(FHRR) domain -- the official code applies an inverse FFT after binding, a unitary map that changes no
similarity; several output channels are bound to random channel keys (channel 0's key is all ones, so one
channel is exactly the paper's encoding); the operator's decoder is soft during training (hard argmax decoding
is ``HDFE.decode``). The paper's text was read through its abstract and public summaries and the official
code for the encoder; the operator MLP's size here is ours.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from zoo_task_vsa_bench.contract import FunctionEncoder

CPU = {"dim": 2048, "alpha_x": 25.0, "alpha_y": 10.0, "levels": 128, "value_range": (-1.0, 1.0), "iters": 30}
# paper §5.1 (PDE operators): D up to 4k-8k; receptive field chosen by the get_receptive_field tool
PAPER = {"dim": 4096, "alpha_x": 25.0, "alpha_y": 10.0, "levels": 256, "value_range": (-1.0, 1.0), "iters": 100}
PRESETS = ("cpu", "paper")
WEIGHTINGS = ("invariant", "mean")
KERNELS = ("expected", "empirical")


def _preset(preset: str) -> dict:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: use one of {PRESETS}")
    return dict(CPU if preset == "cpu" else PAPER)


def _phasor(theta: torch.Tensor) -> torch.Tensor:
    return torch.polar(torch.ones_like(theta), theta)


def invariant_weights(kernel: torch.Tensor, mask: torch.Tensor | None = None, iters: int = 30) -> torch.Tensor:
    """Weights w >= 0, sum 1, with (K w)_i the same for every (unmasked) sample: the paper's invariance condition.

    ``kernel`` (B, N, N) is non-negative with a unit diagonal. Multiplicative updates w <- w / (K w),
    renormalised, whose fixed points equalise K w over the support; a dense cluster of samples shares the weight
    one isolated sample gets.

    >>> k = torch.tensor([[[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]])  # two copies of one point
    >>> invariant_weights(k).round(decimals=3).tolist()
    [[0.25, 0.25, 0.5]]
    """
    b, n, _ = kernel.shape
    keep = torch.ones(b, n, dtype=kernel.dtype, device=kernel.device) if mask is None else mask.to(kernel.dtype)
    w = keep / keep.sum(-1, keepdim=True).clamp_min(1)
    for _ in range(iters):
        s = torch.einsum("bij,bj->bi", kernel, w)
        w = keep * w / s.clamp_min(1e-12)
        w = w / w.sum(-1, keepdim=True).clamp_min(1e-30)
    return w


class HDFE(FunctionEncoder):
    """The training-free function encoder: ``encode(x, y, mask) -> (B, D)`` complex, ``decode(z, xq) -> (B, M, d_out)``.

    A ``vsa_bench`` "encode" model (``forward(batch)`` runs ``encode`` on the task's batch dict).

    Args:
        dim: D, the length of the complex vectors.
        d_in, d_out: input and output dimensions of the encoded functions.
        alpha_x, alpha_y: bandwidths (standard deviations of the random phases): the input kernel is
            exp(-alpha_x^2 |dx|^2 / 2), so larger alpha resolves finer detail and needs denser samples.
        levels, value_range: the value codebook used by ``decode`` (values are clipped to the range).
        iters: multiplicative updates of the invariant weights.
        weighting: "invariant" (the paper's) or "mean" (the plain average of the sample codes, for comparison).
        kernel: the sample similarity the invariant weights equalise: "expected" (the D -> infinity value
            exp(-alpha_x^2 |dx|^2 / 2 - alpha_y^2 |dy|^2 / 2), noise-free and O(N^2)) or "empirical" (|<G_i, G_j>| / D
            of the drawn phases, as the official code computes it; O(N^2 D)).
        seed: draws the phases (the encoder is fixed, never trained).

    >>> enc = HDFE(dim=1024)
    >>> x = torch.rand(2, 200, 1)
    >>> z = enc.encode(x, torch.sin(3 * x))
    >>> z.shape, z.dtype
    (torch.Size([2, 1024]), torch.complex64)
    """

    def __init__(self, dim: int = 2048, d_in: int = 1, d_out: int = 1, alpha_x: float = 25.0, alpha_y: float = 10.0,
                 levels: int = 128, value_range: Sequence[float] = (-1.0, 1.0), iters: int = 30,
                 weighting: str = "invariant", kernel: str = "expected", seed: int = 0) -> None:
        super().__init__()
        if weighting not in WEIGHTINGS:
            raise ValueError(f"unknown weighting {weighting!r}: use one of {WEIGHTINGS}")
        if kernel not in KERNELS:
            raise ValueError(f"unknown kernel {kernel!r}: use one of {KERNELS}")
        self.kernel = kernel
        self.dim, self.d_in, self.d_out, self.levels, self.iters = dim, d_in, d_out, levels, iters
        self.alpha_x, self.alpha_y, self.weighting = float(alpha_x), float(alpha_y), weighting
        self.value_range = (float(value_range[0]), float(value_range[1]))
        g = torch.Generator().manual_seed(seed)
        self.register_buffer("theta_x", alpha_x * torch.randn(d_in, dim, generator=g))
        self.register_buffer("theta_y", alpha_y * torch.randn(d_out, dim, generator=g))
        keys = 2 * math.pi * torch.rand(d_out, dim, generator=g)
        keys[0] = 0.0  # channel 0 unkeyed: with one output the encoding is exactly the paper's
        self.register_buffer("key_phase", keys)
        self.register_buffer("grid", torch.linspace(*self.value_range, levels))

    # -- the codes -------------------------------------------------------------------------------------------
    def encode_x(self, x: torch.Tensor) -> torch.Tensor:
        """E_X(x): (..., d_in) -> (..., D) unit phasors."""
        return _phasor(x.float() @ self.theta_x)

    def encode_y(self, y: torch.Tensor, channel: int = 0) -> torch.Tensor:
        """E_Y(y) of one output channel: (...) -> (..., D) unit phasors."""
        return _phasor(y.float()[..., None] * self.theta_y[channel])

    def sample_codes(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """G_i = E_X(x_i) * prod_c E_Yc(y_ic): one phasor per sample (B, N, D), the point (x, y) of the graph."""
        return _phasor(x.float() @ self.theta_x + y.float() @ self.theta_y)

    def weights(self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The aggregation weights (B, N): the paper's invariant ones or the plain mean (``weighting``)."""
        b, n, _ = x.shape
        keep = torch.ones(b, n, device=x.device) if mask is None else mask.float()
        if self.weighting == "mean":
            return keep / keep.sum(-1, keepdim=True).clamp_min(1)
        if self.kernel == "expected":
            # E[<G_i, G_j>]/D for Gaussian phases: exp(-alpha_x^2 |dx|^2 / 2 - alpha_y^2 |dy|^2 / 2), exact and O(N^2)
            scaled = torch.cat([x.float() * self.alpha_x, y.float() * self.alpha_y], -1)
            return invariant_weights(torch.exp(-0.5 * torch.cdist(scaled, scaled) ** 2), keep, self.iters)
        # |<G_i, G_j>| / D of these D phases (the official code's kernel), in real arithmetic
        phase = x.float() @ self.theta_x + y.float() @ self.theta_y
        c, s = torch.cos(phase), torch.sin(phase)
        re = c @ c.transpose(1, 2) + s @ s.transpose(1, 2)
        im = s @ c.transpose(1, 2) - c @ s.transpose(1, 2)
        return invariant_weights(torch.sqrt(re ** 2 + im ** 2) / self.dim, keep, self.iters)

    def encode(self, x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The function's vector F (B, D), complex64, unit norm, from samples x (B, N, d_in), y (B, N, d_out).

        ``mask`` (B, N), true for real samples: padded ones get no weight.
        """
        if x.dim() != 3 or y.dim() != 3 or x.shape[:2] != y.shape[:2] or x.shape[-1] != self.d_in \
                or y.shape[-1] != self.d_out:
            raise ValueError(f"HDFE.encode expects x (B, N, {self.d_in}) and y (B, N, {self.d_out}), got "
                             f"{tuple(x.shape)} and {tuple(y.shape)}")
        if mask is not None:  # padded entries may hold anything: zero them so that 0 * nan cannot leak in
            x, y = x.masked_fill(~mask.bool()[..., None], 0.0), y.masked_fill(~mask.bool()[..., None], 0.0)
        w = self.weights(x, y, mask)
        px = x.float() @ self.theta_x
        re = im = 0.0
        for c in range(self.d_out):  # sum_i w_i E_X(x_i) E_Yc(y_ic), times the channel's key
            phase = px + y[..., c:c + 1].float() * self.theta_y[c] + self.key_phase[c]
            re = re + torch.einsum("bn,bnd->bd", w, torch.cos(phase))
            im = im + torch.einsum("bn,bnd->bd", w, torch.sin(phase))
        f = torch.complex(re, im)
        return f / torch.linalg.vector_norm(f, dim=-1, keepdim=True).clamp_min(1e-12)

    # -- decoding ----------------------------------------------------------------------------------------------
    def value_scores(self, z: torch.Tensor, xq: torch.Tensor, channel: int = 0) -> torch.Tensor:
        """Similarity of the unbound query code z * conj(E_X(x_q)) with each codebook level: (B, M, levels) in [-1, 1].

        Real arithmetic: Re<z e^{-i phi}, e^{i y theta}> = (Re z cos phi + Im z sin phi) . cos(y theta)
        + (Im z cos phi - Re z sin phi) . sin(y theta); unbinding keeps the norm, so |q| = |z|.
        """
        phase = xq.float() @ self.theta_x + self.key_phase[channel]
        c, s = torch.cos(phase), torch.sin(phase)
        zr, zi = z.real[:, None, :], z.imag[:, None, :]
        book = self.grid[:, None] * self.theta_y[channel]  # (L, D)
        scores = (zr * c + zi * s) @ torch.cos(book).T + (zi * c - zr * s) @ torch.sin(book).T
        norm = torch.linalg.vector_norm(z, dim=-1)[:, None, None].clamp_min(1e-12)
        return scores / norm / math.sqrt(self.dim)

    def decode(self, z: torch.Tensor, xq: torch.Tensor) -> torch.Tensor:
        """f(x_q) (B, M, d_out) from the vector z (B, D): unbind x_q, best codebook level, parabolic refinement."""
        out = []
        step = (self.value_range[1] - self.value_range[0]) / (self.levels - 1)
        for c in range(self.d_out):
            s = self.value_scores(z, xq, c)
            k = s.argmax(-1).clamp(1, self.levels - 2)
            s0, s1, s2 = (s.gather(-1, (k + o)[..., None])[..., 0] for o in (-1, 0, 1))
            curv = s0 - 2 * s1 + s2
            shift = torch.where(curv < 0, 0.5 * (s0 - s2) / curv.clamp_max(-1e-12), torch.zeros_like(curv))
            out.append(self.grid[k] + shift.clamp(-1, 1) * step)
        return torch.stack(out, -1)

    def soft_decode(self, z: torch.Tensor, xq: torch.Tensor, temperature: float = 0.02) -> torch.Tensor:
        """A differentiable decode: the codebook levels averaged by softmax(scores / temperature)."""
        return torch.stack([torch.softmax(self.value_scores(z, xq, c) / temperature, -1) @ self.grid
                            for c in range(self.d_out)], -1)


def hdfe(preset: str = "cpu", **overrides) -> HDFE:
    """The HDFE encoder/decoder (``preset`` "cpu": D=2048; "paper": D=4096); keywords override the preset."""
    cfg = _preset(preset)
    cfg.update(overrides)
    return HDFE(**cfg)


class HDFEOperator(nn.Module):
    """Function-to-function regression on HDFE codes (paper §5.1): encode a, MLP to the code of u, decode at x.

    A "points" model of ``operator_learn``: ``model(values (B, N, C_in), coords (B, N, d)) -> (B, N, C_out)``
    for any N and any sampling. The input encoder is fixed; the MLP reads [Re F, Im F] * sqrt(D) and writes the
    output code, decoded softly at the same points (or at ``query``). Values are mapped from ``in_range`` and
    ``out_range`` to the codebooks' [-1, 1] (and back).

    >>> op = HDFEOperator(dim=256, hidden=32)
    >>> op(torch.rand(2, 50, 1), torch.rand(2, 50, 1)).shape
    torch.Size([2, 50, 1])
    """

    input_kind = "points"

    def __init__(self, dim: int = 512, d_in: int = 1, c_in: int = 1, c_out: int = 1, hidden: int = 256,
                 depth: int = 2, alpha_x: float = 25.0, alpha_y: float = 10.0, in_range: Sequence[float] = (-4.0, 4.0),
                 out_range: Sequence[float] = (-3.0, 3.0), levels: int = 64, temperature: float = 0.02,
                 iters: int = 30, weighting: str = "invariant", seed: int = 0) -> None:
        super().__init__()
        self.dim, self.temperature = dim, temperature
        self.in_range = (float(in_range[0]), float(in_range[1]))
        self.out_range = (float(out_range[0]), float(out_range[1]))
        self.encoder = HDFE(dim, d_in, c_in, alpha_x, alpha_y, levels, (-1.0, 1.0), iters, weighting, seed=seed)
        self.decoder = HDFE(dim, d_in, c_out, alpha_x, alpha_y, levels, (-1.0, 1.0), iters, weighting, seed=seed + 1)
        layers: list[nn.Module] = []
        width = 2 * dim
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.GELU()]
            width = hidden
        layers.append(nn.Linear(width, 2 * dim))
        self.mlp = nn.Sequential(*layers)

    def encode(self, values: torch.Tensor, coords: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """The input function's code (B, D), values rescaled from ``in_range`` to [-1, 1]."""
        lo, hi = self.in_range
        return self.encoder.encode(coords, (2 * values - lo - hi) / (hi - lo), mask)

    def output_code(self, values: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """The MLP's estimate of the output function's code (B, D), complex."""
        z = self.encode(values, coords)
        h = self.mlp(torch.cat([z.real, z.imag], -1) * math.sqrt(self.dim))
        return torch.complex(h[:, :self.dim], h[:, self.dim:])

    def forward(self, values: torch.Tensor, coords: torch.Tensor, query: torch.Tensor | None = None) -> torch.Tensor:
        y = self.decoder.soft_decode(self.output_code(values, coords), coords if query is None else query,
                                     self.temperature)
        lo, hi = self.out_range
        return lo + (y + 1) * (hi - lo) / 2


def hdfe_operator(preset: str = "cpu", **overrides) -> HDFEOperator:
    """The HDFE operator (``preset`` "cpu": D=512, MLP 256 wide; "paper": D=4096, 1024 wide)."""
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: use one of {PRESETS}")
    cfg = {"dim": 512, "hidden": 256} if preset == "cpu" else {"dim": 4096, "hidden": 1024}
    cfg.update(overrides)
    return HDFEOperator(**cfg)
