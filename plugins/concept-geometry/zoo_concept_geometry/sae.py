"""A small sparse autoencoder to produce a "concept universe" from a model we have offline.

The paper analyses Gemma Scope SAEs of Gemma-2-2b; no such dictionary exists offline, so the experiment trains one:
ReLU encoder ``f = relu(W_enc (x - b_dec) + b_enc)``, linear decoder ``x_hat = W_dec^T f + b_dec`` whose F rows
(the feature directions, the points of the concept universe) are renormalised to unit length after every step,
and the loss ``|x - x_hat|^2 + l1 * |f|_1`` (the standard L1 SAE; Gemma Scope uses JumpReLU, a deviation).
Inputs are scaled so that their mean squared norm is D before training.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import torch_threads

PAPER = {"n_features": 16384, "activation": "JumpReLU (Gemma Scope)"}  # what the paper's dictionaries are
CPU = {"n_features": 256, "l1": 1.0, "steps": 1000, "batch": 256, "lr": 1e-3}


class SparseAutoencoder(nn.Module):
    def __init__(self, d: int, n_features: int):
        super().__init__()
        if d < 1 or n_features < 2:
            raise ValueError(f"need d >= 1 and n_features >= 2; got d={d}, n_features={n_features}")
        self.w_enc = nn.Parameter(torch.empty(d, n_features))
        nn.init.kaiming_uniform_(self.w_enc, a=5 ** 0.5)
        self.b_enc = nn.Parameter(torch.zeros(n_features))
        self.w_dec = nn.Parameter(self.w_enc.detach().t().clone())  # tied initialisation, then free
        self.b_dec = nn.Parameter(torch.zeros(d))
        self.normalize_decoder()

    @torch.no_grad()
    def normalize_decoder(self) -> None:
        self.w_dec.div_(self.w_dec.norm(dim=1, keepdim=True).clamp_min(1e-12))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu((x - self.b_dec) @ self.w_enc + self.b_enc)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        f = self.encode(x)
        return f @ self.w_dec + self.b_dec, f


def train_sae(x: Any, *, n_features: int = CPU["n_features"], l1: float = CPU["l1"], steps: int = CPU["steps"],
              batch: int = CPU["batch"], lr: float = CPU["lr"], seed: int = 0) -> tuple[SparseAutoencoder, float]:
    """Train an SAE on the rows of ``x`` (N, D); returns it (on the scaled inputs: ``x * scale``) and ``scale``."""
    a = np.asarray(x, dtype=np.float32)
    if a.ndim != 2 or len(a) < 2:
        raise ValueError(f"train_sae needs an (N >= 2, D) array; got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError("train_sae: the activations hold NaN/inf values")
    scale = float(np.sqrt(a.shape[1] / max(float((a ** 2).sum(1).mean()), 1e-12)))
    data = torch.from_numpy(a * scale)
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    sae = SparseAutoencoder(a.shape[1], int(n_features))
    opt = torch.optim.Adam(sae.parameters(), lr=lr)
    with torch_threads(1):
        for _ in range(int(steps)):
            xb = data[torch.randint(len(data), (min(batch, len(data)),), generator=g)]
            xh, f = sae(xb)
            loss = ((xh - xb) ** 2).sum(1).mean() + l1 * f.abs().sum(1).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sae.normalize_decoder()
    return sae.eval(), scale


@torch.no_grad()
def sae_codes(sae: SparseAutoencoder, x: Any, scale: float) -> np.ndarray:
    return sae.encode(torch.as_tensor(np.asarray(x, dtype=np.float32) * scale)).numpy()


@torch.no_grad()
def fraction_variance_explained(sae: SparseAutoencoder, x: Any, scale: float) -> float:
    xs = torch.as_tensor(np.asarray(x, dtype=np.float32) * scale)
    xh, _ = sae(xs)
    return float(1 - ((xh - xs) ** 2).sum() / ((xs - xs.mean(0)) ** 2).sum())
