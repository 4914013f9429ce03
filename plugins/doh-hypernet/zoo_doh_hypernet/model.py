"""D'OH: Decoder-Only randomly projected Hypernetwork (Gordon, MacDonald, Saratchandran, Lucey 2024, Sec. 3).

A target INR (here a SIREN: ``layers`` sine layers of width ``hidden``, w0 = 30, and a linear
head) is not trained directly. Each of its parameter tensors (weight and bias of every layer l) is
generated from one trainable latent code z in R^m by a FIXED random projection,

    theta_l = s_l * (P_l z),   P_l in R^{n_l x m},  P_l ~ N(0, 1/m)  (seeded, never trained, never stored),

and only z is optimised, per signal, on the signal's reconstruction MSE: no encoder, no offline
training data. What a signal costs to store is its m latent values (plus the seed), so m sets the
memory footprint without changing the target architecture.

Choices of ours where the paper's text was not available to us (see the README): the Gaussian
projections with variance 1/m and z initialised ~ N(0, 1) make each generated entry ~ N(0, 1); the
per-layer scale s_l is the standard deviation of SIREN's own initialisation for that tensor (weights:
U(-1/in, 1/in) first layer, U(-sqrt(6/in)/w0, sqrt(6/in)/w0) after; biases: PyTorch's
U(-1/sqrt(in), 1/sqrt(in))), so that at initialisation the generated network is distributed like a
freshly initialised SIREN. The latent is optimised with Adam (``lr``, ``inner_steps``).
"""
from __future__ import annotations

import math

import torch
from torch import nn

from zoo_task_image_fit.signal_set import SignalSet, coord_grid


def siren_shapes(in_features: int, hidden: int, layers: int, out_features: int) -> list[tuple[int, int]]:
    """(fan_out, fan_in) of every linear map of the target SIREN, head last.

    >>> siren_shapes(2, 8, 2, 1)
    [(8, 2), (8, 8), (1, 8)]
    """
    dims = [in_features] + [hidden] * layers
    return [(b, a) for a, b in zip(dims[:-1], dims[1:], strict=True)] + [(out_features, hidden)]


