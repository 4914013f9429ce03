"""Fully connected nets on scikit-learn digits (the paper's setting is FC nets; its data sets could not be read), of
several widths, trained by SGD or Adam, cached, and their per-layer features on the training inputs.

``trained(width, optimizer, seed, steps)`` returns the net's weights and biases (input first) as numpy arrays, cached
as ``.npz`` with ``zoo.fileio.cached_arrays`` under zoo's cache (``riemannian_dimension/``), keyed by every setting
and ``VERSION``; ``measure(...)`` computes the Riemannian Dimension, the three bounds and the measured gap.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .dimension import norm_bound, riemannian_dimension

VERSION = 1  # the recipe below; part of the cache key
OPTIMIZERS = ("sgd", "adam")
DEPTH = 2  # hidden layers: 64 -> w -> w -> 10
BATCH = 64
LR = {"sgd": 0.1, "adam": 1e-3}  # plain SGD (no momentum, no weight decay) and Adam at its default rate
MARGIN_QUANTILE = 0.1  # the norm bound's margin: the 10% quantile of the training margins that are > 0


def _check(width: int, optimizer: str, steps: int) -> None:
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"unknown optimizer {optimizer!r}; choose from {list(OPTIMIZERS)}")
    if int(width) < 1:
        raise ValueError(f"width must be >= 1, got {width}")
    if int(steps) < 0:
        raise ValueError(f"steps must be >= 0, got {steps}")


def build(width: int, seed: int, depth: int = DEPTH) -> Any:
    """The FC net 64 -> width (x depth, ReLU) -> 10 with PyTorch's default (Kaiming-uniform) initialisation."""
    import torch
    from torch import nn

    dims = [64] + [int(width)] * depth + [10]
    layers: list[nn.Module] = [nn.Flatten()]
    with torch.random.fork_rng():
        torch.manual_seed(int(seed))
        for i in range(len(dims) - 1):
            layers.append(nn.Linear(dims[i], dims[i + 1]))
            if i < len(dims) - 2:
                layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def _train(width: int, optimizer: str, seed: int, steps: int) -> dict[str, np.ndarray]:
    import torch
    from torch import nn

    from zoo.task import torch_threads
    from zoo_task_digits.task import load_split

    with torch_threads(1):
        model = build(width, seed)
        x, y, _, _ = load_split("digits")
        g = torch.Generator().manual_seed(20_000 + int(seed))
        params = model.parameters()
        opt = torch.optim.SGD(params, lr=LR["sgd"]) if optimizer == "sgd" else torch.optim.Adam(params, lr=LR["adam"])
        model.train()
        for _ in range(int(steps)):
            idx = torch.randint(0, len(y), (BATCH,), generator=g)
            loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    linears = [m for m in model if isinstance(m, nn.Linear)]
    out = {}
    for i, lin in enumerate(linears):
        out[f"w{i}"] = lin.weight.detach().double().numpy()
        out[f"b{i}"] = lin.bias.detach().double().numpy()
    return out


def trained(width: int, optimizer: str, seed: int, steps: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """``(weights, biases)`` of the net trained ``steps`` steps (batch 64) on the digits training split (cached)."""
    _check(width, optimizer, steps)
    from zoo.fileio import cached_arrays
    from zoo.weights import cache_dir

    path = cache_dir() / "riemannian_dimension" / f"fc-w{int(width)}-{optimizer}-s{int(seed)}-t{int(steps)}-v{VERSION}.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays = cached_arrays(path, lambda: _train(width, optimizer, seed, steps))
    k = len([name for name in arrays if name.startswith("w")])
    return [arrays[f"w{i}"] for i in range(k)], [arrays[f"b{i}"] for i in range(k)]


def forward_features(weights: list[np.ndarray], biases: list[np.ndarray], x: np.ndarray) -> list[np.ndarray]:
    """Per-layer features, input first: x, the post-ReLU hidden layers, and the logits."""
    feats = [x]
    h = x
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        h = h @ w.T + b
        if i < len(weights) - 1:
            h = np.maximum(h, 0.0)
        feats.append(h)
    return feats


def _data(split: str) -> tuple[np.ndarray, np.ndarray]:
    from zoo_task_digits.task import load_split

    x, y, xt, yt = load_split("digits")
    if split == "train":
        return x.flatten(1).double().numpy(), y.numpy()
    return xt.flatten(1).double().numpy(), yt.numpy()


def margins(logits: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The multi-class margin: the true logit minus the largest other one."""
    true = logits[np.arange(len(y)), y]
    other = logits.copy()
    other[np.arange(len(y)), y] = -np.inf
    return true - other.max(axis=1)


def measure(width: int, optimizer: str, seed: int, steps: int, *, delta: float = 0.05) -> dict[str, float]:
    """Train (or load) one net and measure it on the N training inputs: the Riemannian Dimension, its bound, the size
    and norm bounds, and the measured gap (test error - train error)."""
    weights, biases = trained(width, optimizer, seed, steps)
    x, y = _data("train")
    xt, yt = _data("test")
    feats = forward_features(weights, biases, x)
    rd = riemannian_dimension(feats, delta=delta)
    m = margins(feats[-1], y)
    pos = m[m > 0]
    gamma = float(np.quantile(pos, MARGIN_QUANTILE)) if pos.size else float("nan")
    b_in = float(np.sqrt((x**2).sum(axis=1) + 1.0).max())  # bias absorbed: inputs augmented with a 1
    nb = norm_bound(weights, biases, input_norm=b_in, margin=gamma, n=len(y), delta=delta) if pos.size else math.inf
    train_err = float((feats[-1].argmax(1) != y).mean())
    test_err = float((forward_features(weights, biases, xt)[-1].argmax(1) != yt).mean())
    out = {"riem_dim": rd["dim"], "params": float(rd["params"]), "dim_over_params": rd["dim"] / rd["params"],
           "riem_bound": rd["dim_bound"], "size_bound": rd["size_bound"], "norm_bound": nb,
           "log10_size_over_riem": math.log10(rd["size_bound"] / rd["dim_bound"]),
           "log10_norm_over_riem": math.log10(nb / rd["dim_bound"]), "margin": gamma,
           "train_err": train_err, "test_err": test_err, "gap": test_err - train_err}
    for i, (r, c) in enumerate(zip(rd["ranks"], rd["compression"], strict=True)):
        out[f"rank{i}"] = r
        out[f"compression{i}"] = c
    return out


__all__ = ["OPTIMIZERS", "build", "trained", "forward_features", "margins", "measure"]
