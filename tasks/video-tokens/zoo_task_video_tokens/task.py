"""video_tokens: how much of a video's token grid a compressor can drop before a downstream classifier notices.

Data (``zoo_task_video_tokens.data``): every ``load_digits`` image as an 8-frame video of the digit moving on a 12x12
canvas by a seeded random walk, tokenised by a frozen random 2x2 patch embedder into (n, T=8, N=36, D=16) tokens.

Contract: ``model.compress(tokens (B, T, N, D)) -> (codebook (B, K, D), index_map (B, T, N) long)``; the index map
says which codebook entry stands at each (t, h, w) position, -1 where no token is kept. A video costs the number of
distinct entries its index map refers to (``data.token_counts``); ``token_ratio`` is that over T*N. Every video is
compressed on its own (a batch only groups them).

Mode ``classify`` (the only one): the task decodes each compressed video back to its grid (``data.decode``:
``codebook[index_map]``, zeros and a "kept" flag of 0 where the index is -1) and trains the same small classifier on
it for every method (a per-frame two-layer 3x3 CNN over the (D + 1, 6, 6) grid, mean over space and frames, a linear
head; Adam, ``steps`` steps of ``batch`` videos, seeded), then scores the held-out third of the videos. Metrics:
``accuracy``, ``token_ratio``, ``tokens`` (mean K per video) and ``tokdense`` = accuracy / tokens (accuracy per
token, the information-density measure of VQToken). Baselines (``baselines``): ``full_tokens``, ``random_prune`` and
``kmeans`` at the model's own mean budget (rounded), ``temporal_pool`` over all 8 frames (ratio 1/8).

>>> from zoo_task_video_tokens.baselines import RandomPrune
>>> r = evaluate(RandomPrune(k=20), steps=2, n_train=64, baselines=[])
>>> round(r.metrics["token_ratio"], 4)
0.0694
"""
from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from zoo.task import Result

from . import data as D_
from .baselines import BASELINES, build_baseline  # noqa: F401 - the Task protocol's names

NAME = "video_tokens"
MODES = {"classify": "train the task's classifier on the decoded compressed grid; accuracy vs token ratio"}
DEFAULT_STEPS, BATCH, LR, WIDTH = 600, 64, 3e-3, 24
CHUNK = 512  # videos compressed per call (each video is compressed on its own)


class GridClassifier(nn.Module):
    """The task's classifier, the same for every method: a two-layer 3x3 CNN per frame over the decoded token grid
    plus a kept-flag channel, averaged over space and frames, then a linear head."""

    def __init__(self, dim: int = D_.DIM, width: int = WIDTH, classes: int = 10) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(dim + 1, width, 3, padding=1), nn.ReLU(),
                                 nn.Conv2d(width, width, 3, padding=1), nn.ReLU())
        self.head = nn.Linear(width, classes)

    def forward(self, grid: torch.Tensor) -> torch.Tensor:  # (B, T, D + 1, H, W)
        b, t = grid.shape[:2]
        h = self.net(grid.flatten(0, 1)).mean(dim=(2, 3)).reshape(b, t, -1).mean(1)
        return self.head(h)


