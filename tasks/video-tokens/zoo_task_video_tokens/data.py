"""The data of video_tokens: short "videos" of real digits moving on a canvas, and their frozen patch tokens.

A video is ``FRAMES`` frames of one scikit-learn ``load_digits`` image (8x8, grey levels / 16) pasted on a
``CANVAS`` x ``CANVAS`` black canvas at an offset that follows a seeded random walk (start uniform over the canvas,
then each frame moves by -1, 0 or +1 pixel per axis, clipped at the border). Every one of the 1797 images becomes one
video; the seed draws the walks and the train/test split (``TEST_FRACTION`` of the videos, stratified by class).

Tokens: a frozen random convolution (``DIM`` filters of ``PATCH`` x ``PATCH`` pixels, stride ``PATCH``, weights
N(0, 1), bias N(0, 0.25), then tanh) drawn once from ``EMBED_SEED`` (the same tokenizer for every run, as a frozen
ViT would be), giving tokens of shape (n, T, N, D) with N = (CANVAS / PATCH)^2 grid cells in row-major (h, w) order.

>>> v = videos(seed=0)
>>> tuple(v.frames.shape), tuple(tokens(v.frames).shape)
((1797, 8, 12, 12), (1797, 8, 36, 16))
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

FRAMES, CANVAS, DIGIT, PATCH, DIM = 8, 12, 8, 2, 16
EMBED_SEED = 0
TEST_FRACTION = 1 / 3
GRID = CANVAS // PATCH
TOKENS_PER_FRAME = GRID * GRID


@dataclass(frozen=True)
class Videos:
    """``frames`` (n, T, C, C) float in [0, 1], ``labels`` (n,) long, ``offsets`` (n, T, 2) long (row, col of the
    digit's top-left pixel), ``train`` / ``test`` index tensors of the split."""

    frames: torch.Tensor
    labels: torch.Tensor
    offsets: torch.Tensor
    train: torch.Tensor
    test: torch.Tensor


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.images.astype(np.float32) / 16.0, d.target.astype(np.int64)


def random_walks(n: int, *, seed: int, frames: int = FRAMES, canvas: int = CANVAS) -> np.ndarray:
    """(n, frames, 2) integer offsets in [0, canvas - DIGIT]: uniform start, steps in {-1, 0, 1} per axis, clipped."""
    rng = np.random.default_rng(seed)
    hi = canvas - DIGIT
    start = rng.integers(0, hi + 1, size=(n, 1, 2))
    steps = rng.integers(-1, 2, size=(n, frames - 1, 2))
    out = np.concatenate([start, steps], axis=1)
    for t in range(1, frames):  # clip as the walk goes, so a walk pushed into a border can leave it next step
        out[:, t] = np.clip(out[:, t - 1] + steps[:, t - 1], 0, hi)
    return out


@functools.lru_cache(maxsize=2)
def videos(seed: int, *, frames: int = FRAMES, canvas: int = CANVAS) -> Videos:
    """Every digit as one video of ``frames`` frames; the walks and the split follow ``seed`` (cached: callers must
    not modify the tensors)."""
    if canvas < DIGIT or canvas % PATCH:
        raise ValueError(f"video_tokens: canvas={canvas} must be >= {DIGIT} and a multiple of the patch size {PATCH}")
    images, labels = _digits()
    n = len(labels)
    offsets = random_walks(n, seed=seed, frames=frames, canvas=canvas)
    out = np.zeros((n, frames, canvas, canvas), dtype=np.float32)
    for t in range(frames):
        for i in range(n):
            r, c = offsets[i, t]
            out[i, t, r:r + DIGIT, c:c + DIGIT] = images[i]
    rng = np.random.default_rng(seed + 10_000)
    test = np.concatenate([rng.permutation(np.flatnonzero(labels == k))[: round(TEST_FRACTION * (labels == k).sum())]
                           for k in range(10)])
    is_test = np.zeros(n, dtype=bool)
    is_test[test] = True
    return Videos(torch.from_numpy(out), torch.from_numpy(labels), torch.from_numpy(offsets),
                  torch.from_numpy(np.flatnonzero(~is_test)), torch.from_numpy(np.sort(test)))


@functools.lru_cache(maxsize=1)
def _embedder() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(EMBED_SEED)
    return torch.randn(DIM, 1, PATCH, PATCH, generator=g), 0.5 * torch.randn(DIM, generator=g)


def tokens(frames: torch.Tensor) -> torch.Tensor:
    """(n, T, C, C) frames -> (n, T, N, D) tokens of the frozen random patch embedder."""
    n, t, c, _ = frames.shape
    w, b = _embedder()
    with torch.no_grad():
        z = torch.tanh(torch.nn.functional.conv2d(frames.reshape(n * t, 1, c, c), w, b, stride=PATCH))
    return z.flatten(2).transpose(1, 2).reshape(n, t, -1, DIM).contiguous()


def decode(codebook: torch.Tensor, index_map: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The token grid a compressed video stands for: ``codebook[b, index_map[b, t, n]]`` at every position, zero where
    the index is -1 (no token kept there); returns ``(tokens (B, T, N, D), kept (B, T, N) bool)``."""
    b, t, n = index_map.shape
    kept = index_map >= 0
    flat = index_map.clamp_min(0).reshape(b, t * n, 1).expand(-1, -1, codebook.shape[-1])
    grid = torch.gather(codebook, 1, flat).reshape(b, t, n, -1)
    return grid * kept[..., None].to(grid.dtype), kept


def token_counts(index_map: torch.Tensor) -> torch.Tensor:
    """(B,) number of distinct codebook entries each video's index map refers to: the tokens it costs."""
    s = index_map.reshape(index_map.shape[0], -1).sort(dim=1).values
    new = torch.ones_like(s, dtype=torch.bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    return (new & (s >= 0)).sum(dim=1)
