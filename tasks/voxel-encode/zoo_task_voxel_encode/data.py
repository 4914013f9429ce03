"""voxel_encode data: real images, a fixed random CNN's features of them, and seeded synthetic voxels over those features.

- Images: scikit-learn's ``load_digits`` (1797 digits, 8x8) and scikit-image's ``lfw_subset`` (100 faces + 100
  non-faces, 25x25), both bundled in their wheels (no network), each rescaled to ``IMAGE_SIZE`` x ``IMAGE_SIZE``
  (bilinear) and to [0, 1]: 1997 images.
- Features: a random CNN whose weights come from ``CNN_SEED`` alone (never from the task seed, so every run sees the
  same feature space): conv3x3(1->16)-GELU-avgpool2, conv3x3(16->16)-GELU-avgpool2, adaptive average pool to 2x2
  (GELU, not ReLU: a random ReLU net leaves some features constant):
  ``F = 64`` features per image, z-scored over all images.
- Voxels (``voxels``): each is a random *sparse nonlinear readout* of the features: ``k`` random features with
  N(0, 1) weights, ``softplus(gain * <w, f_S> + bias)``, z-scored over the images, plus Gaussian noise at the stated
  SNR (signal variance / noise variance). Their noise-free responses are kept for scoring.

Everything is fixed by ``seed`` (voxel draws, image split, noise); the CNN and the images never change.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F_

IMAGE_SIZE = 16
CNN_SEED = 1234
N_FEATURES = 64


@functools.lru_cache(maxsize=1)
def images() -> tuple[np.ndarray, np.ndarray]:
    """``(images (1997, 16, 16) float32 in [0, 1], source (1997,) int: 0 digit, 1 face, 2 non-face)``."""
    from skimage.data import lfw_subset
    from sklearn.datasets import load_digits

    digits = load_digits().images.astype(np.float32) / 16.0
    lfw = lfw_subset().astype(np.float32)
    lfw = (lfw - lfw.min()) / max(float(lfw.max() - lfw.min()), 1e-8)
    out = []
    for stack in (digits, lfw):
        t = torch.from_numpy(stack)[:, None]
        out.append(F_.interpolate(t, size=(IMAGE_SIZE, IMAGE_SIZE), mode="bilinear", align_corners=False)[:, 0])
    source = np.concatenate([np.zeros(len(digits)), np.ones(100), np.full(len(lfw) - 100, 2)]).astype(np.int64)
    return torch.cat(out).numpy(), source


def random_cnn() -> torch.nn.Sequential:
    """The frozen feature extractor: weights drawn from ``CNN_SEED`` with PyTorch's default initialisation."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(CNN_SEED)
        net = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.GELU(), torch.nn.AvgPool2d(2),
            torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.GELU(), torch.nn.AvgPool2d(2),
            torch.nn.AdaptiveAvgPool2d(2), torch.nn.Flatten())
    return net.requires_grad_(False).eval()


@functools.lru_cache(maxsize=1)
def features() -> torch.Tensor:
    """``(1997, 64)`` float32: the random CNN's features of :func:`images`, each feature z-scored over the images."""
    imgs, _ = images()
    with torch.no_grad():
        f = random_cnn()(torch.from_numpy(imgs)[:, None])
    return ((f - f.mean(0)) / f.std(0).clamp_min(1e-6)).contiguous()


@dataclass
class VoxelSet:
    """Responses of ``V`` voxels to ``N`` images; ``clean`` is the noise-free part, ``support`` the features used."""

    responses: torch.Tensor  # (V, N) measured: clean + noise
    clean: torch.Tensor  # (V, N) z-scored noise-free responses
    weights: torch.Tensor  # (V, F) sparse readout weights (zero off the support)
    support: torch.Tensor  # (V, k) long


def voxels(n: int, feats: torch.Tensor, *, seed: int, k: int = 4, snr: float = 1.0, gain: float = 1.0) -> VoxelSet:
    """``n`` voxels over ``feats (N, F)``: ``softplus(gain * <w, f_S> + b)`` on ``k`` random features, z-scored over
    the images, plus N(0, 1/snr) noise. ``snr=inf`` gives noise-free voxels; ``gain -> 0`` makes them linear.

    >>> v = voxels(3, features()[:50], seed=0)
    >>> tuple(v.responses.shape), int((v.weights != 0).sum(1).max())
    ((3, 50), 4)
    """
    num, dim = feats.shape
    if not 1 <= k <= dim:
        raise ValueError(f"voxels: k={k} must lie in 1..{dim} (the number of features)")
    if snr <= 0:
        raise ValueError(f"voxels: snr={snr} must be > 0 (use float('inf') for noise-free voxels)")
    g = torch.Generator().manual_seed(seed)
    support = torch.argsort(torch.rand(n, dim, generator=g), dim=1)[:, :k]
    w = torch.zeros(n, dim)
    w.scatter_(1, support, torch.randn(n, k, generator=g) / k ** 0.5)
    bias = torch.randn(n, 1, generator=g) * 0.5
    drive = feats @ w.T  # (N, V)
    clean = F_.softplus(gain * drive.T + bias) if gain > 0 else drive.T
    clean = (clean - clean.mean(1, keepdim=True)) / clean.std(1, keepdim=True).clamp_min(1e-6)
    noise = torch.randn(n, num, generator=g) / snr ** 0.5 if np.isfinite(snr) else torch.zeros(n, num)
    return VoxelSet(clean + noise, clean, w, support)


@dataclass
class Split:
    """The task's data: image features split into meta-train and held-out images, and three voxel sets."""

    train_feats: torch.Tensor  # (N_train, F): images contexts are drawn from
    test_feats: torch.Tensor  # (N_test, F): held-out query images
    train_voxels: VoxelSet  # meta-train voxels over all images (only their train-image columns are used)
    test_voxels: VoxelSet  # new voxels: context from train images, scored on test images
    n_train_images: int


def split(*, seed: int, n_train_voxels: int = 2000, n_test_voxels: int = 200, n_test_images: int = 500, k: int = 4,
          snr: float = 1.0, gain: float = 1.0) -> Split:
    """Seeded split: a random ``n_test_images`` held out; meta-train and test voxels drawn independently."""
    feats = features()
    g = torch.Generator().manual_seed(10_000 + seed)
    perm = torch.randperm(len(feats), generator=g)
    test_idx, train_idx = perm[:n_test_images], perm[n_test_images:]
    order = torch.cat([train_idx, test_idx])
    tr = voxels(n_train_voxels, feats[order], seed=2 * seed, k=k, snr=snr, gain=gain)
    te = voxels(n_test_voxels, feats[order], seed=2 * seed + 1, k=k, snr=snr, gain=gain)
    return Split(feats[train_idx], feats[test_idx], tr, te, len(train_idx))