def compress_all(model: nn.Module, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Run ``model.compress`` over ``tokens`` in chunks; returns the decoded grids (n, T, D + 1, H, W) with the
    kept flag as the last channel, and the per-video token counts (n,). Checks the contract on the way."""
    grids, counts = [], []
    n, t, npos, d = tokens.shape
    side = int(round(npos ** 0.5))
    with torch.no_grad():
        for s in range(0, n, CHUNK):
            x = tokens[s:s + CHUNK]
            out = model.compress(x)
            _check(out, x.shape)
            codebook, index_map = out
            grid, kept = D_.decode(codebook.float(), index_map)
            g = torch.cat([grid, kept[..., None].float()], dim=-1)  # (B, T, N, D + 1)
            grids.append(g.reshape(len(x), t, side, side, d + 1).permute(0, 1, 4, 2, 3).contiguous())
            counts.append(D_.token_counts(index_map))
    return torch.cat(grids), torch.cat(counts)


def _check(out: Any, shape: torch.Size) -> None:
    b, t, n, d = shape
    ok = isinstance(out, tuple) and len(out) == 2
    if ok:
        cb, im = out
        ok = (cb.ndim == 3 and cb.shape[0] == b and cb.shape[2] == d and im.shape == (b, t, n)
              and im.dtype == torch.long and int(im.min()) >= -1 and int(im.max()) < cb.shape[1])
    if not ok:
        got = tuple((tuple(o.shape), o.dtype) for o in out) if isinstance(out, tuple) else type(out).__name__
        raise TypeError(f"{NAME}: compress must return (codebook (B, K, D), index_map (B, T, N) long with entries in "
                        f"[-1, K)) for tokens {tuple(shape)}; got {got}")


def train_classifier(grids: torch.Tensor, labels: torch.Tensor, train: torch.Tensor, test: torch.Tensor, *, seed: int,
                     steps: int, batch: int = BATCH, lr: float = LR, width: int = WIDTH) -> float:
    """Train :class:`GridClassifier` on ``grids[train]`` (seeded) and return its accuracy on ``grids[test]``."""
    # standardise each channel by the training videos' statistics, so a codebook's scale (unit-norm entries, means
    # of tokens) does not decide how well the same classifier trains
    mu = grids[train].mean(dim=(0, 1, 3, 4), keepdim=True)[0]
    sd = grids[train].std(dim=(0, 1, 3, 4), keepdim=True)[0].clamp_min(1e-6)
    grids = (grids - mu) / sd
    torch.manual_seed(seed)
    clf = GridClassifier(grids.shape[2] - 1, width)
    opt = torch.optim.Adam(clf.parameters(), lr=lr)
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        idx = train[torch.randint(0, len(train), (batch,), generator=g)]
        loss = nn.functional.cross_entropy(clf(grids[idx]), labels[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    clf.eval()
    with torch.no_grad():
        pred = torch.cat([clf(grids[test[s:s + 512]]).argmax(1) for s in range(0, len(test), 512)])
    return float((pred == labels[test]).double().mean())


def _score(model: nn.Module, v: D_.Videos, tok: torch.Tensor, *, seed: int, steps: int, n_train: int | None,
           **kw: Any) -> dict[str, float]:
    torch.manual_seed(seed)  # a compressor's own randomness (pruned positions, k-means++ starts)
    grids, counts = compress_all(model, tok)
    train = v.train if n_train is None else v.train[:n_train]
    acc = train_classifier(grids, v.labels, train, v.test, seed=seed, steps=steps, **kw)
    tokens = float(counts.double().mean())
    return {"accuracy": acc, "token_ratio": tokens / (tok.shape[1] * tok.shape[2]), "tokens": tokens,
            "tokdense": acc / tokens}


def evaluate(model: nn.Module, *, mode: str = "classify", seed: int = 0, steps: int | None = None,
             n_train: int | None = None, batch: int = BATCH, lr: float = LR, width: int = WIDTH,
             baselines: Sequence[str] | None = None, out_dir: str | None = None, budget_s: float | None = None,
             progress: bool = False, rebuild: Callable[..., nn.Module] | None = None) -> Result:
    """Compress every video with ``model``, train the task's classifier on the decoded grids, score the test third.

    ``steps``: classifier steps (default 600); ``n_train``: use only the first n training videos (tests);
    ``baselines``: names from ``BASELINES`` (default all four), run on the same videos and classifier budget, with
    ``random_prune`` / ``kmeans`` at the model's mean token count. ``out_dir``, ``budget_s``, ``rebuild`` are accepted
    for the Task protocol and unused (nothing of the model is trained).
    """
    del out_dir, budget_s, progress, rebuild
    if mode not in MODES:
        raise ValueError(f"{NAME}: mode={mode!r}; choose from {tuple(MODES)}")
    if not callable(getattr(model, "compress", None)):
        raise TypeError(f"{NAME}: {type(model).__name__} has no compress(tokens) method; see the module docstring of "
                        "zoo_task_video_tokens.task (subclass zoo_task_video_tokens.baselines.Compressor)")
    names = list(BASELINES if baselines is None else baselines)
    for b in names:
        if b not in BASELINES:
            raise ValueError(f"{NAME}: unknown baseline {b!r}; choose from {BASELINES}")
    steps = DEFAULT_STEPS if steps is None else int(steps)
    t0 = time.perf_counter()
    v = D_.videos(seed)
    tok = D_.tokens(v.frames)
    kw = dict(seed=seed, steps=steps, n_train=n_train, batch=batch, lr=lr, width=width)
    metrics = _score(model, v, tok, **kw)
    k = max(1, round(metrics["tokens"]))
    args = {"random_prune": {"k": k}, "kmeans": {"k": k}, "temporal_pool": {"window": D_.FRAMES}, "full_tokens": {}}
    base = {b: _score(build_baseline(b, **args[b]), v, tok, **kw) for b in names}
    config = {"mode": mode, "seed": seed, "steps": steps, "batch": batch, "lr": lr, "width": width,
              "n_train": len(v.train) if n_train is None else n_train, "n_test": len(v.test), "baseline_args": args}
    return Result(task=NAME, metrics=metrics, baselines=base, n=len(v.test), seconds=time.perf_counter() - t0,
                  config=config)


def example_input() -> torch.Tensor:
    """Tokens of two videos of the task, (2, 8, 36, 16)."""
    v = D_.videos(0)
    return D_.tokens(v.frames[:2])


def check_output(model: nn.Module, output: Any) -> None:
    """The compress contract on :func:`example_input`."""
    try:
        _check(output, torch.Size((2, D_.FRAMES, D_.TOKENS_PER_FRAME, D_.DIM)))
    except TypeError as exc:
        raise AssertionError(str(exc)) from None


def describe(*, mode: str | None = None, **options: Any) -> dict[str, Any]:
    """The protocol's settings as :func:`evaluate` runs them with ``options``.

    >>> describe()["classify"]["tokens_per_video"]
    288
    """
    params = inspect.signature(evaluate).parameters
    known = {k: p.default for k, p in params.items() if k in ("steps", "n_train", "batch", "lr", "width")}
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)}; choose from {', '.join(known)}")
    opt = {**known, **options}
    return {m: {"frames": D_.FRAMES, "canvas": D_.CANVAS, "patch": D_.PATCH, "dim": D_.DIM,
                "tokens_per_video": D_.FRAMES * D_.TOKENS_PER_FRAME, "walk": "uniform start, +-1/0 px per axis per frame",
                "test_fraction": D_.TEST_FRACTION, "embedder": f"frozen random conv (seed {D_.EMBED_SEED}), tanh",
                "classifier": "per-frame 2x 3x3 conv, mean over space and frames, linear",
                "steps": DEFAULT_STEPS if opt["steps"] is None else opt["steps"], "batch": opt["batch"],
                "lr": opt["lr"], "width": opt["width"], "baselines": list(BASELINES),
                "baseline_budget": "random_prune and kmeans at the model's mean token count; temporal_pool over 8 frames"}
            for m in (MODES if mode is None else (mode,))}
