"""D'OH's comparison in the paper: SIRENs of a given size trained directly, one per signal, at 4 bytes a parameter."""
from __future__ import annotations

import math

import torch
from torch import nn

from zoo_task_image_fit.signal_set import coord_grid

from .model import siren_shapes


class DirectSirens(nn.Module):
    """B independent SIRENs (3 sine layers of width ``hidden``), trained directly, evaluated in one batch."""

    def __init__(self, n: int, hidden: int, layers: int = 3, w0: float = 30.0):
        super().__init__()
        self.w0, self.ws, self.bs = w0, nn.ParameterList(), nn.ParameterList()
        for i, (fo, fi) in enumerate(siren_shapes(2, hidden, layers, 1)):
            wb = 1.0 / fi if i == 0 else math.sqrt(6.0 / fi) / w0
            self.ws.append(nn.Parameter(torch.empty(n, fo, fi).uniform_(-wb, wb)))
            self.bs.append(nn.Parameter(torch.empty(n, fo).uniform_(-1 / math.sqrt(fi), 1 / math.sqrt(fi))))

    def per_signal_params(self) -> int:
        return sum(w[0].numel() + b[0].numel() for w, b in zip(self.ws, self.bs, strict=True))

    def forward(self, coords: torch.Tensor) -> torch.Tensor:
        h = coords.unsqueeze(0).expand(self.ws[0].shape[0], -1, -1)
        for w, b in zip(self.ws[:-1], self.bs[:-1], strict=True):
            h = torch.sin(self.w0 * (torch.bmm(h, w.transpose(1, 2)) + b.unsqueeze(1)))
        return torch.bmm(h, self.ws[-1].transpose(1, 2)) + self.bs[-1].unsqueeze(1)


def siren_width(params: int, at_most: bool = False) -> int:
    """The width k of a 3-sine-layer SIREN on 2-D inputs (3k + 2(k^2 + k) + k + 1 parameters) for ``params``.

    The width whose count is closest to ``params``, or with ``at_most`` the widest that does not exceed
    it (at least 1): a SIREN stored in no more bytes than a budget.

    >>> siren_width(130), siren_width(130, at_most=True)
    (7, 6)
    """
    count = lambda k: 2 * k * k + 6 * k + 1  # noqa: E731
    if at_most:
        return max([k for k in range(1, 256) if count(k) <= params], default=1)
    return min(range(1, 256), key=lambda k: abs(count(k) - params))


def fit_direct_sirens(images: torch.Tensor, params: int, steps: int, lr: float = 1e-3,
                      at_most: bool = False) -> tuple[DirectSirens, torch.Tensor]:
    """One SIREN of about ``params`` parameters per image (B, H, W, 1), fitted by Adam; returns it and the fits.

    The width is ``siren_width(params, at_most)``: the closest count, or the largest within ``params``.

    >>> net, rec = fit_direct_sirens(torch.rand(2, 4, 4, 1), params=60, steps=2)
    >>> net.per_signal_params(), rec.shape
    (57, torch.Size([2, 4, 4, 1]))
    """
    b, h, w, c = images.shape
    coords, y = coord_grid(h, w), images.reshape(b, h * w, c)
    net = DirectSirens(b, siren_width(params, at_most))
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    for _ in range(steps):
        loss = ((net(coords) - y) ** 2).mean(dim=(1, 2)).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    with torch.no_grad():
        return net, net(coords).clamp(0, 1).reshape(images.shape)
