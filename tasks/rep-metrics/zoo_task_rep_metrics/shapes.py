"""Synthetic shape x colour x position images with planted concepts, masks and held-out combinations.

The data the compositional-representation tools need (ideal words, linear factorisation, Net2Vec concept masks):
every 3 x 16 x 16 image holds one object whose three concepts are known exactly,

- ``shape``: square, circle, triangle, cross;
- ``colour``: red, green, blue, yellow (intensity jittered 0.7-1.0);
- ``position``: the quadrant (top-left, top-right, bottom-left, bottom-right), the centre jittered by up to 0.75 pixel,

plus a size jitter (radius 2.5-3.5 pixels) and Gaussian pixel noise (std 0.05), and the object's pixel mask (the ground
truth for segmentation). ``split_pairs`` holds out (shape, colour) pairs so that every shape and every colour is still
seen in training, the usual compositional-generalisation protocol; ``train_cnn`` trains ``ShapesCNN`` (one head per
concept) on the seen pairs only, cached as safetensors like ``sources.train``.

>>> d = shapes_data(8, seed=0)
>>> d["x"].shape, d["masks"].shape, d["concepts"].shape
((8, 3, 16, 16), (8, 16, 16), (8, 3))
>>> train, test = split_pairs(n_heldout=4, seed=0)
>>> len(train), len(test), sorted({s for s, _ in train}) == [0, 1, 2, 3]
(12, 4, True)
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from .sources import _save_atomic

SHAPES = ("square", "circle", "triangle", "cross")
COLOURS = ("red", "green", "blue", "yellow")
POSITIONS = ("top_left", "top_right", "bottom_left", "bottom_right")
FACTORS = {"shape": SHAPES, "colour": COLOURS, "position": POSITIONS}
SIZE = 16
_RGB = np.array([(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0)], dtype=np.float32)
VERSION = 1  # the rendering and training recipe; part of the cache key
DEFAULT_STEPS = 600
BATCH, LR = 64, 3e-3


def _masks(shape: np.ndarray, cy: np.ndarray, cx: np.ndarray, r: np.ndarray) -> np.ndarray:
    """(N, SIZE, SIZE) boolean object masks for shape indices, centres and radii (pixel-centre coordinates)."""
    yy, xx = np.mgrid[0:SIZE, 0:SIZE].astype(np.float32)
    dy = yy[None] - cy[:, None, None]
    dx = xx[None] - cx[:, None, None]
    r = r[:, None, None]
    square = np.maximum(np.abs(dx), np.abs(dy)) <= r
    circle = dx ** 2 + dy ** 2 <= (r + 0.3) ** 2
    triangle = (dy >= -r) & (dy <= r) & (np.abs(dx) <= (dy + r) / 2 + 0.5)  # apex up
    cross = ((np.abs(dx) <= 0.6) & (np.abs(dy) <= r)) | ((np.abs(dy) <= 0.6) & (np.abs(dx) <= r))
    out = np.stack([square, circle, triangle, cross])  # (4, N, H, W)
    return out[shape, np.arange(len(shape))]


def check_pairs(pairs: Any, what: str = "pairs") -> np.ndarray:
    """(K, 2) int array of (shape, colour) index pairs, validated."""
    p = np.asarray(pairs, dtype=np.int64).reshape(-1, 2) if len(pairs) else np.zeros((0, 2), np.int64)
    if len(p) == 0:
        raise ValueError(f"{what} is empty: give at least one (shape, colour) pair")
    if p.min() < 0 or p[:, 0].max() >= len(SHAPES) or p[:, 1].max() >= len(COLOURS):
        raise ValueError(f"{what} holds an index outside shape 0..{len(SHAPES) - 1} / colour 0..{len(COLOURS) - 1}")
    return p


def shapes_data(n: int, seed: int = 0, *, pairs: Any = None, noise: float = 0.05) -> dict[str, Any]:
    """``n`` seeded images: ``x`` (n, 3, 16, 16) float32 in [0, 1] plus noise, ``masks`` (n, 16, 16) bool,
    ``concepts`` (n, 3) int64 (shape, colour, position indices; names in ``FACTORS``). ``pairs`` limits the
    (shape, colour) combinations drawn (uniformly among them); positions are always uniform."""
    if int(n) < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    rng = np.random.default_rng(int(seed))
    all_pairs = np.array([(s, c) for s in range(len(SHAPES)) for c in range(len(COLOURS))])
    p = all_pairs if pairs is None else check_pairs(pairs)
    pick = p[rng.integers(0, len(p), int(n))]
    pos = rng.integers(0, len(POSITIONS), int(n))
    cy = 4.0 + 8.0 * (pos // 2) - 0.5 + rng.uniform(-0.75, 0.75, n)
    cx = 4.0 + 8.0 * (pos % 2) - 0.5 + rng.uniform(-0.75, 0.75, n)
    r = rng.uniform(2.5, 3.5, n)
    masks = _masks(pick[:, 0], cy.astype(np.float32), cx.astype(np.float32), r.astype(np.float32))
    colour = _RGB[pick[:, 1]] * rng.uniform(0.7, 1.0, (n, 1)).astype(np.float32)
    x = masks[:, None].astype(np.float32) * colour[:, :, None, None]
    x = x + noise * rng.standard_normal(x.shape).astype(np.float32)
    concepts = np.stack([pick[:, 0], pick[:, 1], pos], axis=1).astype(np.int64)
    return {"x": x.astype(np.float32), "masks": masks, "concepts": concepts, "factors": list(FACTORS)}


def split_pairs(n_heldout: int = 4, seed: int = 0) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Seen and held-out (shape, colour) pairs. The held-out pairs are a seeded partial permutation (at most one per
    shape and per colour), so every shape and every colour still appears among the seen pairs."""
    k = len(SHAPES)
    if not 0 <= int(n_heldout) <= k:
        raise ValueError(f"n_heldout must be in 0..{k} (one held-out pair per shape at most), got {n_heldout}")
    rng = np.random.default_rng(int(seed))
    perm = rng.permutation(k)
    rows = rng.permutation(k)[: int(n_heldout)]
    test = sorted((int(s), int(perm[s])) for s in rows)
    train = [(s, c) for s in range(k) for c in range(len(COLOURS)) if (s, c) not in test]
    return train, test


