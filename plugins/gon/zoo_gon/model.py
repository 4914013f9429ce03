"""Implicit Gradient Origin Network (Bond-Taylor & Willcocks, ICLR 2021, Sec. 3 and Sec. 3.3).

Sec. 3, Eq. 3-4: with a decoder F and the data-fitting loss L(x, F(z)) (the negative Gaussian
log-likelihood, i.e. the squared error summed over the datum's pixels), a datum's latent is the
negative gradient of the loss at the origin,

    z = -grad_{z0} L(x, F(z0)) at z0 = 0,

and F is trained on L(x, F(z)) by backpropagating through that gradient (second-order derivatives),
so no encoder exists. Sec. 3.3 (implicit GON): F is a SIREN over the coordinates concatenated with
z, F(c, z), which gives a space of implicit representations without a hypernetwork.

Reduction, as in the authors' implicit GON code: the inner and the outer loss are the squared error
summed over pixels and averaged over the batch (and channels). Averaging over the batch makes a
datum's latent 1/batch of its own gradient, z_i = -grad L_i / B: a smaller latent, and with it a
different outer optimisation (not a harmless rescaling). The divisor is the nominal ``batch_size``,
never the number of images at hand, so a datum's latent does not depend on which batch it is in.
"""
from __future__ import annotations

import torch
from torch import nn

from zoo.task import run_budget
from zoo_nn.inr import Siren
from zoo_task_image_fit.signal_set import SignalSet, coord_grid, minibatches


class ImplicitGON(nn.Module):
    """A SIREN ``F([coords, z])`` whose latents are gradients at the origin.

    ``model(images (B, H, W, C)) -> reconstructions (B, H, W, C)`` (= ``reconstruct``).

    >>> m = ImplicitGON(hidden=16, layers=2, latent_dim=4)
    >>> m(torch.rand(2, 8, 8, 1)).shape
    torch.Size([2, 8, 8, 1])
    """

    default_lr = 1e-4  # the authors' implicit GON setting (Adam)

    def __init__(self, channels: int = 1, latent_dim: int = 32, hidden: int = 64, layers: int = 3, w0: float = 30.0,
                 batch_size: int = 64):
        super().__init__()
        self.latent_dim, self.channels, self.batch_size = latent_dim, channels, batch_size
        self.net = Siren(in_features=2 + latent_dim, out_features=channels, hidden=hidden, layers=layers, w0=w0)

    def decode(self, z: torch.Tensor, coords: torch.Tensor) -> torch.Tensor:
        """F(coords, z): latents (B, k), coords (N, 2) -> values (B, N, C)."""
        b, n = z.shape[0], coords.shape[0]
        inp = torch.cat([coords.unsqueeze(0).expand(b, n, 2), z.unsqueeze(1).expand(b, n, z.shape[1])], dim=-1)
        return self.net(inp)

    @staticmethod
    def loss(pred: torch.Tensor, target: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """Per-datum squared error summed over pixels (those ``mask`` (B, N) keeps), mean over channels: (B,)."""
        err = ((pred - target) ** 2).mean(-1)
        return (err if mask is None else err * mask.to(err.dtype)).sum(1)

    def encode(self, values: torch.Tensor, coords: torch.Tensor, create_graph: bool = False,
               mask: torch.Tensor | None = None) -> torch.Tensor:
        """z = -grad_{z0} L(x, F(z0)) at z0 = 0 (Eq. 4) with the authors' batch mean; values (B, N, C) -> (B, k).

        The inner loss is the per-datum loss (over the pixels ``mask`` keeps, all by default) summed
        over the data and divided by ``batch_size``: the batch mean at the training batch size. Each
        datum's loss depends only on its own z0, so z_i = -grad L_i / batch_size, whatever the batch.
        ``create_graph=True`` keeps the graph for training (second order).
        """
        with torch.enable_grad():
            z0 = torch.zeros(values.shape[0], self.latent_dim, device=values.device, requires_grad=True)
            inner = self.loss(self.decode(z0, coords), values, mask).sum() / self.batch_size
            (g,) = torch.autograd.grad(inner, [z0], create_graph=create_graph)
        return -g

    def reconstruct(self, images: torch.Tensor) -> torch.Tensor:
        b, h, w, c = images.shape
        coords = coord_grid(h, w).to(images)
        z = self.encode(images.reshape(b, h * w, c), coords).detach()
        with torch.no_grad():
            return self.decode(z, coords).reshape(b, h, w, c)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.reconstruct(images)

    def training_loss(self, images: torch.Tensor) -> torch.Tensor:
        """The outer loss L(x, F(-grad L(x, F(0)))), averaged over the batch, differentiable end to end."""
        b, h, w, c = images.shape
        coords = coord_grid(h, w).to(images)
        x = images.reshape(b, h * w, c)
        z = self.encode(x, coords, create_graph=True)
        return self.loss(self.decode(z, coords), x).mean()

    def fit(self, signal_set: SignalSet, *, steps: int = 500, seed: int = 0, progress: str | None = None) -> dict:
        """Adam (``default_lr``) on the outer loss over minibatches of ``signal_set.train``.

        Returns ``run_budget``'s figures and ``losses``: the outer loss as a per-pixel MSE, per step.
        """
        x = signal_set.train
        npix = x.shape[1] * x.shape[2]  # the loss is summed over pixels, averaged over channels
        nxt = minibatches(len(x), self.batch_size, seed)
        opt = torch.optim.Adam(self.parameters(), lr=self.default_lr)
        losses: list[float] = []
        self.train()

        def step(i: int) -> float:
            loss = self.training_loss(x[nxt()])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item() / npix)
            return losses[-1]

        out = run_budget(step, steps=steps, budget_s=None, progress=progress)
        out["losses"] = losses
        self.eval()
        return out


def gon_implicit(channels: int = 1, latent_dim: int = 32, hidden: int = 64, layers: int = 3, w0: float = 30.0,
                 batch_size: int = 64) -> ImplicitGON:
    """Implicit GON; the paper's setting is ``latent_dim=32, hidden=256, layers=4`` (small CPU default here)."""
    return ImplicitGON(channels, latent_dim, hidden, layers, w0, batch_size)
