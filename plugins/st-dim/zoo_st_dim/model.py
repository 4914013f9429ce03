"""ST-DIM, Spatiotemporal Deep InfoMax (Anand, Racah, Ozair, Bengio, Côté and Hjelm 2019, arXiv:1906.08226).

An encoder is trained without labels on pairs of consecutive frames ``(x_t, x_t+1)`` by InfoNCE between time steps.
Section 3 ("Spatiotemporal Deep InfoMax"), the two objectives, with ``phi`` the encoder's global feature, ``phi_mn``
the local feature of cell (m, n) of an intermediate convolutional map, and bilinear critics ``W_g``, ``W_l``:

    global-local:  g_mn(x_t, x_t+1) = phi(x_t+1)^T W_g phi_mn(x_t)
                   L_GL = sum_mn -log [ exp g_mn(x_t, x_t+1) / sum_{x* in X_next} exp g_mn(x_t, x*) ]
    local-local:   f_mn(x_t, x_t+1) = phi_mn(x_t+1)^T W_l phi_mn(x_t)
                   L_LL = sum_mn -log [ exp f_mn(x_t, x_t+1) / sum_{x* in X_next} exp f_mn(x_t, x*) ]
    L_ST-DIM = L_GL + L_LL

where ``X_next`` is the batch's set of next frames (the positive and the other samples' x_t+1 as negatives).
Sources: the official code (``atariari/methods/stdim.py``, ``encoders.py``, ``benchmark/probe.py``) was read here;
the paper's text was not available offline, so the equations above are its Sec. 3 as known from the abstract, the
catalog and the code, not checked line by line against the PDF.

The encoder is ``ssl_probe``'s ``PongCNN``: AtariARI's no-downsample Nature CNN (four ReLU convolutions, a linear
layer without ReLU, orthogonal init with ReLU gain, zero biases), the local map being the third convolution's output,
scaled to 32x32 frames (the benchmark's encoder, shared with its RANDOM-CNN, autoencoder and supervised baselines, as
AtariARI shares one encoder across methods). The critics are ``nn.Linear`` maps (W and a bias, as in the official
``stdim.py``: ``classifier1`` global -> local depth, ``classifier2`` local -> local depth) followed by a dot product.

Paper defaults (``PAPER``, ``preset="paper"``): width 32 (channels 32, 64, 128, 64) and 256 features; Adam, lr 3e-4,
batches of 64 (the official code's settings; ``ssl_defaults``, in ssl_probe's training keys). CPU default (``CPU``):
width 16 and 32 features (see ``PongCNN``: at 32x32 a random encoder with 128 features already decodes the
positions, mean F1 0.94, so the benchmark bottlenecks harder), the same optimiser.

Deviations: 32x32 single frames of a numpy Pong-like game instead of 160x210 Atari frames (hence the scaled
encoder); the cell terms are averaged over the M x N cells (as the official code does) rather than summed (the same
optimum, a loss on the log(B) scale); the softmax runs over candidate next frames as the paper's equations write it
(the official code normalises over the other samples' local cells instead: both are InfoNCE bounds on the same
pairs); Adam's eps is torch's 1e-8 (the official 1e-5); no early stopping (a fixed step budget).

>>> m = STDIM(width=4, feature_size=8)
>>> x = torch.rand(5, 1, 32, 32)
>>> m(x).shape, m.local_features(x).shape
(torch.Size([5, 8]), torch.Size([5, 16, 8, 8]))
"""
from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from zoo_task_ssl_probe.pong import PongCNN

__all__ = ["CPU", "PAPER", "PRESETS", "STDIM", "infonce", "st_dim"]

CPU: dict[str, Any] = {"width": 16, "feature_size": 32, "in_channels": 1, "global_local": True, "local_local": True}
PAPER: dict[str, Any] = {**CPU, "width": 32, "feature_size": 256}
PRESETS = {"cpu": CPU, "paper": PAPER}


def infonce(scores: torch.Tensor) -> torch.Tensor:
    """Mean InfoNCE loss over cells of ``scores`` (C, B, B): ``scores[c, i, j]`` scores sample i's local cell c of
    x_t against sample j's x_t+1; the positive is j = i and the softmax runs over j (the candidate next frames).

    A constant critic gives exactly log(B):

    >>> import math
    >>> abs(float(infonce(torch.zeros(3, 8, 8))) - math.log(8)) < 1e-6
    True
    """
    c, b, _ = scores.shape
    target = torch.arange(b, device=scores.device).repeat(c)
    return F.cross_entropy(scores.reshape(c * b, b), target)