class ShapesCNN(nn.Module):
    """conv3x3(16) -> conv3x3(32) -> pool -> conv3x3(32) -> pool -> fc(64) -> 12 logits (4 shape, 4 colour,
    4 position); ReLU after each; module names conv1/act1 ... fc/act4, out."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.conv1, self.act1 = nn.Conv2d(3, width, 3, padding=1), nn.ReLU()
        self.conv2, self.act2 = nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU()
        self.pool2 = nn.MaxPool2d(2)
        self.conv3, self.act3 = nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.ReLU()
        self.pool3 = nn.MaxPool2d(2)
        self.fc, self.act4 = nn.Linear(2 * width * 16, 64), nn.ReLU()
        self.out = nn.Linear(64, sum(len(v) for v in FACTORS.values()))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.pool2(self.act2(self.conv2(self.act1(self.conv1(x)))))
        h = self.pool3(self.act3(self.conv3(h))).flatten(1)
        return self.out(self.act4(self.fc(h)))


def _loss(logits: torch.Tensor, concepts: torch.Tensor) -> torch.Tensor:
    parts = logits.split([len(v) for v in FACTORS.values()], dim=1)
    return sum(nn.functional.cross_entropy(p, concepts[:, i]) for i, p in enumerate(parts))


def predict(model: nn.Module, x: Any) -> np.ndarray:
    """(N, 3) predicted concept indices."""
    xt = torch.as_tensor(np.asarray(x, dtype=np.float32))
    with torch.no_grad():
        parts = model(xt).split([len(v) for v in FACTORS.values()], dim=1)
    return torch.stack([p.argmax(1) for p in parts], 1).numpy()


def accuracy(model: nn.Module, data: dict[str, Any]) -> dict[str, float]:
    """Per-concept accuracy and ``all`` (every concept right) on ``data`` (from ``shapes_data``)."""
    pred = predict(model, data["x"])
    right = pred == data["concepts"]
    out = {name: float(right[:, i].mean()) for i, name in enumerate(FACTORS)}
    out["all"] = float(right.all(1).mean())
    return out


def _cache_path(seed: int, steps: int, n_heldout: int, split_seed: int) -> Path:
    from zoo.weights import cache_dir

    return (cache_dir() / "rep_metrics"
            / f"shapes-cnn-s{int(seed)}-t{int(steps)}-h{int(n_heldout)}-p{int(split_seed)}-v{VERSION}.safetensors")


def train_cnn(seed: int, steps: int = DEFAULT_STEPS, *, n_heldout: int = 4, split_seed: int = 0,
              pairs: Sequence[tuple[int, int]] | None = None) -> nn.Module:
    """``ShapesCNN`` trained ``steps`` AdamW steps (batch 64, fresh images every step) on the seen pairs of
    ``split_pairs(n_heldout, split_seed)`` (or on ``pairs``); ``seed`` fixes the initialisation and the images.
    Cached by seed, steps and split (``pairs`` given explicitly is not cached)."""
    if int(steps) < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")
    with torch.random.fork_rng():
        torch.manual_seed(int(seed))
        model = ShapesCNN()
    if int(steps) == 0:
        return model.eval()
    path = None if pairs is not None else _cache_path(seed, steps, n_heldout, split_seed)
    if path is not None and path.is_file():
        from safetensors.torch import load_file

        try:
            model.load_state_dict(load_file(str(path)))
            return model.eval()
        except Exception:  # noqa: BLE001 - a corrupt or stale cache entry is retrained and rewritten
            pass
    seen = check_pairs(pairs) if pairs is not None else np.array(split_pairs(n_heldout, split_seed)[0])
    data = shapes_data(int(steps) * BATCH, seed=50_000 + int(seed), pairs=seen)
    x, c = torch.from_numpy(data["x"]), torch.from_numpy(data["concepts"])
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-4)
    model.train()
    for i in range(int(steps)):
        sl = slice(i * BATCH, (i + 1) * BATCH)
        loss = _loss(model(x[sl]), c[sl])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    model.eval()
    if path is not None:
        _save_atomic(model.state_dict(), path)
    return model