class DOH(nn.Module):
    """Decoder-only random hypernetwork over a SIREN target; latents (B, m) -> B SIRENs evaluated in a batch.

    ``model(images (B, H, W, C)) -> reconstructions``: each image gets its own latent, optimised for
    ``inner_steps`` Adam steps from the seeded initial code, then decoded.

    >>> m = DOH(latent_dim=16, hidden=8, layers=2, inner_steps=2)
    >>> m(torch.rand(2, 4, 4, 1)).shape
    torch.Size([2, 4, 4, 1])
    """

    def __init__(self, latent_dim: int = 256, channels: int = 1, hidden: int = 32, layers: int = 3, w0: float = 30.0,
                 inner_steps: int = 300, lr: float = 1e-2, seed: int = 0):
        super().__init__()
        self.latent_dim, self.channels, self.w0 = latent_dim, channels, float(w0)
        self.inner_steps, self.lr, self.seed = inner_steps, lr, seed
        self.shapes = siren_shapes(2, hidden, layers, channels)
        g = torch.Generator().manual_seed(seed)
        scales = []
        for i, (fan_out, fan_in) in enumerate(self.shapes):
            first = i == 0
            w_bound = 1.0 / fan_in if first else math.sqrt(6.0 / fan_in) / self.w0
            b_bound = 1.0 / math.sqrt(fan_in)
            scales += [w_bound / math.sqrt(3.0), b_bound / math.sqrt(3.0)]
            for name, n in ((f"P{i}_w", fan_out * fan_in), (f"P{i}_b", fan_out)):
                self.register_buffer(name, torch.randn(n, latent_dim, generator=g) / math.sqrt(latent_dim))
        self.register_buffer("scales", torch.tensor(scales))

    @property
    def target_params(self) -> int:
        """Parameter count of the target SIREN that the latent generates."""
        return sum(o * i + o for o, i in self.shapes)

    def init_latent(self, n: int) -> torch.Tensor:
        """The seeded initial codes (n, m) ~ N(0, 1) (the same code for every signal)."""
        g = torch.Generator().manual_seed(self.seed + 1)
        return torch.randn(1, self.latent_dim, generator=g).expand(n, -1).clone()

    def weights(self, z: torch.Tensor) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """theta_l = s_l * P_l z for every layer: [(W (B, out, in), b (B, out))]."""
        out = []
        for i, (fan_out, fan_in) in enumerate(self.shapes):
            w = (z @ getattr(self, f"P{i}_w").T) * self.scales[2 * i]
            b = (z @ getattr(self, f"P{i}_b").T) * self.scales[2 * i + 1]
            out.append((w.reshape(-1, fan_out, fan_in), b))
        return out

    def decode(self, z: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """The generated SIRENs at ``coords`` (N, 2): latents (B, m) -> values (B, N, C)."""
        h = coords.unsqueeze(0).expand(z.shape[0], -1, -1)
        params = self.weights(z)
        for w, b in params[:-1]:
            h = torch.sin(self.w0 * (torch.bmm(h, w.transpose(1, 2)) + b.unsqueeze(1)))
        w, b = params[-1]
        return torch.bmm(h, w.transpose(1, 2)) + b.unsqueeze(1)

    def encode(self, images: torch.Tensor, steps: int | None = None) -> tuple[torch.Tensor, list[float]]:
        """Optimise one latent per image on its MSE (Adam); returns the codes (B, m) and the mean MSE per step."""
        b, h, w, c = images.shape
        coords, x = coord_grid(h, w).to(images), images.reshape(b, h * w, c)
        z = self.init_latent(b).to(images).requires_grad_(True)
        opt = torch.optim.Adam([z], lr=self.lr)
        losses: list[float] = []
        with torch.enable_grad():
            for _ in range(self.inner_steps if steps is None else steps):
                # per-signal MSE summed over the batch: each latent gets its own signal's gradient
                loss = ((self.decode(z, coords) - x) ** 2).mean(dim=(1, 2)).sum()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                losses.append(loss.item() / b)
        return z.detach(), losses

    def reconstruct(self, images: torch.Tensor) -> torch.Tensor:
        b, h, w, c = images.shape
        z, _ = self.encode(images)
        with torch.no_grad():
            return self.decode(z, coord_grid(h, w).to(images)).reshape(b, h, w, c)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.reconstruct(images)

    def fit(self, signal_set: SignalSet, *, steps: int | None = None, seed: int = 0, progress: str | None = None) -> dict:
        """Nothing to learn across signals (decoder-only, no offline data): every signal is fitted in ``reconstruct``.

        ``steps``, when given, sets ``inner_steps`` (the per-signal latent optimisation steps).
        """
        if steps is not None:
            self.inner_steps = int(steps)
        return {"steps": 0.0, "inner_steps": float(self.inner_steps)}

    def stored_params(self, signal_set: SignalSet) -> int:
        """Numbers stored to represent ``signal_set.train``: one latent per signal (no trainable shared weights;
        the projections are regenerated from the seed). ``signal_set_fit`` sizes its baselines from this."""
        return len(signal_set.train) * self.latent_dim

    def memory_bytes(self) -> int:
        """Stored bytes per signal: the float32 latent, plus the 8-byte seed of the shared projections."""
        return 4 * self.latent_dim + 8


def doh_siren(latent_dim: int = 256, channels: int = 1, hidden: int = 32, layers: int = 3, w0: float = 30.0,
              inner_steps: int = 300, lr: float = 1e-2, seed: int = 0) -> DOH:
    """D'OH over a 3-layer width-32 SIREN target (2,241 parameters) with a 256-d latent by default."""
    return DOH(latent_dim, channels, hidden, layers, w0, inner_steps, lr, seed)