class STDIM(nn.Module):
    """ST-DIM: a ``PongCNN`` encoder and the two bilinear critics of Sec. 3; ``ssl_loss(x_t, x_next)`` is L_ST-DIM.

    Args:
        width: encoder width (channels width, 2w, 4w, 2w; the local map has 4w channels).
        feature_size: global feature size D (``forward``/``encode`` return (B, D)).
        in_channels: frame channels (1: single frames; a frame stack also works).
        global_local, local_local: which objectives to use (both: ST-DIM; ``local_local=False`` is the paper's
            ablation with the global-local term alone).
    """

    ssl_views = 2  # (x_t, x_t+1): consecutive frames in ssl_probe's pong mode
    ssl_input = "pong"  # ssl_probe's example input: Pong frames (4, 1, 32, 32)
    # the official optimiser (Adam, lr 3e-4, batches of 64, no decay or schedule), in ssl_probe's training keys
    ssl_defaults = {"optimizer": "adamw", "lr": 3e-4, "weight_decay": 0.0, "batch": 64, "schedule": "constant"}

    def __init__(self, width: int = CPU["width"], feature_size: int = CPU["feature_size"],
                 in_channels: int = CPU["in_channels"], global_local: bool = True, local_local: bool = True) -> None:
        super().__init__()
        if not (global_local or local_local):
            raise ValueError("STDIM: enable global_local, local_local or both (the paper uses both)")
        self.encoder = PongCNN(in_channels, width, feature_size)
        depth = self.encoder.local_depth
        self.critic_gl = nn.Linear(feature_size, depth)  # W_g (the official classifier1)
        self.critic_ll = nn.Linear(depth, depth)  # W_l (the official classifier2)
        self.global_local, self.local_local = global_local, local_local

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Global features (B, D) of frames (B, C, H, W)."""
        return self.encoder(x)

    encode = forward

    def local_features(self, x: torch.Tensor) -> torch.Tensor:
        """The local feature map (B, 4 * width, h, w) the objectives contrast (8x8 cells at 32x32)."""
        return self.encoder.local_features(x)

    def scores(self, x_t: torch.Tensor, x_next: torch.Tensor) -> dict[str, torch.Tensor]:
        """The critics' scores (cells, B, B): ``gl[c, i, j] = phi(x_next_j)^T W_g phi_c(x_t_i)`` and
        ``ll[c, i, j] = phi_c(x_next_j)^T W_l phi_c(x_t_i)`` (the bias of each ``nn.Linear`` critic included)."""
        g_next, l_next = self.encoder(x_next, with_local=True)
        l_t = self.encoder.local_features(x_t)
        cells_t = l_t.flatten(2).permute(2, 0, 1)  # (C, B, depth)
        out = {}
        if self.global_local:
            out["gl"] = torch.einsum("cid,jd->cij", cells_t, self.critic_gl(g_next))
        if self.local_local:
            cells_next = self.critic_ll(l_next.flatten(2).permute(2, 0, 1))  # (C, B, depth)
            out["ll"] = torch.einsum("cid,cjd->cij", cells_t, cells_next)
        return out

    def ssl_loss(self, x_t: torch.Tensor, x_next: torch.Tensor) -> torch.Tensor:
        """L_GL + L_LL on a batch of consecutive frames (each term averaged over the local cells); with B samples
        and a constant critic it is 2 log(B)."""
        if x_t.shape != x_next.shape or len(x_t) < 2:
            raise ValueError(f"STDIM.ssl_loss needs two batches of the same shape with B >= 2 (x_t, x_t+1), got "
                             f"{tuple(x_t.shape)} and {tuple(x_next.shape)}")
        return sum(infonce(s) for s in self.scores(x_t, x_next).values())


def st_dim(preset: str = "cpu", **overrides: Any) -> STDIM:
    """ST-DIM with ``preset`` ("cpu" or "paper": see ``PRESETS``) and keyword ``overrides``.

    >>> sum(p.numel() for p in st_dim().parameters())
    68144
    """
    if preset not in PRESETS:
        raise ValueError(f"st_dim: unknown preset {preset!r}; choose from {', '.join(PRESETS)}")
    return STDIM(**{**PRESETS[preset], **overrides})

